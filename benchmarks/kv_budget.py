"""An aggregated row's KV pool as whatif plans it against the pool its measured queue implies (diagnostic only).

    python benchmarks/kv_budget.py [--filter TEXT]

whatif's pool is the row's mapped scenario's memory plan (roofline/memory.py plan_memory, the engine's accounting:
the KV bytes beside weights, activations and reserved bytes, over its KV bytes per token). The measured side is the
closed loop's requests in service by Little's law (serving_signatures.in_service), each holding on average its
prompt and half its output (ISL + OSL / 2 tokens): where the pool is what limits the deployment, that is about
the pool it ran, so a row whose whatif pool holds all N sequences at full length while the measured queue keeps
far fewer in service names a KV budget (or an admission) that whatif has wrong. Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from serving_signatures import in_service  # noqa: E402

TABLE = ROOT / "benchmarks" / "data" / "serving_reference.csv"


def held_tokens(sequences: float, isl: int, osl: int) -> float:
    """KV tokens `sequences` requests in service hold on average: each its prompt and half its output."""
    return sequences * (isl + osl / 2)


def pool_tokens(plan) -> float:
    """Tokens of KV a memory plan's pool holds (its free bytes for KV over the bytes of one token)."""
    return plan.free_for_kv / plan.kv_bytes_per_token


def row_plan(source_row: dict):
    """The memory plan of a silicon row's mapped scenario at its concurrency (whatif.api.estimate's)."""
    import serving_reference as sr
    from whatif.api import estimate
    kw = sr.simulate_kwargs(source_row)
    for key in ("traffic", "engine", "cluster"):
        kw.pop(key, None)
    return estimate(batch=sr.concurrency(source_row), **kw).memory


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--filter", required=True, help="rows whose id contains this text")
    args = ap.parse_args(argv)
    import serving_reference as sr
    source = {r["id"]: r for r in sr.load()}
    with TABLE.open() as f:
        rows = [r for r in csv.DictReader(f) if args.filter in r["id"] and r["mode"] == "agg"
                and r["scored"] == "1"]
    if not rows:
        print(f"--filter: no scored aggregated row's id contains {args.filter!r}", file=sys.stderr)
        return 2
    print(f"{'id':<58} {'N':>4} {'pool tok':>9} {'N x full':>9} {'meas svc':>8} {'meas tok':>9} "
          f"{'pred svc':>8} {'TTFT x':>7}")
    for r in rows:
        isl, osl, n = int(float(r["isl"])), int(float(r["osl"])), int(float(r["concurrency"]))
        served = in_service(r)
        pool = pool_tokens(row_plan(source[r["id"]]))
        ratio = float(r["predicted_ttft_ms"]) / float(r["measured_ttft_ms"])
        print(f"{r['id'][-58:]:<58} {n:>4} {pool:>9.0f} {n * (isl + osl):>9} {served:>8.1f} "
              f"{held_tokens(served, isl, osl):>9.0f} {in_service(r, 'predicted'):>8.1f} {ratio:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
