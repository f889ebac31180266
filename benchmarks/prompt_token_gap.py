"""The closed loop's missing time per request, per 1,024 prompt tokens, from the committed serving table alone.

    python benchmarks/prompt_token_gap.py [--query "pandas query"] [--min-clients N]

A closed loop of N clients each spends the cycle C = TTFT + (OSL - 1) x TPOT per request, so the server spends C / N
per request (Little's law). gap = (C_measured - C_predicted) / N / ISL x 1,024: milliseconds per request that the
deployment spent and whatif did not, per 1,024 prompt tokens. A gap flat in N and OSL and proportional to ISL and
1 / TP is prompt work (the prefill in its mixed steps) priced short; one that grows with OSL is decode work.
Arithmetic on the committed columns; nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ttft_residual import cycle_ms   # noqa: E402

DEFAULT_QUERY = "engine=='trtllm' and version=='1.0.0rc3' and model.str.contains('Qwen3-32B')"


def with_gap(table):
    """The table with `gap_ms_per_ktok` (see the module docstring)."""
    t = table.copy()
    cm = cycle_ms(t.measured_ttft_ms, t.measured_tpot_ms, t.osl)
    cp = cycle_ms(t.predicted_ttft_ms, t.predicted_tpot_ms, t.osl)
    t["gap_ms_per_ktok"] = (cm - cp) / t.concurrency / t.isl * 1024
    return t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY, help="a pandas query on benchmarks/data/serving_reference.csv")
    ap.add_argument("--min-clients", type=int, default=32, help="rows at this concurrency or more (default 32)")
    args = ap.parse_args(argv)
    import pandas as pd
    table = pd.read_csv(ROOT / "benchmarks/data/serving_reference.csv")
    try:
        rows = table[(table.scored == 1) & (table.concurrency >= args.min_clients)].query(args.query)
    except Exception as exc:   # noqa: BLE001 - a bad query is the user's input
        print(f"--query: {exc}", file=sys.stderr)
        return 2
    if rows.empty:
        print("--query: no scored row matches", file=sys.stderr)
        return 2
    t = with_gap(rows)
    pd.set_option("display.width", 200)
    print("ms per request per 1,024 prompt tokens (measured - predicted cycle / N), by TP and ISL x N, OSL:")
    print(t.pivot_table(index=["tp", "isl"], columns=["concurrency", "osl"], values="gap_ms_per_ktok").round(1)
          .to_string())
    print("median by TP:", t.groupby("tp").gap_ms_per_ktok.median().round(1).to_dict())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
