"""How a serving row's TTFT miss grows with load, per deployment: a diagnostic on the committed table, nothing
fitted into a prediction (issue 37; docs/accuracy.md, "Session 71 G").

    python benchmarks/ttft_load_slope.py [--query Q] [--min-clients 16] [--max-clients 64] [--rows]

Three readings of benchmarks/data/serving_reference.csv (scored rows; one row per measurement: copies of a
measurement under other model names, e.g. DeepSeek-R1 / -V3, are kept once):
1. slope: per deployment (model, release, TP / EP / attention DP, precision, ISL / OSL) with >= 3 client counts in
   [min, max], least squares TTFT = a + b N for the measured and the predicted TTFT (ms, ms a client); the medians of
   b_pred / b_meas and a_pred / a_meas, and the share of the gap at the top N that the slope miss accounts for.
   Keep [min, max] inside one --scheduler-recv-interval (SGLang's InferenceX launches: 10 below 16 clients, 30 from
   16) or the fit mixes the interval's step into the slope.
2. pairs: the same deployment and N at 1k/1k and 1k/8k tokens. The two send the server the same prompts at a
   request rate ~7x apart (a closed loop: N / (TTFT + (OSL - 1) TPOT)), so a gap that follows the prefill arrival
   rate (a queue of prompts, the prefill step's price, admission) differs between them, and one that follows N
   (the running batch, the decode step) does not. Printed: the gap (ms) and the gap in measured decode steps
   (gap / measured TPOT) of each, by client band.
3. steps: the gap in measured decode steps by prompt length and client band.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

TABLE = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
DEPLOYMENT = ["engine", "system", "model", "version", "tp", "ep", "attention_dp", "gemm_quant", "moe_quant", "isl",
              "osl"]
# a measurement's identity across the table's model-name copies (the DeepSeek-R1 / -V3 rows of one run)
MEASUREMENT = ["engine", "system", "version", "tp", "ep", "attention_dp", "gemm_quant", "isl", "osl", "concurrency",
               "measured_ttft_ms"]
BANDS = [0, 8, 32, 128, 512]


def measurements(table: pd.DataFrame, query: str) -> pd.DataFrame:
    """The scored rows the query selects, one per measurement, with the gap (measured - predicted TTFT, ms)."""
    rows = table[table.scored == 1].query(query).copy()
    rows[DEPLOYMENT] = rows[DEPLOYMENT].fillna("-")
    rows = rows.drop_duplicates(MEASUREMENT)
    rows["gap"] = rows.measured_ttft_ms - rows.predicted_ttft_ms
    rows["gap_steps"] = rows.gap / rows.measured_tpot_ms
    return rows


def line(n: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line y = a + b n."""
    b, a = np.polyfit(np.asarray(n, float), np.asarray(y, float), 1)
    return float(a), float(b)


def slopes(rows: pd.DataFrame, lo: int, hi: int) -> pd.DataFrame:
    """One line per deployment with >= 3 client counts in [lo, hi]: measured and predicted intercept and slope,
    their ratios, and the share of the gap at the deployment's top N that the slope miss makes."""
    out = []
    inside = rows[(rows.concurrency >= lo) & (rows.concurrency <= hi)]
    for key, d in inside.groupby(DEPLOYMENT):
        if d.concurrency.nunique() < 3:
            continue
        a_m, b_m = line(d.concurrency, d.measured_ttft_ms)
        a_p, b_p = line(d.concurrency, d.predicted_ttft_ms)
        top = float(d.concurrency.max())
        gap_top = (a_m + b_m * top) - (a_p + b_p * top)
        out.append({**dict(zip(DEPLOYMENT, key)), "clients": f"{int(d.concurrency.min())}-{int(top)}",
                    "a_meas": a_m, "a_pred": a_p, "b_meas": b_m, "b_pred": b_p,
                    "slope_x": b_p / b_m if b_m else np.nan, "intercept_x": a_p / a_m if a_m else np.nan,
                    "slope_share": top * (b_m - b_p) / gap_top if gap_top else np.nan})
    return pd.DataFrame(out)


def pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """1k/1k beside 1k/8k at the same deployment and N: each one's gap (ms, decode steps) and request rate (1/s,
    the closed loop's N / cycle with outputs of mean 0.9 OSL, the clients' [0.8 L, L] lengths)."""
    one = rows[rows.isl == 1024].copy()
    one["rate"] = one.concurrency / ((one.measured_ttft_ms + (0.9 * one.osl - 1) * one.measured_tpot_ms) / 1000)
    key = [c for c in DEPLOYMENT if c not in ("model", "isl", "osl")] + ["concurrency"]
    short = one[one.osl == 1024].drop_duplicates(key).set_index(key)
    long = one[one.osl == 8192].drop_duplicates(key).set_index(key)
    both = pd.merge(short, long, left_index=True, right_index=True, suffixes=("_1k1k", "_1k8k"))
    return both.reset_index()


def by_band(frame: pd.DataFrame, cols: dict) -> pd.DataFrame:
    """Medians of `cols` (name -> column) by client band, with the count."""
    band = pd.cut(frame.concurrency, BANDS)
    agg = {"n": (next(iter(cols.values())), "size"), **{k: (v, "median") for k, v in cols.items()}}
    return frame.groupby(band, observed=True).agg(**agg)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default="engine=='sglang' and mode=='agg' and system=='b200_sxm'",
                    help="pandas query on the committed table")
    ap.add_argument("--min-clients", type=int, default=16)
    ap.add_argument("--max-clients", type=int, default=64)
    ap.add_argument("--rows", action="store_true", help="print every deployment's line")
    ap.add_argument("--table", type=Path, default=TABLE)
    args = ap.parse_args(argv)
    if args.min_clients < 1 or args.max_clients <= args.min_clients:
        ap.error("--min-clients must be >= 1 and below --max-clients")
    rows = measurements(pd.read_csv(args.table), args.query)
    if rows.empty:
        print(f"no scored rows match --query {args.query!r}")
        return 1
    pd.set_option("display.width", 250)
    fits = slopes(rows, args.min_clients, args.max_clients)
    print(f"1. slope, N {args.min_clients}-{args.max_clients}: {len(fits)} deployments")
    if not fits.empty:
        if args.rows:
            print(fits.drop(columns=["engine", "system"]).round(2).to_string(index=False))
        print(f"   median predicted / measured slope x{fits.slope_x.median():.3f}, intercept x"
              f"{fits.intercept_x.median():.3f}; median slope measured {fits.b_meas.median():.2f}, predicted "
              f"{fits.b_pred.median():.2f} ms a client; share of the top-N gap from the slope "
              f"{fits.slope_share.median():.2f}")
        print(fits.groupby("isl").agg(n=("slope_x", "size"), slope_x=("slope_x", "median"),
                                      intercept_x=("intercept_x", "median"),
                                      slope_share=("slope_share", "median")).round(2).to_string())
    both = pairs(rows)
    print(f"\n2. pairs, 1k/1k beside 1k/8k at the same deployment and N: {len(both)}")
    if not both.empty:
        print(by_band(both, {"gap_1k1k": "gap_1k1k", "gap_1k8k": "gap_1k8k", "rate_1k1k": "rate_1k1k",
                             "rate_1k8k": "rate_1k8k", "steps_1k1k": "gap_steps_1k1k",
                             "steps_1k8k": "gap_steps_1k8k"}).round(2).to_string())
    print("\n3. gap in measured decode steps (gap / measured TPOT), by ISL")
    for isl, d in rows.groupby("isl"):
        print(f"ISL {isl}")
        print(by_band(d, {"gap_ms": "gap", "tpot_ms": "measured_tpot_ms", "steps": "gap_steps"}).round(1).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
