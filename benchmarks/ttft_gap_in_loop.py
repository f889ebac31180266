"""Is the light-load TTFT miss time inside the engine's step loop? A test on the committed table: the same
deployment measured at OSL 1k and 8k, the decode streams' TPOT miss set beside what the TTFT miss would add to them
if it were spent in the engine's prompt step; a diagnostic, nothing fitted into a prediction (issue 37;
docs/accuracy.md, "Session 73 A").

    python benchmarks/ttft_gap_in_loop.py [--query Q] [--rows]

In a closed loop of N clients a request decodes while each of the other N - 1 clients sends about one new prompt.
If a prompt's step takes `gap` ms longer than whatif prices (an engine-loop cost: a slower prefill, a host-bound
launch queue), every decode stream running beside it waits that long too, so its TPOT rises by about
(N - 1) x gap / (OSL - 1) (in_loop_tpot). A cost outside the loop (the client, HTTP, tokenization in another
process, a one-time stall of the first wave, when nothing is decoding yet) leaves TPOT as it is. The decode
kernels' own misses are common to both output lengths of one deployment, so the difference between the 1k and 8k
rows (same engine, release, precision, layout, ISL 1024 and N) isolates the prompt steps' share:
observed = TPOT miss at OSL 1k - TPOT miss at OSL 8k; expected = in_loop_tpot(1k) - in_loop_tpot(8k).
Observed ~ expected: the TTFT miss is loop time; observed ~ 0: it is not. Not removed: a decode miss that depends
on context length (the 8k rows decode at ~5k tokens of context, the 1k rows at ~1.5k).
Copies of one measurement under two model names (DeepSeek-R1 / -V3) count once.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TABLE = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
DEPLOYMENT = ["engine", "version", "system", "gemm_quant", "moe_quant", "tp", "ep", "attention_dp", "isl",
              "concurrency"]
MEASUREMENT = ["engine", "system", "isl", "osl", "concurrency", "measured_ttft_ms", "measured_tpot_ms"]
BIG_MOE = "DeepSeek|Qwen3.5|GLM-5"            # the models whose light-load miss is ~100 ms (docs/accuracy.md)
CONTROL = "Llama-3.1-70B|gpt-oss"              # the same campaign's models that miss 3-30 ms
DEFAULT_QUERY = "system=='b200_sxm' and mode=='agg' and isl==1024 and 2<=concurrency<=16"


def in_loop_tpot(gap_ms: float, clients: float, osl: float) -> float:
    """TPOT (ms) a decode stream gains if each of the other clients' prompt steps runs gap_ms longer."""
    return max(clients - 1, 0) * gap_ms / max(osl - 1, 1)


def family(model: str) -> str:
    """bigMoE / control / other, by the model name."""
    import re
    if re.search(BIG_MOE, model):
        return "bigMoE"
    return "control" if re.search(CONTROL, model) else "other"


def osl_pairs(table: pd.DataFrame, query: str = DEFAULT_QUERY) -> pd.DataFrame:
    """One line per deployment measured at OSL 1024 and 8192 (same DEPLOYMENT columns): each OSL's TTFT miss (ms),
    TPOT miss (ms) and in-loop expectation, and observed / expected as the module docstring defines them."""
    rows = table[table.scored == 1].query(query).drop_duplicates(MEASUREMENT).copy()
    rows[DEPLOYMENT] = rows[DEPLOYMENT].fillna("-")
    rows["gap"] = rows.measured_ttft_ms - rows.predicted_ttft_ms
    rows["tpot_miss"] = rows.measured_tpot_ms - rows.predicted_tpot_ms
    rows["in_loop"] = [in_loop_tpot(g, n, o) for g, n, o in zip(rows.gap, rows.concurrency, rows.osl)]
    rows["family"] = rows.model.map(family)
    keep = DEPLOYMENT + ["model", "family", "gap", "tpot_miss", "in_loop", "measured_tpot_ms"]
    short = rows[rows.osl == 1024][keep].drop_duplicates(DEPLOYMENT)
    long = rows[rows.osl == 8192][DEPLOYMENT + ["gap", "tpot_miss", "in_loop"]].drop_duplicates(DEPLOYMENT)
    pairs = short.merge(long, on=DEPLOYMENT, suffixes=("_1k", "_8k"))
    pairs["observed"] = pairs.tpot_miss_1k - pairs.tpot_miss_8k
    pairs["expected"] = pairs.in_loop_1k - pairs.in_loop_8k
    return pairs


def by_family(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per family: pairs, median TTFT miss at 1k (ms), median / summed observed and expected (ms), the share of
    pairs with observed > 0, and summed observed / summed expected."""
    def one(g: pd.DataFrame) -> pd.Series:
        return pd.Series({"pairs": len(g), "gap_1k_ms": g.gap_1k.median(), "observed_ms": g.observed.median(),
                          "expected_ms": g.expected.median(), "observed_positive": (g.observed > 0).mean(),
                          "observed_over_expected": g.observed.sum() / g.expected.sum() if g.expected.sum() else
                          np.nan})
    return pairs.groupby("family").apply(one, include_groups=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY, help="pandas query on the committed table")
    ap.add_argument("--csv", type=Path, default=TABLE, help="the scored table (default: the committed one)")
    ap.add_argument("--rows", action="store_true", help="print every pair")
    args = ap.parse_args(argv)
    try:
        pairs = osl_pairs(pd.read_csv(args.csv), args.query)
    except Exception as exc:   # noqa: BLE001 - a bad --query or --csv: one line, no traceback
        print(f"error: --query / --csv: {exc}", file=sys.stderr)
        return 2
    if pairs.empty:
        print("no deployment of the query was measured at both OSL 1024 and 8192")
        return 1
    pd.set_option("display.width", 200)
    print(f"{len(pairs)} deployments at OSL 1024 and 8192 ({args.query}); ms; observed = TPOT miss 1k - 8k, "
          "expected = the TTFT miss as loop time")
    print(by_family(pairs).round(3).to_string())
    cols = ["model", "engine", "concurrency", "gap_1k", "observed", "expected"]
    print(pairs.groupby(["family", "concurrency"])[["gap_1k", "observed", "expected"]].median().round(3).to_string())
    if args.rows:
        print(pairs.sort_values(["family", "model", "concurrency"])[cols + ["version", "tp", "ep"]].round(3)
              .to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
