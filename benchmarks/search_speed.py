"""How fast `whatif search` prices a configuration space.

    python benchmarks/search_speed.py [--jobs N] [--backend process|ray] [--prefill-chunks 2048,8192]

Target (issue 42): 10,000 configurations in under 10 s on 2 cores. The space (the issue's): llama-3.1-70b on
one dgx-h100 (8 GPUs), ISL 4000 / OSL 1000, every TP x PP in the node, batches 1..256, weights bf16/fp8, KV
bf16/fp8, prefill chunks 2048 and 8192, no technique and kivi, aggregated and disaggregated (xPyD): 8,232
configurations (9,800 before session 70: at the CUDA runtime's memory total 70B fp8 no longer fits one H100, so
no pool has a tp1 pp1 prefill replica; compare configurations per second across that change). Configurations
are what the search reports (every replica count and pool split of every priced replica setup and batch, rejected
ones included); a replica setup is planned once per chunk (its max batch) and
timed once per batch, its steps remembered across batches and chunks, and shared by the configurations built
from it. The search runs once, cold, in this fresh process (the kernel-timing caches start empty; imports
timed apart); --jobs N prices the replica setups in N worker processes (default: this process's CPUs).

    python benchmarks/search_speed.py --baseline COMMIT [--runs 3] [--jobs N]

runs the same search as a whole process against this checkout and COMMIT in turn (benchmarks/side_by_side.py;
a temporary git worktree of the commit, or a folder): median CPU (user + sys, worker processes included) and
wall of --runs runs, and baseline / this. A baseline without `whatif.search` (787b43e predates it) is reported
as such; a baseline without `jobs` runs in one process (as it always did).

    python benchmarks/search_speed.py --simulate-top K [--baseline COMMIT] [--slo-ttft 1 --slo-tpot 0.05]

adds the frontier re-check (`whatif search --simulate-top K`: the K best of each mode and every frontier row the
text shows, each a capacity search in the simulator) under SLOs (default TTFT <= 1 s, TPOT <= 50 ms, the
docs/search.md example's: the space above has none, and a capacity search needs one); alone, it times the
search and the re-check apart (CPU with worker processes); with --baseline, the whole process side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402 (benchmarks/side_by_side.py)

TARGET_S = 10.0
TARGET_CONFIGS = 10_000
MODEL, HARDWARE = "llama-3.1-70b", ("dgx-h100",)
SPACE = dict(gpus=8, prompt=4000, output=1000, weight_dtypes=("bf16", "fp8"), kv_dtypes=("bf16", "fp8"),
             techniques=("kivi",))


SLO_DEFAULTS = {"ttft": 1.0, "tpot": 0.05}     # seconds (docs/search.md's example; used with --simulate-top)


# The search in a fresh process (the same text against either tree): its configuration count, or that
# the tree has no search. `jobs` goes only to a search that takes it.
WORKER = """
import inspect, json, sys, time
import whatif
if not hasattr(whatif, "search"):
    print(json.dumps({"configs": None}))
    sys.exit(0)
space = json.loads(sys.argv[1])
for name in ("jobs", "prune"):     # (a baseline older than these runs without them)
    if name not in inspect.signature(whatif.search).parameters:
        space.pop(name, None)
t0 = time.perf_counter()
r = whatif.search(MODEL_, HARDWARE_, **space)
print(json.dumps({"configs": len(r.configs), "search_s": time.perf_counter() - t0, "rechecked": len(r.rechecked)}))
""".replace("MODEL_", repr(MODEL)).replace("HARDWARE_", repr(HARDWARE))


def side_by_side_search(commit: str, runs: int, backend: str, chunks: tuple, jobs: int | None,
                        recheck: dict, prune: bool) -> int:
    space = {**SPACE, "backend": backend, "prefill_chunks": list(chunks), **({"jobs": jobs} if jobs else {}),
             **recheck, **({"prune": True} if prune else {})}
    argv = ["-c", WORKER, json.dumps(space)]
    with side_by_side.baseline_tree(commit) as base:
        trees = side_by_side.trees_of(base)
        probe = {label: json.loads(side_by_side.run_once(tree, argv)[2].strip().splitlines()[-1])
                 for label, tree in trees.items()}
        missing = [label for label, r in probe.items() if r["configs"] is None]
        results = side_by_side.alternate({k: v for k, v in trees.items() if k not in missing}, argv, runs,
                                         warmup=False)
    n = json.loads(results["this"].out.strip().splitlines()[-1])["configs"]
    out = json.loads(results["this"].out.strip().splitlines()[-1])
    what = (f", re-check of {out['rechecked']} configurations (--simulate-top {recheck['simulate_top']}, TTFT <= "
            f"{recheck['ttft']:g} s, TPOT <= {recheck['tpot']:g} s)" if recheck else "")
    print(f"whole `whatif.search` process ({n:,} configurations, prefill chunks {','.join(map(str, chunks))}, "
          f"backend {backend}, jobs {jobs or 'default'}{', --prune' if prune else ''}{what}), median of {runs} runs "
          f"each (ratio: baseline / this)")
    print(side_by_side.table([side_by_side.ratio_row(f"search {MODEL} on {'+'.join(HARDWARE)}", results)]))
    for label in missing:
        print(f"  {label} ({commit}) has no whatif.search: no ratio")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="process")
    ap.add_argument("--prefill-chunks", default="2048,8192", help="prefill chunk sizes, comma-separated")
    ap.add_argument("--jobs", type=int, help="worker processes (default: the search's, this process's CPUs)")
    ap.add_argument("--baseline", help="a commit (or a checkout folder) to time the same search against")
    ap.add_argument("--runs", type=int, default=3, help="with --baseline: runs per checkout (the median is shown)")
    ap.add_argument("--prune", action="store_true", help="search with --prune (the baseline without, if it lacks it)")
    ap.add_argument("--simulate-top", type=int, default=0, metavar="K",
                    help="also re-check the frontier in the simulator (whatif search --simulate-top K)")
    ap.add_argument("--slo-ttft", type=float, default=SLO_DEFAULTS["ttft"], help="seconds, with --simulate-top")
    ap.add_argument("--slo-tpot", type=float, default=SLO_DEFAULTS["tpot"], help="seconds, with --simulate-top")
    args = ap.parse_args()
    chunks = tuple(int(x) for x in args.prefill_chunks.split(","))
    recheck = ({"simulate_top": args.simulate_top, "ttft": args.slo_ttft, "tpot": args.slo_tpot}
               if args.simulate_top else {})
    if args.baseline:
        return side_by_side_search(args.baseline, args.runs, args.backend, chunks, args.jobs, recheck, args.prune)
    t0 = time.perf_counter()
    import whatif
    from whatif.config_search import run  # noqa: F401 (imports timed apart from the search)
    import pandas  # noqa: F401
    imports_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    slo = {k: v for k, v in recheck.items() if k != "simulate_top"}
    r = whatif.search(MODEL, HARDWARE, backend=args.backend, prefill_chunks=chunks, jobs=args.jobs, **SPACE, **slo,
                      prune=args.prune)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0 + children_cpu()     # the worker processes, once the pool has joined
    n = len(r.configs)
    counts = r.counts()
    print(f"search space: {MODEL} on {'+'.join(HARDWARE)}, {SPACE['gpus']} GPUs, ISL 4000 / OSL 1000, weights "
          f"bf16/fp8, KV bf16/fp8, techniques none/kivi, prefill chunks {args.prefill_chunks}, backend "
          f"{args.backend}, jobs {args.jobs or 'default'}{', --prune' if args.prune else ''}")
    print(f"{n:,} configurations ({counts['ok']:,} meet the SLOs, {counts['misses SLO']:,} miss them, "
          f"{counts['does not fit']:,} do not fit, {counts['invalid']:,} invalid) from {r.replica_setups} replica "
          f"setups and {r.estimates} roofline estimates" + (f", {r.pruned} dominated batches not priced" if r.pruned
                                                              else ""))
    print(f"wall {wall:.2f} s cold ({n / wall:,.0f} configurations/s), CPU {cpu:.2f} s (workers included; imports "
          f"{imports_s:.2f} s apart); "
          f"target: {TARGET_CONFIGS:,} in < {TARGET_S:g} s")
    print(f"best: {r.best.mode} {r.best.label()} on {r.best.hardware}, {r.best.tok_s_per_gpu:,.0f} tok/s/GPU"
          if r.best else "best: none meets the SLOs")
    per_target = wall * TARGET_CONFIGS / n
    # (pro rata: a space under 10,000 configurations is judged at its rate, and says so)
    print(f"pro rata: {TARGET_CONFIGS:,} configurations in {per_target:.2f} s; "
          + ("target met" if per_target < TARGET_S else "target NOT met")
          + (f" (the space holds {n:,})" if n < TARGET_CONFIGS else ""))
    if recheck:
        time_recheck(r, recheck["simulate_top"], args.jobs, wall, cpu)
    return 0


def children_cpu() -> float:
    """CPU seconds (user + sys) of this process's joined children so far."""
    import resource
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def time_recheck(r, top: int, jobs: int | None, search_wall: float, search_cpu: float) -> None:
    """The re-check `whatif search --simulate-top` runs after the search, timed apart (its imports included)."""
    from whatif.config_search.recheck import _workers, candidates, layout_groups, recheck
    from whatif.config_search.result import sampled_frontier
    t0, c0, k0 = time.perf_counter(), time.process_time(), children_cpu()
    rows = recheck(r.space, r.ranked, top, None, sampled_frontier(r.frontier), jobs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0 + children_cpu() - k0
    runs = sum(x["runs"] for x in rows)
    layouts = len(layout_groups(r.space, candidates(r.space, r.ranked, sampled_frontier(r.frontier), top), None))
    workers = _workers(jobs, layouts)
    print(f"re-check (--simulate-top {top}): {len(rows)} configurations in {layouts} layouts, {runs} simulations, "
          f"{'in this process' if workers == 1 else f'over {workers} worker processes'}, wall {wall:.2f} s, "
          f"CPU {cpu:.2f} s (workers included; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"search + re-check: wall {search_wall + wall:.2f} s, CPU {search_cpu + cpu:.2f} s; target: both "
          f"within {TARGET_S:g} s for {TARGET_CONFIGS:,} configurations")
    if rows:
        top_row = rows[0]
        print(f"best by the simulator: {top_row['config'].mode} {top_row['config'].label()}, "
              f"{top_row['goodput_per_gpu_tok_s']:,.0f} tok/s/GPU goodput")


if __name__ == "__main__":
    sys.exit(main())
