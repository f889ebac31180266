"""Run the same command against this checkout and a baseline commit, alternating, and compare.

The benchmarks (speed.py, sim_speed.py, search_speed.py) take `--baseline COMMIT`: the commit is checked out
into a temporary git worktree of its own (/tmp/whatif-base-<sha>-<random>, removed at the end), and
each command runs in a fresh Python process with PYTHONPATH at one tree or the other, the trees taking turns
run by run (so load on a shared machine falls on both alike). A process's CPU is its user + sys seconds
(the children's rusage); wall is perf_counter around it. Bytecode caching is left on (a user's install has
its .pyc files): one unmeasured warm-up run per tree writes them first. With bytecode=False each run compiles
the tree's own modules from source (its whatif/**/__pycache__ removed first, PYTHONDONTWRITEBYTECODE=1), as a
checkout run under PYTHONDONTWRITEBYTECODE=1 does; the standard library's caches stay.
"""
from __future__ import annotations

import contextlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def baseline_tree(commit: str | None):
    """The baseline's source tree: None without a commit; a folder given as is; else a detached git worktree
    of the commit (made here and removed at the end, or reused when one of that commit is already there)."""
    if not commit:
        yield None
        return
    if Path(commit).is_dir():
        yield Path(commit).resolve()
        return
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
                         capture_output=True, text=True)
    if sha.returncode != 0:
        raise SystemExit(f"--baseline: '{commit}' is not a commit of {ROOT} nor a folder")
    sha = sha.stdout.strip()
    # a folder of this run's own: two benchmarks of one baseline at once must not remove each other's tree
    path = Path(tempfile.mkdtemp(prefix=f"whatif-base-{sha[:12]}-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha], check=True,
                   capture_output=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], capture_output=True)
        shutil.rmtree(path, ignore_errors=True)


def child_env(tree: Path, bytecode: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_once(tree: Path, argv: list[str], check: bool = True, bytecode: bool = True) -> tuple[float, float, str]:
    """(CPU user+sys s, wall s, stdout) of `python argv...` in a fresh process with `tree` on PYTHONPATH
    (`bytecode` False: compiled from source, no .pyc read or written)."""
    env = child_env(tree, bytecode)
    if not bytecode:   # (no cached .pyc of the tree's own modules to read)
        for cache in (Path(tree) / "whatif").rglob("__pycache__"):
            shutil.rmtree(cache, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], cwd=tree, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if check and proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"`python {' '.join(argv)}` failed in {tree}: {tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, proc.stdout


@dataclass
class Timings:
    cpu: list = field(default_factory=list)
    wall: list = field(default_factory=list)
    out: str = ""

    def median(self, what: str) -> float:
        return statistics.median(getattr(self, what))


def alternate(trees: dict[str, Path], argv: list[str], runs: int, warmup: bool = True,
              bytecode: bool = True) -> dict[str, Timings]:
    """Each tree's timings of `argv` over `runs` runs, the trees taking turns (the first run's order reversed
    on every other run); one unmeasured warm-up each (bytecode caches, disk cache)."""
    results = {label: Timings() for label in trees}
    if warmup:
        for tree in trees.values():
            run_once(tree, argv, bytecode=bytecode)
    order = list(trees)
    for i in range(runs):
        for label in (order if i % 2 == 0 else order[::-1]):
            cpu, wall, out = run_once(trees[label], argv, bytecode=bytecode)
            results[label].cpu.append(cpu)
            results[label].wall.append(wall)
            results[label].out = out
    return results


def ratio_row(name: str, results: dict[str, Timings]) -> list[str]:
    """A table row: this checkout's median CPU and wall, the baseline's, and baseline / this (>1: faster now)."""
    now = results["this"]
    row = [name, f"{now.median('cpu'):.3f}", f"{now.median('wall'):.3f}"]
    base = results.get("baseline")
    if base is None:
        return row + ["-", "-", "-", "-"]
    return row + [f"{base.median('cpu'):.3f}", f"{base.median('wall'):.3f}",
                  f"{base.median('cpu') / now.median('cpu'):.2f}x", f"{base.median('wall') / now.median('wall'):.2f}x"]


HEADERS = ["command", "CPU s", "wall s", "baseline CPU s", "baseline wall s", "CPU ratio", "wall ratio"]


def table(rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [HEADERS, *rows]) for i in range(len(HEADERS))]

    def line(r):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(HEADERS), line(["-" * w for w in widths]), *map(line, rows)])


def trees_of(baseline: Path | None) -> dict[str, Path]:
    return {"this": ROOT, **({"baseline": baseline} if baseline else {})}
