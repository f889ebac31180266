"""How fast the serving simulator runs, side by side with another commit of it.

    python benchmarks/sim_speed.py --baseline 787b43e [--runs 3] [--process-requests 50000] [--requests 10000]

First the issue's command, `whatif simulate --model llama-3-8b --hardware h100-sxm --rate 20 --requests N`
(--process-requests, default 50,000), as a whole process against this checkout and the baseline in turn
(benchmarks/side_by_side.py: a commit checked out into a temporary git worktree, or a folder): median CPU
(user + sys) and wall of --runs runs each, peak memory (max RSS), and baseline / this. Then, with --requests,
each in-process case in a fresh process per checkout (alternating): CPU inside `simulate`, peak memory and the
outputs a change must keep (finished requests, iterations, p50 TTFT, p50 TPOT, p99 ITL, throughput).
Machines here are shared and noisy: compare the ratios, not the absolute times.

Targets (issue 42): the whole 50,000-request process at least 5x 787b43e's CPU (10x the goal); 1,000,000
requests in under a minute with memory flat in generated tokens: `--requests 0 --process-requests 1000000`
times a million-request process alone (no --baseline) and reports its peak memory. --instructions also counts the
whole process's instructions once per checkout under valgrind (cachegrind, no cache simulation): on a shared VM the
CPU-second ratio moves with the neighbours' load, the instruction ratio does not (session 61).

This checkout runs pure Python (WHATIF_ACCEL=0), whatever is built. --accel adds a third column to the
whole-process runs, this checkout with the optional compiled hot path (whatif/accel; build it first with
`python3 -m whatif.accel build`), taking turns with the other two: `compiled`, its ratio to the baseline and to
the pure tree.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402 (benchmarks/side_by_side.py)

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
from whatif.simulator.config import ClusterConfig, SimConfig
try:
    from whatif.simulator.config import SchedulerConfig
except ImportError:   # before the scheduler vocabulary (787b43e): the same fields as EngineConfig
    from whatif.simulator.config import EngineConfig as SchedulerConfig
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
                  "roofline_calls": s.get("lookup_stats", {}).get("iteration_time_roofline_calls", -1),
                  "ttft_p50_ms": lat["ttft_s"]["p50"] * 1e3, "tpot_p50_ms": lat["tpot_s"]["p50"] * 1e3,
                  "itl_p99_ms": lat["itl_s"]["p99"] * 1e3, "out_tok_s": thr["output_tok_s"]}))
"""


def run_case(tree: Path, n: int, expr: str) -> dict:
    env = {**side_by_side.child_env(tree), "WHATIF_ACCEL": "0"}   # (the pure tree, whatever is built)
    out = subprocess.run([sys.executable, "-c", WORKER, str(n), expr], env=env, cwd=tree, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# The `whatif` script's own call, main() of the process's command line (both checkouts' main reads sys.argv[1:]), as
# a user's `whatif simulate` runs it: main(argv) is a caller's run from Python, without a whole process's settings
# (cli._starting and _exiting; until session 58 this timed main(sys.argv[1:])). Then the peak memory.
PROCESS = ("import resource, sys; from whatif.cli import main; sys.argv[0] = 'whatif'; rc = main(); "
           "print('peak_mb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")


PURE = "import os; os.environ['WHATIF_ACCEL'] = '0'; "   # (read when whatif.simulator is imported)
COMPILED = ("import os; os.environ.pop('WHATIF_ACCEL', None); import whatif.simulator.decode_run as d; "
            "assert d.__file__.endswith('.so'), 'not compiled: ' + d.__file__; ")


def process_argv(n: int, prefix: str = "") -> list[str]:
    """The issue's command (default lengths), in a process that runs it as the `whatif` script does and prints its
    peak memory last; `prefix` (PURE, COMPILED) runs first."""
    return ["-c", prefix + PROCESS, "simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--rate", "20",
            "--requests", str(n)]


def peak_mb(out: str) -> float:
    return float(out.strip().splitlines()[-1].split()[-1])


def instructions(tree: Path, argv: list[str]) -> int:
    """Instructions the process `argv` runs in `tree` (valgrind cachegrind's I refs; bytecode caches in place)."""
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, *argv], env=side_by_side.child_env(tree), cwd=tree, capture_output=True,
                         text=True, check=True)
    return instruction_refs(out.stderr)


def instruction_refs(stderr: str) -> int:
    """cachegrind's summary line `==PID== I   refs:      2,655,494,227` as a number."""
    refs = [line for line in stderr.splitlines() if line.split("==")[-1].split(":")[0].split() == ["I", "refs"]]
    if not refs:
        raise RuntimeError("valgrind printed no 'I refs' line: " + stderr.strip()[-200:])
    return int(refs[-1].split()[-1].replace(",", ""))


def outputs(r: dict) -> str:
    return (f"{r['finished']} done, {r['iterations']} iters, TTFT {r['ttft_p50_ms']:.2f} ms, "
            f"TPOT {r['tpot_p50_ms']:.3f} ms, ITL p99 {r['itl_p99_ms']:.2f} ms, {r['out_tok_s']:.0f} tok/s")


def alternate(runs: dict[str, tuple[Path, list[str]]], n: int, warmup: bool = True) -> dict:
    """side_by_side.alternate with an argv of each label's own (the pure and compiled runs share a tree)."""
    results = {label: side_by_side.Timings() for label in runs}
    if warmup:
        for tree, argv in runs.values():
            side_by_side.run_once(tree, argv)
    order = list(runs)
    for i in range(n):
        for label in (order if i % 2 == 0 else order[::-1]):
            cpu, wall, out = side_by_side.run_once(*runs[label])
            results[label].cpu.append(cpu)
            results[label].wall.append(wall)
            results[label].out = out
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=0, help="requests of each in-process case (0: skip them)")
    ap.add_argument("--process-requests", type=int, default=50000, help="requests of the whole-process run (0: skip)")
    ap.add_argument("--runs", type=int, default=3, help="whole-process runs per checkout (the median is shown)")
    ap.add_argument("--baseline", help="a commit (or a checkout folder) to compare against, e.g. 787b43e")
    ap.add_argument("--cases", default="", help="comma-separated case numbers to run (default: all)")
    ap.add_argument("--accel", action="store_true",
                    help="also run this checkout compiled (python3 -m whatif.accel build first)")
    ap.add_argument("--instructions", action="store_true",
                    help="also count the whole process's instructions per checkout (needs valgrind)")
    args = ap.parse_args()
    if args.accel:
        sys.path.insert(0, str(ROOT))
        from whatif.accel import finder, modules
        if finder.find_build(modules.PACKAGE_ROOT, modules.cache_dir())[0] is None:
            raise SystemExit("--accel: " + finder.find_build(modules.PACKAGE_ROOT, modules.cache_dir())[1])
    with side_by_side.baseline_tree(args.baseline) as base:
        trees = side_by_side.trees_of(base)
        if args.process_requests:
            command = ("whatif simulate --model llama-3-8b --hardware h100-sxm --rate 20 "
                       f"--requests {args.process_requests}")
            runs = {label: (tree, process_argv(args.process_requests, PURE if label == "this" else ""))
                    for label, tree in trees.items()}
            if args.accel:
                runs["compiled"] = (ROOT, process_argv(args.process_requests, COMPILED))
            results = alternate(runs, args.runs, warmup=args.runs > 1)
            print(f"whole process, median of {args.runs} runs each" + (f", vs {args.baseline}" if base else "")
                  + " (ratio: baseline / this; this: pure Python)")
            rows = [side_by_side.ratio_row(command, results)]
            if args.accel:
                compiled = {"this": results["compiled"], **({"baseline": results["baseline"]} if base else {})}
                rows.append(side_by_side.ratio_row("  the same, compiled (whatif.accel)", compiled))
            print(side_by_side.table(rows))
            if args.accel:
                print(f"  compiled / pure: CPU {results['this'].median('cpu') / results['compiled'].median('cpu'):.2f}x"
                      f" faster, wall {results['this'].median('wall') / results['compiled'].median('wall'):.2f}x")
            for label, r in results.items():
                print(f"  {label}: peak memory {peak_mb(r.out):.0f} MB")
            if args.instructions:
                counts = {label: instructions(tree, argv) for label, (tree, argv) in runs.items()}
                print("  instructions: " + ", ".join(f"{label} {n / 1e9:.2f} G" for label, n in counts.items())
                      + (f"; baseline / this {counts['baseline'] / counts['this']:.2f}x" if base else ""))
        chosen = [int(c) for c in args.cases.split(",") if c] or range(len(CASES) if args.requests else 0)
        pairs = [("after", ROOT)] + ([("before", base)] if base else [])
        for i, (name, expr) in enumerate(CASES.items()):
            if i not in chosen:
                continue
            results = {label: run_case(tree, args.requests, expr) for label, tree in reversed(pairs)}
            print(f"{name} ({args.requests} requests)")
            for label, r in results.items():
                print(f"  {label:6s} CPU {r['cpu_s']:6.2f} s, peak {r['peak_mb']:5.0f} MB, "
                      f"{r['roofline_calls']:6d} pass pricings; {outputs(r)}")
            if len(results) == 2:
                print(f"  CPU before/after: {results['before']['cpu_s'] / results['after']['cpu_s']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
