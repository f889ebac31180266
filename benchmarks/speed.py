"""How fast whatif answers: a warm in-process estimate, and the CLI's wall time from a cold process.

    python benchmarks/speed.py [--runs 50] [--cli-runs 5]
    python benchmarks/speed.py --baseline 787b43e [--cli-runs 3]   # cold CLI commands side by side
    python benchmarks/speed.py --baseline 787b43e --no-bytecode-cache   # ... every .py compiled each run

Targets: a warm estimate well under 10 ms (median); `python -m whatif estimate --json` under 1 s; a cold
`whatif estimate --model llama-3-70b --hardware dgx-h100 --tp 4 --no-ops` at or under 787b43e's CPU (issue 42).
With --baseline (a commit or a folder) the cold CLI commands below run in fresh processes against this
checkout and the baseline in turn (benchmarks/side_by_side.py): median CPU (user + sys) and wall of
--cli-runs runs each, and baseline / this (above 1: this checkout is faster). The target is stated with bytecode
caches (a user's installed package has its .pyc files); --no-bytecode-cache times both trees compiling their
own modules from source each run (what a checkout run under PYTHONDONTWRITEBYTECODE=1 pays).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side as side_by_side_mod  # noqa: E402 (benchmarks/side_by_side.py, beside this script)
from whatif.specs import units
from whatif.roofline.config import Parallelism, Precision
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario

WARM_TARGET_MS = 10.0
CLI_TARGET_S = 1.0

SCENARIOS = {
    "default (llama-3-8b, h100-sxm)": Scenario(),
    "llama-3-70b dgx-h100 tp4": Scenario(model="llama-3-70b", hardware="dgx-h100", parallel=Parallelism(tp=4),
                                         workload=Workload(batch=16, prompt=2048, output=256)),
    "deepseek-v3 hgx-h200 tp8 ep8 fp8": Scenario(model="deepseek-v3", hardware="hgx-h200",
                                                 parallel=Parallelism(tp=8, ep=8),
                                                 precision=Precision(weight="fp8", activation="fp8", kv="fp8")),
}


def warm_ms(scenario: Scenario, runs: int) -> float:
    """Median ms of Scenario.run() after one warm-up (profiles cached, as in a long-lived process)."""
    scenario.run()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        scenario.run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def cli_s(runs: int, argv=("estimate", "--json")) -> float:
    """Median wall seconds of `python -m whatif ...` in a fresh interpreter."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "whatif", *argv], cwd=ROOT, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"`whatif {' '.join(argv)}` failed: {proc.stderr.strip()}")
    return statistics.median(times)


# Cold commands compared with --baseline (each exists in 787b43e's CLI too).
COLD_COMMANDS = (
    ("estimate", "--model", "llama-3-70b", "--hardware", "dgx-h100", "--tp", "4", "--no-ops"),
    ("estimate", "--json"),
    ("list", "models"),
    ("show", "model", "llama-3-8b"),
    ("--help",),
)


def side_by_side(commit: str, runs: int, bytecode: bool = True) -> int:
    """The cold CLI commands against this checkout and `commit`, alternating (benchmarks/side_by_side.py)."""
    with side_by_side_mod.baseline_tree(commit) as base:
        trees = side_by_side_mod.trees_of(base)
        rows = []
        for argv in COLD_COMMANDS:
            results = side_by_side_mod.alternate(trees, ["-m", "whatif", *argv], runs, bytecode=bytecode)
            rows.append(side_by_side_mod.ratio_row("whatif " + " ".join(argv), results))
    cache = "bytecode caches written and read" if bytecode else "no bytecode cache: whatif's .py compiled each run"
    print(f"cold CLI processes ({cache}), median of {runs} runs each, this checkout vs {commit} "
          f"(ratio: baseline / this)")
    print(side_by_side_mod.table(rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50, help="warm estimate runs per scenario (>= 50 recommended)")
    ap.add_argument("--cli-runs", type=int, default=5, help="CLI subprocess runs")
    ap.add_argument("--baseline", help="a commit (or a checkout folder) to time the cold CLI commands against")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="with --baseline: the trees' own modules compiled from source each run (no .pyc)")
    args = ap.parse_args(argv)
    if args.baseline:
        return side_by_side(args.baseline, args.cli_runs, bytecode=not args.no_bytecode_cache)

    rows = []
    for name, scenario in SCENARIOS.items():
        ms = warm_ms(scenario, args.runs)
        rows.append((f"warm estimate: {name}", f"{ms:.2f} ms", f"< {WARM_TARGET_MS:g} ms",
                     "met" if ms < WARM_TARGET_MS else "MISSED"))
    s = cli_s(args.cli_runs)
    rows.append(("CLI: python -m whatif estimate --json", f"{s:.3f} s", f"< {CLI_TARGET_S:g} s",
                 "met" if s < CLI_TARGET_S else "MISSED"))

    headers = ("measurement", f"median (warm n={args.runs}, CLI n={args.cli_runs})", "target", "")
    print(f"python {sys.version.split()[0]} on {sys.platform}")
    print(units.table(list(headers), [list(r) for r in rows]))
    return 0 if all(r[3] == "met" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
