"""A deployment's TTFT miss split into a part that grows with the prompt and a part that does not: a diagnostic.

    python benchmarks/ttft_isl_slope.py [--query "engine=='sglang' and system=='b200_sxm'"] [--csv PATH]

For each deployment (model, engine, release, GEMM format, TP, EP, attention DP) and client count that the committed
table (benchmarks/data/serving_reference.csv, scored rows, 1,024-token outputs) measured at both 1,024- and 8,192-token
prompts, prints the measured and predicted TTFT rise from the short prompt to the long one (ms, medians over the
table's copies of a measurement), their ratio (the "slope ratio": 1 = whatif prices the 7,168 extra prompt tokens
as measured, above 1 = each prompt token costs more than priced) and the 1k rows' excess (measured - predicted ms:
the part that does not grow with the prompt). A miss carried by a per-step or per-request cost leaves the slope
ratio at ~1; one carried by the prefill pass (or the steps that batch several prompts) lifts it.
Nothing here feeds a prediction (docs/accuracy.md, "Session 74 F").
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

CSV = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "serving_reference.csv"
LAYOUT = ("model", "engine", "version", "gemm_quant", "tp", "ep", "attention_dp")
SHORT, LONG, OUT = 1024, 8192, 1024   # the prompt lengths compared and the output length both rows share


def slope_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per deployment x client count measured at both prompt lengths: the layout keys, concurrency,
    d_measured_ms and d_predicted_ms (the 1k -> 8k TTFT rise), slope_ratio (their ratio) and excess_short_ms."""
    rows = frame[(frame.osl == OUT) & frame.isl.isin((SHORT, LONG))]
    rows = rows.dropna(subset=["measured_ttft_ms", "predicted_ttft_ms"])
    keys = [*LAYOUT, "concurrency"]
    med = rows.groupby([*keys, "isl"], dropna=False)[["measured_ttft_ms", "predicted_ttft_ms"]].median()
    wide = med.unstack("isl")
    both = wide.reindex(columns=pd.MultiIndex.from_product([wide.columns.levels[0], (SHORT, LONG)])).dropna()
    if both.empty:
        return pd.DataFrame(columns=[*keys, "d_measured_ms", "d_predicted_ms", "slope_ratio", "excess_short_ms"])
    out = pd.DataFrame({
        "d_measured_ms": both[("measured_ttft_ms", LONG)] - both[("measured_ttft_ms", SHORT)],
        "d_predicted_ms": both[("predicted_ttft_ms", LONG)] - both[("predicted_ttft_ms", SHORT)],
        "excess_short_ms": both[("measured_ttft_ms", SHORT)] - both[("predicted_ttft_ms", SHORT)],
    })
    out["slope_ratio"] = out.d_measured_ms / out.d_predicted_ms
    return out.reset_index()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--query", default="system=='b200_sxm' and mode=='agg'", help="pandas query on the table")
    ap.add_argument("--csv", default=str(CSV), help="the serving table (default: the committed one)")
    args = ap.parse_args(argv)
    try:
        frame = pd.read_csv(args.csv)
    except OSError as exc:
        print(f"--csv: cannot read {args.csv} ({exc.strerror}); give the serving table's path", file=sys.stderr)
        return 2
    frame = frame[frame.get("scored", frame.expressible) == 1]
    try:
        frame = frame.query(args.query)
    except Exception as exc:   # pandas raises many kinds for a bad expression
        print(f"--query: not a pandas query on the table's columns ({exc})", file=sys.stderr)
        return 2
    table = slope_table(frame)
    if table.empty:
        print("no deployment measured at both 1,024- and 8,192-token prompts (1,024-token outputs) in the query")
        return 0
    table["model"] = table.model.str.split("/").str[-1]
    cols = [*LAYOUT, "concurrency", "d_measured_ms", "d_predicted_ms", "slope_ratio", "excess_short_ms"]
    with pd.option_context("display.width", 200, "display.max_rows", 1000):
        print(table[cols].round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
