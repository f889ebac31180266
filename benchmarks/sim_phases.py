"""Where the issue-42 command's process goes, phase by phase: CPU seconds (and, with --instructions, instructions).

    python benchmarks/sim_phases.py [--requests 50000] [--runs 3] [--instructions] [--loop-functions N]

The command is `whatif simulate --model llama-3-8b --hardware h100-sxm --rate 20 --requests N` (issue 42), run as
cmd_simulate runs it in a whole process (the CLI's collector thresholds and one BLAS thread, cli._starting),
split into phases: interpreter start, the CLI's import and its parser, numpy, the simulator's imports, the
scenario and its specs (sim_config, check_fits), workload generation, the per-request records, the cluster's
setup (step pricers, fit tables, the imports they make), the event loop (the run and its result), the summary
(percentiles, windows) and the text. CPU: process_time between phases, the minimum over --runs fresh processes
(a shared machine's noise only adds). Instructions: valgrind cachegrind of the same process stopped after each
phase in turn (os._exit), differences of the counts; a phase's instructions do not move with the neighbours'
load, its CPU seconds do (session 61). Session 67 G wrote it to size what is outside the event loop.
--loop-functions N (session 68 A): the event loop's instructions by the C function that ran them (the interpreter's
eval loop, the allocator, tuple and dict work, struct, numpy), the top N: cachegrind's per-function counts of the
process stopped after the cluster's setup and after the loop, differences.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402 (benchmarks/side_by_side.py)
from sim_speed import instruction_refs  # noqa: E402 (benchmarks/sim_speed.py)

PHASES = ("cli import and parser", "numpy import", "simulator imports", "scenario and specs", "workload generation",
          "records", "cluster setup", "event loop", "summary", "text")

# argv: requests, the phase to stop after (-1: none). Prints {phase: CPU seconds} when it runs to the end.
WORKER = """
import os, sys, time
n, stop_after = sys.argv[1], int(sys.argv[2])
start = time.process_time()
marks = []
def mark(k):
    marks.append(time.process_time())
    if k == stop_after:
        os._exit(0)
from whatif import cli
cli._starting()
from whatif.cli import build_parser
args = build_parser("simulate").parse_args(["simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm",
                                            "--rate", "20", "--requests", n])
mark(0)
import numpy
mark(1)
from whatif.cli.scenario_flags import scenario_from_args
from whatif.cli.sim_flags import simulation_values
from whatif.simulator import cluster
from whatif.simulator.collections_paused import collections_paused
from whatif.simulator.config import sim_config
from whatif.simulator.metrics import SimulationResult
from whatif.simulator.request import Record
from whatif.simulator.workload import generate
mark(2)
cfg = sim_config(scenario_from_args(args), simulation_values(args))
cluster.check_fits(cfg)
mark(3)
class Timed(cluster.Cluster):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        mark(6)
cluster.Cluster = Timed
with collections_paused() as paused:
    requests = generate(cfg.workload)
    mark(4)
    records = list(map(Record, requests))
    mark(5)
    result = cluster._run(cfg, records, requests, paused, None)
    mark(7)
result.summary()
mark(8)
text = result.text()
mark(9)
import json
print(json.dumps({"start": start, "marks": marks}))
"""


def worker(n: int, stop_after: int = -1) -> list[str]:
    return ["-c", WORKER, str(n), str(stop_after)]


def _pure_env() -> dict:
    # the worker swaps cluster.Cluster for a timed subclass, which a compiled cluster (whatif.accel) would never call
    return {**side_by_side.child_env(ROOT), "WHATIF_ACCEL": "0"}


def cpu_split(n: int, runs: int) -> dict[str, float]:
    """Each phase's CPU seconds (interpreter start: the process's first process_time), the minimum over runs."""
    best: dict[str, float] = {}
    for _ in range(runs):
        out = subprocess.run([sys.executable, *worker(n)], env=_pure_env(), cwd=ROOT,
                             capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        times = [got["start"], *got["marks"]]
        phases = {"interpreter start": got["start"]}
        phases.update({name: b - a for name, a, b in zip(PHASES, times, times[1:])})
        best = {k: min(v, best.get(k, v)) for k, v in phases.items()}
    return best


def instruction_split(n: int) -> dict[str, int]:
    """Each phase's instructions: cachegrind of the process stopped after each phase, differences."""
    counts = [instruction_count(["-c", "import os; os._exit(0)"])]   # (the interpreter start, os-exited as the rest)
    for k in range(len(PHASES)):
        counts.append(instruction_count(worker(n, k)))
    return {"interpreter start": counts[0],
            **{name: b - a for name, a, b in zip(PHASES, counts, counts[1:])}}


def instruction_count(argv: list[str]) -> int:
    out = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                          sys.executable, *argv], env=_pure_env(), cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return instruction_refs(out.stderr)


def function_counts(cachegrind_out: str) -> dict[str, int]:
    """Instructions by function from a cachegrind out file's text (`fn=` lines, then `line count` lines under them)."""
    counts: dict[str, int] = {}
    fn = None
    for line in cachegrind_out.splitlines():
        if line.startswith("fn="):
            fn = line[3:]
        elif fn is not None and line[:1].isdigit():
            parts = line.split()
            if len(parts) > 1:
                counts[fn] = counts.get(fn, 0) + int(parts[1])
    return counts


def loop_functions(n: int) -> dict[str, int]:
    """The event loop's instructions by C function: cachegrind's counts stopped after the loop less after setup."""
    counts = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in (PHASES.index("cluster setup"), PHASES.index("event loop")):
            out = Path(tmp) / f"cachegrind.{k}"
            subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
                            sys.executable, *worker(n, k)], env=_pure_env(), cwd=ROOT,
                           capture_output=True, check=True)
            counts.append(function_counts(out.read_text()))
    before, after = counts
    diff = {fn: c - before.get(fn, 0) for fn, c in after.items()}
    return dict(sorted(diff.items(), key=lambda kv: -kv[1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=50000)
    ap.add_argument("--runs", type=int, default=3, help="fresh processes for the CPU split (the minimum is shown)")
    ap.add_argument("--instructions", action="store_true", help="also count each phase's instructions (valgrind)")
    ap.add_argument("--loop-functions", type=int, default=0, metavar="N",
                    help="also the event loop's instructions by C function, the top N (valgrind)")
    args = ap.parse_args()
    if args.loop_functions:
        by_fn = loop_functions(args.requests)
        total = sum(by_fn.values())
        print(f"event loop of --requests {args.requests}: {total:,} instructions, by C function (cachegrind)")
        for fn, c in list(by_fn.items())[:args.loop_functions]:
            print(f"  {c / 1e6:9.1f} M  {c / total:6.1%}  {fn}")
    cpu = cpu_split(args.requests, args.runs)
    ins = instruction_split(args.requests) if args.instructions else {}
    total_cpu, total_ins = sum(cpu.values()), sum(ins.values())
    print(f"whatif simulate ... --requests {args.requests}: CPU s (min of {args.runs} processes)"
          + (", instructions (cachegrind)" if ins else ""))
    for name, s in cpu.items():
        line = f"  {name:24s} {s:7.3f} s  {s / total_cpu:6.1%}"
        if ins:
            line += f"   {ins[name] / 1e6:8.0f} M  {ins[name] / total_ins:6.1%}"
        print(line)
    print(f"  {'total':24s} {total_cpu:7.3f} s" + (f"            {total_ins / 1e6:8.0f} M" if ins else ""))
    loop = cpu["event loop"]
    print(f"  outside the event loop: {total_cpu - loop:.3f} s CPU ({(total_cpu - loop) / total_cpu:.0%})"
          + (f", {(total_ins - ins['event loop']) / total_ins:.0%} of the instructions" if ins else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
