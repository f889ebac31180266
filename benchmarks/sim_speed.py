"""How fast the serving simulator runs: simulated requests per wall-second on one core.

    python benchmarks/sim_speed.py [--requests 10000]

Target (issue 6): 10,000 ShareGPT-like requests on one replica with continuous batching in a few
seconds, at least ten times Vidur's ~300 requests per wall-second (after its model-fitting step).
Each case runs in a fresh cost cache (its roofline calls are counted in the time), once.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.config import ClusterConfig, EngineConfig, SimConfig
from whatif.simulator.workload import WorkloadSpec

VIDUR_REQ_PER_S = 300.0
TARGET_REQ_PER_S = 10 * VIDUR_REQ_PER_S


def cases(n: int) -> dict[str, SimConfig]:
    sharegpt = WorkloadSpec(lengths="sharegpt", requests=n, seed=1)
    base = SimConfig(Scenario(), replace(sharegpt, rate=20.0))
    return {
        "llama-3-8b h100, ShareGPT 20 req/s, chunked prefill": base,
        "same at 60 req/s (past capacity: queueing)": replace(base, workload=replace(sharegpt, rate=60.0)),
        "same, prefill-priority (no chunking)": replace(base, engine=EngineConfig(chunked_prefill=False)),
        "llama-3-70b dgx-h100 tp4, 8 req/s": SimConfig(Scenario(model="llama-3-70b", hardware="dgx-h100",
                                                                parallel=Parallelism(tp=4)),
                                                       replace(sharegpt, rate=8.0)),
        "disaggregated 1P+1D llama-3-8b dgx-h100, 20 req/s": SimConfig(
            Scenario(hardware="dgx-h100"), replace(sharegpt, rate=20.0), cluster=ClusterConfig(prefill_replicas=1)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10000)
    args = ap.parse_args()
    print(f"{'case':<52} {'wall s':>7} {'req/s':>7} {'iters':>7} {'roofline calls':>14}  p50 TTFT   p50 TPOT")
    worst = float("inf")
    for name, cfg in cases(args.requests).items():
        cluster._TIMES.clear()
        start = time.perf_counter()
        result = cluster.simulate(cfg)
        wall = time.perf_counter() - start
        lat = result.latency()
        rate = args.requests / wall
        worst = min(worst, rate)
        print(f"{name:<52} {wall:7.2f} {rate:7.0f} {len(result.log):7d} "
              f"{result.lookup_stats['iteration_time_roofline_calls']:14d}  "
              f"{lat['ttft_s']['p50'] * 1e3:6.1f} ms {lat['tpot_s']['p50'] * 1e3:6.1f} ms")
    print(f"slowest case: {worst:.0f} simulated requests per wall-second; target {TARGET_REQ_PER_S:.0f} "
          f"({'met' if worst >= TARGET_REQ_PER_S else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
