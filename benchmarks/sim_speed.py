"""How fast the serving simulator runs, side by side with another checkout of it (today's code).

    git archive HEAD | tar -x -C /tmp/sim_base        # a copy of the code to compare against
    python benchmarks/sim_speed.py --baseline /tmp/sim_base [--requests 10000] [--process-requests 50000]

Each case runs in a fresh Python process per checkout (alternating, so load on a shared machine falls
on both alike) and reports the process's CPU seconds inside `simulate`, its peak memory (max RSS) and
the outputs a change must keep (finished requests, iterations, p50 TTFT, p50 TPOT, p99 ITL, throughput);
then both run a whole `whatif simulate` process on --process-requests requests and its wall time is
taken. Machines here are shared and noisy: compare the ratios, not the absolute times.

Targets (issue 23): ten times less CPU in process for 10,000 ShareGPT-like requests on llama-3-8b / H100
with chunked prefill; a whole `whatif simulate` of 50,000 requests at least five times faster.
Without --baseline only this checkout runs; `--requests 0 --process-requests 1000000` times a million-request
process alone and reports its peak memory.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Each case: Python building a SimConfig `cfg` from n (the number of requests); only names both
# checkouts have are used, so the same text runs against either.
CASES = {
    "llama-3-8b h100, ShareGPT 20 req/s, chunked prefill":
        "SimConfig(Scenario(), WorkloadSpec(lengths='sharegpt', requests=n, seed=1, rate=20.0))",
    "same at 60 req/s (past capacity: queueing)":
        "SimConfig(Scenario(), WorkloadSpec(lengths='sharegpt', requests=n, seed=1, rate=60.0))",
    "same, prefill-priority (no chunking)":
        "SimConfig(Scenario(), WorkloadSpec(lengths='sharegpt', requests=n, seed=1, rate=20.0), "
        "SchedulerConfig(chunked_prefill=False))",
    "llama-3-70b dgx-h100 tp4, 8 req/s":
        "SimConfig(Scenario(model='llama-3-70b', hardware='dgx-h100', parallel=Parallelism(tp=4)), "
        "WorkloadSpec(lengths='sharegpt', requests=n, seed=1, rate=8.0))",
    "disaggregated 1P+1D llama-3-8b dgx-h100, 20 req/s":
        "SimConfig(Scenario(hardware='dgx-h100'), WorkloadSpec(lengths='sharegpt', requests=n, seed=1, rate=20.0), "
        "cluster=ClusterConfig(prefill_replicas=1))",
    "small KV (preemption), 60 req/s":
        "SimConfig(Scenario(memory_utilization=0.25), WorkloadSpec(lengths='sharegpt', requests=n, seed=1, "
        "rate=60.0))",
}

WORKER = """
import json, resource, sys, time
from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.workload import WorkloadSpec
n = int(sys.argv[1])
cfg = eval(sys.argv[2])
start, wall = time.process_time(), time.perf_counter()
result = cluster.simulate(cfg)
cpu, wall = time.process_time() - start, time.perf_counter() - wall
s = result.summary()
lat, thr = s["latency"], s["throughput"]
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "finished": s["requests"]["finished"], "iterations": s["iterations"],
                  "roofline_calls": s["lookup_stats"]["iteration_time_roofline_calls"],
                  "ttft_p50_ms": lat["ttft_s"]["p50"] * 1e3, "tpot_p50_ms": lat["tpot_s"]["p50"] * 1e3,
                  "itl_p99_ms": lat["itl_s"]["p99"] * 1e3, "out_tok_s": thr["output_tok_s"]}))
"""


def run_case(tree: Path, n: int, expr: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", WORKER, str(n), expr], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_process(tree: Path, n: int) -> tuple[float, float]:
    """Wall seconds and peak MB of a whole `whatif simulate` process (start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    code = ("import resource, sys; from whatif.cli import main; rc = main(sys.argv[1:]); "
            "print('peak_mb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    args = ["simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--lengths", "sharegpt",
            "--requests", str(n), "--rate", "20", "--seed", "1"]
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=tree, capture_output=True, text=True,
                         check=True)
    wall = time.perf_counter() - start
    return wall, float(out.stdout.strip().splitlines()[-1].split()[-1])


def outputs(r: dict) -> str:
    return (f"{r['finished']} done, {r['iterations']} iters, TTFT {r['ttft_p50_ms']:.2f} ms, "
            f"TPOT {r['tpot_p50_ms']:.3f} ms, ITL p99 {r['itl_p99_ms']:.2f} ms, {r['out_tok_s']:.0f} tok/s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=10000, help="requests of each in-process case (0: skip them)")
    ap.add_argument("--process-requests", type=int, default=50000, help="requests of the whole-process run (0: skip)")
    ap.add_argument("--baseline", type=Path, help="another checkout to compare against (e.g. today's code)")
    ap.add_argument("--cases", default="", help="comma-separated case numbers to run (default: all)")
    args = ap.parse_args()
    trees = [("after", ROOT)] + ([("before", args.baseline.resolve())] if args.baseline else [])
    chosen = [int(c) for c in args.cases.split(",") if c] or range(len(CASES) if args.requests else 0)
    for i, (name, expr) in enumerate(CASES.items()):
        if i not in chosen:
            continue
        results = {label: run_case(tree, args.requests, expr) for label, tree in reversed(trees)}
        print(f"{name} ({args.requests} requests)")
        for label, r in results.items():
            print(f"  {label:6s} CPU {r['cpu_s']:6.2f} s, peak {r['peak_mb']:5.0f} MB, "
                  f"{r['roofline_calls']:6d} pass pricings; {outputs(r)}")
        if len(results) == 2:
            print(f"  CPU before/after: {results['before']['cpu_s'] / results['after']['cpu_s']:.1f}x")
    if args.process_requests:
        walls = {label: run_process(tree, args.process_requests) for label, tree in reversed(trees)}
        print(f"whole `whatif simulate` process, {args.process_requests} ShareGPT requests at 20 req/s")
        for label, (wall, peak) in walls.items():
            print(f"  {label:6s} wall {wall:6.2f} s, peak {peak:5.0f} MB")
        if len(walls) == 2:
            print(f"  wall before/after: {walls['before'][0] / walls['after'][0]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
