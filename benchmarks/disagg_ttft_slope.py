"""A disaggregated deployment's TTFT against its client count, measured and predicted, as a line (diagnostic).

    python benchmarks/disagg_ttft_slope.py [--table CSV] [--max-clients N] [--min-points 2]

In a closed loop below saturation a disaggregated TTFT is one prefill pass plus the hand-off (the intercept) and a
queue at the prefill pool that grows with the clients (the slope: the more prompts arrive during a pass, the longer
the next one and the wait for it). So fitting TTFT = a + b x N to one deployment's rows (one launch, one ISL: the
row id less its `_c<N>`) says whether a miss is a per-request latency whatif under-prices (a_meas > a_pred, the
slopes alike) or a prefill pool priced too fast (b_meas > b_pred). `excess` splits measured - predicted at the
group's largest N into the intercept's part (a_meas - a_pred) and the slope's ((b_meas - b_pred) x N). Rows past
saturation bend the line (there TTFT = N / X - decode time): --max-clients keeps the light part. Reads the committed
table (benchmarks/data/serving_reference.csv, scored disaggregated rows); nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"


def group_key(row_id: str) -> str:
    """One deployment and ISL: the row id with its concurrency (`_c<N>`) removed."""
    return re.sub(r"_c\d+(?=_|$)", "", row_id)


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (intercept, slope) of ys on xs; at least two distinct xs."""
    if len(set(xs)) < 2:
        raise ValueError("fit_line: needs two distinct client counts")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def groups(rows: list[dict], max_clients: float = float("inf"), min_points: int = 2) -> dict[str, list[tuple]]:
    """Per group_key, (N, measured ms, predicted ms) sorted by N: the median over a row's copies, rows at <=
    max_clients, groups with >= min_points client counts."""
    by: dict[str, dict[float, list[tuple[float, float]]]] = {}
    for r in rows:
        n = float(r["concurrency"])
        if n <= max_clients:
            by.setdefault(group_key(r["id"]), {}).setdefault(n, []).append(
                (float(r["measured_ttft_ms"]), float(r["predicted_ttft_ms"])))
    out = {}
    for key, per_n in by.items():
        if len(per_n) >= min_points:
            out[key] = [(n, statistics.median(m for m, _ in v), statistics.median(p for _, p in v))
                        for n, v in sorted(per_n.items())]
    return out


def slope_terms(points: list[tuple]) -> dict:
    """A group's measured and predicted lines and the split of its miss at the largest N."""
    ns = [p[0] for p in points]
    a_m, b_m = fit_line(ns, [p[1] for p in points])
    a_p, b_p = fit_line(ns, [p[2] for p in points])
    n_max = max(ns)
    return dict(ns=ns, a_meas=a_m, b_meas=b_m, a_pred=a_p, b_pred=b_p,
                excess_intercept=a_m - a_p, excess_slope=(b_m - b_p) * n_max)


def scored_disagg(table: Path) -> list[dict]:
    with open(table, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("mode") == "disagg" and r.get("scored") == "1"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", type=Path, default=TABLE, help="serving_reference.csv-format table (default committed)")
    ap.add_argument("--max-clients", type=float, default=float("inf"), help="fit only rows at <= this many clients")
    ap.add_argument("--min-points", type=int, default=2, help="client counts a group needs (default 2)")
    args = ap.parse_args(argv)
    if not args.table.exists():
        print(f"--table: no file {args.table}", file=sys.stderr)
        return 2
    if args.min_points < 2:
        print("--min-points: at least 2 (a line needs two client counts)", file=sys.stderr)
        return 2
    found = groups(scored_disagg(args.table), args.max_clients, args.min_points)
    print(f"{'deployment (id less _c<N>)':58s} {'N':>14s} {'a meas':>7s} {'a pred':>7s} {'b meas':>7s} "
          f"{'b pred':>7s} {'b x':>5s} {'excess: a':>9s} {'b':>7s}   (a ms, b ms a client)")
    for key, pts in sorted(found.items()):
        t = slope_terms(pts)
        ns = f"{int(t['ns'][0])}-{int(t['ns'][-1])} ({len(pts)})"
        bx = t["b_meas"] / t["b_pred"] if t["b_pred"] else float("nan")
        print(f"{key[-58:]:58s} {ns:>14s} {t['a_meas']:7.0f} {t['a_pred']:7.0f} {t['b_meas']:7.2f} {t['b_pred']:7.2f} "
              f"{bx:5.2f} {t['excess_intercept']:9.0f} {t['excess_slope']:7.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
