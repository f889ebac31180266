"""A closed loop's TTFT is the residual of its cycle, row by row (issue 37, session 67 J): a diagnostic, nothing
fitted and nothing fed to a prediction.

N clients in a closed loop each spend a cycle C = TTFT + D, D = (OSL - 1) x TPOT, so the request rate is X = N / C
and TTFT = N / X - D (Little's law; serving_reference.served_concurrency gives N x D / C in service). Where TTFT is a
small share s = TTFT / C of the cycle, it is the difference of two large numbers: a prediction whose rate is off by
a few percent, or whose TPOT is, misses the TTFT by a multiple (s = 0.2, rate +12%, TPOT +9%: TTFT x0.1). Per row,
on the committed columns (benchmarks/data/serving_reference.csv):
- share: measured TTFT / measured cycle;
- rate_ratio: predicted / measured request rate (measured cycle / predicted cycle);
- in_service / predicted_in_service: N x D / C, measured and predicted (the clients decoding at a time; the rest
  wait before their first token).
The table groups the rows off by more than 3x on TTFT by engine, release, GPU, mode, model and load (N < 64 or not).

    python benchmarks/ttft_residual.py [--csv benchmarks/data/serving_reference.csv] [--factor 3]
"""
from __future__ import annotations

import argparse
import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parent / "data" / "serving_reference.csv"
HEAVY = 64  # clients from which a group counts as heavy load (the 1.0.0rc3 runs' 64 and 128)


def cycle_ms(ttft_ms: float, tpot_ms: float, osl: int) -> float:
    """One client's cycle (ms): its TTFT and the decode of its other OSL - 1 tokens."""
    return ttft_ms + (osl - 1) * tpot_ms


def residual_parts(row: dict) -> dict[str, float]:
    """share, rate_ratio, in_service, predicted_in_service of one scored row (module docstring)."""
    osl, n = int(float(row["osl"])), float(row["concurrency"])
    mt, mp = float(row["measured_ttft_ms"]), float(row["measured_tpot_ms"])
    pt, pp = float(row["predicted_ttft_ms"]), float(row["predicted_tpot_ms"])
    measured, predicted = cycle_ms(mt, mp, osl), cycle_ms(pt, pp, osl)
    return {"share": mt / measured, "rate_ratio": measured / predicted,
            "in_service": n * (osl - 1) * mp / measured, "predicted_in_service": n * (osl - 1) * pp / predicted}


def scored(path: Path = TABLE) -> list[dict]:
    """Rows of the committed table with a measured and a predicted TTFT and TPOT."""
    keys = ("measured_ttft_ms", "measured_tpot_ms", "predicted_ttft_ms", "predicted_tpot_ms")
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if all(r.get(k) for k in keys)]


def off_by(row: dict, factor: float = 3.0) -> bool:
    """Whether the predicted TTFT is more than `factor` times off the measured (either way)."""
    return abs(math.log(float(row["predicted_ttft_ms"]) / float(row["measured_ttft_ms"]))) > math.log(factor)


def group_key(row: dict) -> tuple:
    load = "N>=64" if float(row["concurrency"]) >= HEAVY else "N<64"
    return (row["engine"], row["version"], row["system"], row["mode"], row["model"].split("/")[-1], load)


def _median(pairs: list[tuple[dict, dict]], value) -> float:
    return statistics.median(value(r, p) for r, p in pairs)


def summary(rows: list[dict], factor: float = 3.0) -> list[dict]:
    """Per group of the rows off by `factor`: rows, medians of measured/predicted TTFT, share, rate and TPOT ratios,
    in service measured and predicted."""
    groups = defaultdict(list)
    for r in rows:
        if off_by(r, factor):
            groups[group_key(r)].append(r)
    out = []
    for key, members in sorted(groups.items()):
        pairs = [(r, residual_parts(r)) for r in members]
        out.append({"group": " ".join(key), "rows": len(members),
                    "clients": "/".join(str(int(float(c))) for c in sorted({float(r["concurrency"]) for r in members})),
                    "ttft_x": _median(pairs, lambda r, p: float(r["measured_ttft_ms"]) / float(r["predicted_ttft_ms"])),
                    "share": _median(pairs, lambda r, p: p["share"]),
                    "rate_ratio": _median(pairs, lambda r, p: p["rate_ratio"]),
                    "tpot_ratio": _median(pairs, lambda r, p: float(r["predicted_tpot_ms"])
                                          / float(r["measured_tpot_ms"])),
                    "in_service": _median(pairs, lambda r, p: p["in_service"]),
                    "predicted_in_service": _median(pairs, lambda r, p: p["predicted_in_service"])})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", type=Path, default=TABLE)
    ap.add_argument("--factor", type=float, default=3.0)
    args = ap.parse_args()
    rows = scored(args.csv)
    table = summary(rows, args.factor)
    print(f"{'group':<75} rows clients  meas/pred TTFT  share  rate p/m  TPOT p/m  in service m / p")
    for g in table:
        print(f"{g['group']:<75} {g['rows']:>4} {g['clients']:<8} x{g['ttft_x']:>5.2f}  {g['share']:>12.2f}"
              f"  {g['rate_ratio']:>8.2f}  {g['tpot_ratio']:>8.2f}  {g['in_service']:>7.1f}"
              f" / {g['predicted_in_service']:.1f}")
    off = [r for r in rows if off_by(r, args.factor)]
    small = [r for r in off if residual_parts(r)["share"] < 0.3]
    print(f"{len(off)} rows off by {args.factor:g}x; {len(small)} of them have TTFT < 30% of the measured cycle")


if __name__ == "__main__":
    main()
