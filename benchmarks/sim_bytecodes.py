"""Where the simulator's Python work goes, counted in bytecodes: a measure that does not move with the machine's load.

    python benchmarks/sim_bytecodes.py [--requests 5000] [--top 25] [--lines 40] [--baseline COMMIT]

Runs the issue-42 command (`whatif simulate --model llama-3-8b --hardware h100-sxm --rate 20 --requests N`) in
process with every bytecode of the simulation counted (sys.settrace opcode events, from `cluster.simulate`'s
call to its return: workload, setup and the event loop; not the imports or the summary) and prints the bytecodes
per request, by phase of a request's life and by function. On a shared 2-core machine CPU seconds move by ~5%
from run to run, so a 1-3% change shows only here. With --baseline the same count runs in that tree too (a
commit checked out into a temporary git worktree, or a folder; benchmarks/side_by_side.py). Tracing is ~50x
slower than the run: 5,000 requests take ~1 min. --lines N also lists the N source lines that run the most
bytecodes a request and how concentrated the count is (how many lines hold half of it; session 66 B: 134 lines, the
top ten 8.7%: a flat profile that no one inlining moves by more than ~2%).
"""
from __future__ import annotations

import argparse
import json
import linecache
import subprocess
import sys
from collections import Counter
from itertools import accumulate
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402 (benchmarks/side_by_side.py)

# A request's life by the functions that do it (module file, function); the rest of a full scheduler step (forming
# the batch, admission, pricing, completing) is "full step"
PHASES = {
    "decode loop": {("decode_run.py", None)},
    "arrival": {("cluster.py", "arrivals"), ("cluster.py", "arrive"), ("clock.py", "at"),
                ("clock.py", "run_until_mine"), ("replica.py", "submit"), ("sequence.py", "__init__")},
    "decode-only checks": {("core.py", "only_decodes"), ("chunked_prefill.py", "admits"),
                           ("admission.py", "can_admit_chunk"), ("admission.py", "_admissible_head"),
                           ("admission.py", "_lookup_pending"), ("admission.py", "_chunk_size")},
    "first token and finish": {("core.py", "_emit"), ("decoding.py", "_enter"), ("decoding.py", "_advance"),
                               ("decoding.py", "_due"), ("core.py", "_finish"), ("decoding.py", "_leave"),
                               ("block_manager.py", "release"), ("replica.py", "finished"),
                               ("core.py", "_drop_left"), ("core.py", "complete_decodes"), ("core.py", "_requeue")},
}


def phase(key: tuple[str, str]) -> str:
    for name, members in PHASES.items():
        if key in members or (key[0], None) in members:
            return name
    return "full step and setup"


def count(requests: int) -> dict:
    """Bytecodes by (file, function) of one traced simulate call, and the requests it ran."""
    import contextlib
    import io

    from whatif.cli import main
    from whatif.simulator import cluster

    ops: Counter = Counter()   # by (file, function, line)

    def tracer(frame, event, _arg):
        frame.f_trace_opcodes = True
        if event == "opcode":
            code = frame.f_code
            ops[(code.co_filename, code.co_name, frame.f_lineno)] += 1
        return tracer

    simulate = cluster.simulate

    def traced(*args, **kwargs):
        sys.settrace(tracer)
        try:
            return simulate(*args, **kwargs)
        finally:
            sys.settrace(None)

    cluster.simulate = traced
    with contextlib.redirect_stdout(io.StringIO()):
        main(["simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--rate", "20", "--requests",
              str(requests)])
    by_function: Counter = Counter()
    for (f, fn, _), n in ops.items():
        by_function[(f.rsplit("/", 1)[-1], fn)] += n
    lines = [[f.rsplit("/", 1)[-1], line, n, linecache.getline(f, line or 0).strip()]
             for (f, _, line), n in ops.items()]
    return {"requests": requests, "ops": [[f, fn, n] for (f, fn), n in by_function.items()], "lines": lines}


def report(label: str, result: dict, top: int, lines: int = 0) -> None:
    n = result["requests"]
    ops = Counter({(f, fn): c for f, fn, c in result["ops"]})
    total = sum(ops.values())
    print(f"{label}: {total / n:,.0f} bytecodes a request ({n} requests)")
    phases: Counter = Counter()
    for key, c in ops.items():
        phases[phase(key)] += c
    for name, c in phases.most_common():
        print(f"  {name:24s} {c / n:7,.0f}  {c / total:6.1%}")
    print("  functions:")
    for (f, fn), c in ops.most_common(top):
        print(f"    {c / n:7,.1f}  {f}:{fn}")
    if lines:
        counts = sorted((c for _, _, c, _ in result["lines"]), reverse=True)
        half = next(i + 1 for i, c in enumerate(accumulate(counts)) if c >= total / 2)
        print(f"  lines: {half} of {len(counts)} hold half the bytecodes; the top ten {sum(counts[:10]) / total:.1%}")
        for f, line, c, text in sorted(result["lines"], key=lambda r: -r[2])[:lines]:
            print(f"    {c / n:7,.1f}  {f}:{line}  {text[:100]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--top", type=int, default=25, help="functions listed")
    ap.add_argument("--lines", type=int, default=0, help="source lines listed (0: none)")
    ap.add_argument("--baseline", help="a commit (or a checkout folder) to count too, e.g. 787b43e")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)   # (a child's answer)
    args = ap.parse_args()
    if args.json:
        print(json.dumps(count(args.requests)))
        return 0
    with side_by_side.baseline_tree(args.baseline) as base:
        for label, tree in side_by_side.trees_of(base).items():
            out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--json", "--requests",
                                  str(args.requests)], env=side_by_side.child_env(tree), cwd=tree,
                                 capture_output=True, text=True, check=True)
            report(label, json.loads(out.stdout.strip().splitlines()[-1]), args.top, args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
