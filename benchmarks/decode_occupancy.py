"""A disaggregated row's decode occupancy by Little's law, and whatif's decode step at it (diagnostic only).

    python benchmarks/decode_occupancy.py [--filter TEXT]

In a closed loop of N clients each cycle is TTFT + (OSL - 1) x TPOT, and a client holds a decode slot for the
second part, so the decode pool holds N x decode / cycle sequences on average (Little's law); per decode worker
that is a share of the worker's slots (the mapping's max batch). The script prints it from the measured and the
predicted TTFT/TPOT (the committed table) and prices one decode step of the row at each occupancy
(step_ops.decode_step, mid-run context ISL + OSL/2), so a TPOT miss splits into the step's own price at the
measured batch (step@meas / measured TPOT) and the batch the simulation ran (a prefill priced fast lets more of
the N clients decode at once). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_signatures import decoding  # noqa: E402

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"


def decoding_per_worker(clients: int, ttft_ms: float, tpot_ms: float, osl: int, workers: int) -> float:
    """Mean sequences decoding on one decode worker: the closed loop's decoding requests (Little's law,
    serving_signatures.decoding) over the workers."""
    return decoding(clients, ttft_ms, tpot_ms, osl) / max(workers, 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", default="_disagg_", help="rows whose id contains this text (default: _disagg_)")
    args = ap.parse_args(argv)
    import serving_reference as sr
    from step_ops import decode_step, mid_run_context
    rows = {r["id"]: r for r in sr.load()}
    with open(TABLE, newline="") as f:
        scored = [t for t in csv.DictReader(f)
                  if args.filter in t["id"] and t["mode"] == "disagg" and t["predicted_tpot_ms"] not in ("", "nan")]
    print(f"{'row':58} {'slots':>5} {'occ meas':>8} {'occ pred':>8} {'TPOT':>6} {'pred':>6} {'step@meas':>9} "
          f"{'/TPOT':>5} {'step@pred':>9}")
    for t in sorted(scored, key=lambda t: t["id"]):
        row = rows[t["id"]]
        n, osl = sr.concurrency(row), int(row["osl"])
        workers = int(float(row.get("decode_num_workers") or 1))
        slots = sr.disagg_max_batch(row, n)
        occ = {k: decoding_per_worker(n, float(t[f"{k}_ttft_ms"]), float(t[f"{k}_tpot_ms"]), osl, workers)
               for k in ("measured", "predicted")}
        context = mid_run_context(row)
        step = {k: decode_step(row, max(1, round(min(v, slots))), context).time_s * 1e3 for k, v in occ.items()}
        tpot = float(t["measured_tpot_ms"])
        print(f"{t['id'][:58]:58} {slots:5d} {occ['measured']:8.1f} {occ['predicted']:8.1f} {tpot:6.2f} "
              f"{float(t['predicted_tpot_ms']):6.2f} {step['measured']:9.2f} {step['measured'] / tpot:5.2f} "
              f"{step['predicted']:9.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
