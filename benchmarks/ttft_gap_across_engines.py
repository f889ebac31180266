"""The TTFT miss of one deployment under two engines: the same GPU, checkpoint, layout, precision, lengths and client
count measured on two engines, side by side; a diagnostic on the committed table, nothing fitted into a prediction
(issue 37; docs/accuracy.md, "Session 71 Q").

    python benchmarks/ttft_gap_across_engines.py [--engines sglang trtllm] [--query Q] [--free ep ...] [--rows]

A miss that a scheduler of one engine makes (a hold, a poll, a prefill turn) shows in that engine's gap and not in
the other's; a miss both engines share at the same client count (the model's prefill on that GPU, the client, the
front end both servers have) is not that engine's. Printed by ISL and client band (medians over matched cells):
each engine's gap (measured - predicted TTFT, ms) and the gap in its measured decode steps (gap / measured TPOT),
and the engines' measured and predicted TTFT difference (does whatif get the engine difference right?).
Copies of one measurement under other model names (DeepSeek-R1 / -V3) are kept once.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

TABLE = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
CELL = ["system", "model", "tp", "ep", "attention_dp", "gemm_quant", "moe_quant", "isl", "osl", "concurrency"]
BANDS = [0, 8, 32, 128, 512]


def engine_cells(table: pd.DataFrame, engine: str, query: str, cell: list[str] = CELL) -> pd.DataFrame:
    """One line per cell the engine measured (median over its releases' and layouts' rows): TTFT measured /
    predicted (ms), measured TPOT (ms), the gap (ms) and the gap in measured decode steps."""
    rows = table[(table.scored == 1) & (table.engine == engine)].query(query).copy()
    rows[cell] = rows[cell].fillna("-")
    cells = rows.groupby(cell, as_index=False)[["measured_ttft_ms", "predicted_ttft_ms", "measured_tpot_ms"]].median()
    cells["gap"] = cells.measured_ttft_ms - cells.predicted_ttft_ms
    cells["gap_steps"] = cells.gap / cells.measured_tpot_ms
    return cells


def matched(table: pd.DataFrame, a: str, b: str, query: str, free: tuple[str, ...] = ()) -> pd.DataFrame:
    """Cells both engines measured, columns suffixed _a / _b; `free` names CELL columns left out of the match
    (e.g. ep: the engines' recipes split the experts differently); a measurement pair copied under another model
    name is kept once."""
    cell = [c for c in CELL if c not in free]
    pairs = engine_cells(table, a, query, cell).merge(engine_cells(table, b, query, cell), on=cell,
                                                      suffixes=("_a", "_b"))
    once = [c for c in cell if c != "model"] + ["measured_ttft_ms_a", "measured_ttft_ms_b"]
    pairs = pairs.drop_duplicates(once)
    pairs["band"] = pd.cut(pairs.concurrency, BANDS, labels=[f"{lo + 1}-{hi}" for lo, hi in zip(BANDS, BANDS[1:])])
    return pairs


def by_band(pairs: pd.DataFrame) -> pd.DataFrame:
    """Medians by ISL and client band: gaps (ms, steps) of each engine and the a - b TTFT difference measured and
    predicted (ms)."""
    pairs = pairs.assign(diff_meas=pairs.measured_ttft_ms_a - pairs.measured_ttft_ms_b,
                         diff_pred=pairs.predicted_ttft_ms_a - pairs.predicted_ttft_ms_b)
    cols = ["gap_a", "gap_b", "gap_steps_a", "gap_steps_b", "measured_tpot_ms_a", "measured_tpot_ms_b", "diff_meas",
            "diff_pred"]
    out = pairs.groupby(["isl", "band"], observed=True)[cols].median()
    out.insert(0, "cells", pairs.groupby(["isl", "band"], observed=True).size())
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--engines", nargs=2, default=["sglang", "trtllm"], metavar=("A", "B"))
    p.add_argument("--query", default="mode=='agg'", help="pandas query on the committed table (default agg rows)")
    p.add_argument("--free", nargs="*", default=[], choices=["ep", "attention_dp", "moe_quant"],
                   help="layout columns left out of the match (default: match all)")
    p.add_argument("--rows", action="store_true", help="also print every matched cell")
    args = p.parse_args(argv)
    table = pd.read_csv(TABLE)
    try:
        pairs = matched(table, *args.engines, args.query, tuple(args.free))
    except Exception as e:  # a bad query is the user's input: one line, not a traceback
        print(f"error: --query {args.query!r} does not run on {TABLE.name}: {e}", file=sys.stderr)
        return 2
    if pairs.empty:
        print(f"no cell measured on both {args.engines[0]} and {args.engines[1]} under {args.query!r}")
        return 0
    a, b = args.engines
    models = ", ".join(sorted(pairs.model.unique()))
    print(f"a = {a}, b = {b}; {len(pairs)} matched cells (free: {args.free or 'none'}); models: {models}")
    print("gap = measured - predicted TTFT (ms); gap_steps = gap / measured TPOT; diff = TTFT a - b (ms)")
    print(by_band(pairs).round(1).to_string())
    if args.rows:
        ttfts = ["measured_ttft_ms_a", "predicted_ttft_ms_a", "measured_ttft_ms_b", "predicted_ttft_ms_b"]
        shown = [c for c in CELL if c not in args.free] + ttfts + ["gap_a", "gap_b"]
        print(pairs[shown].round(1).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
