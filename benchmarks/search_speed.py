"""How fast `whatif search` prices a configuration space, in process (one core of this machine).

    python benchmarks/search_speed.py [--backend process|ray] [--prefill-chunks 2048,8192]

Target (issue 20): 10,000 configurations in under 10 s in process. The space: llama-3.1-70b on a pool of
dgx-h100 and hgx-h200 with a 16-GPU budget, ISL 4000 / OSL 1000, every TP x PP in a node, batches 1..256,
weights bf16/fp8, KV bf16/fp8, aggregated and disaggregated (xPyD). Configurations are what the search
reports (every replica count and pool split of every priced engine and batch, rejected ones included); an
engine is priced once per batch (roofline estimates) and shared by the configurations built from it. The
search runs once, cold, in this fresh process (the kernel-timing caches start empty; imports timed apart).
With --prefill-chunks, every engine is also priced at each chunk (default: 8192 alone); the chunks after the
first reuse the decode steps' kernel timings (same shapes), so each costs less than the first.

    python benchmarks/search_speed.py --baseline COMMIT [--runs 3]

runs the same search as a whole process against this checkout and COMMIT in turn (benchmarks/side_by_side.py;
a temporary git worktree of the commit, or a folder): median CPU (user + sys) and wall of --runs runs, and
baseline / this. A baseline without `whatif.search` (787b43e predates it) is reported as such.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import side_by_side  # noqa: E402 (benchmarks/side_by_side.py)

TARGET_S = 10.0
TARGET_CONFIGS = 10_000
SPACE = dict(gpus=16, prompt=4000, output=1000, ttft=1.0, tpot=0.05, weight_dtypes=("bf16", "fp8"),
             kv_dtypes=("bf16", "fp8"))


# The search in a fresh process (the same text against either tree): its configuration count, or that
# the tree has no search.
WORKER = """
import json, sys, time
import whatif
if not hasattr(whatif, "search"):
    print(json.dumps({"configs": None}))
    sys.exit(0)
space = json.loads(sys.argv[1])
t0 = time.perf_counter()
r = whatif.search("llama-3.1-70b", ("dgx-h100", "hgx-h200"), **space)
print(json.dumps({"configs": len(r.configs), "search_s": time.perf_counter() - t0}))
"""


def side_by_side_search(commit: str, runs: int, backend: str, chunks: tuple) -> int:
    space = {**SPACE, "backend": backend, "prefill_chunks": list(chunks)}
    argv = ["-c", WORKER, json.dumps(space)]
    with side_by_side.baseline_tree(commit) as base:
        trees = side_by_side.trees_of(base)
        probe = {label: json.loads(side_by_side.run_once(tree, argv)[2].strip().splitlines()[-1])
                 for label, tree in trees.items()}
        missing = [label for label, r in probe.items() if r["configs"] is None]
        results = side_by_side.alternate({k: v for k, v in trees.items() if k not in missing}, argv, runs,
                                         warmup=False)
    n = json.loads(results["this"].out.strip().splitlines()[-1])["configs"]
    print(f"whole `whatif.search` process ({n:,} configurations, prefill chunks {','.join(map(str, chunks))}, "
          f"backend {backend}), median of {runs} runs each (ratio: baseline / this)")
    print(side_by_side.table([side_by_side.ratio_row("search llama-3.1-70b, dgx-h100 + hgx-h200", results)]))
    for label in missing:
        print(f"  {label} ({commit}) has no whatif.search: no ratio")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="process")
    ap.add_argument("--prefill-chunks", default="8192", help="prefill chunk sizes, comma-separated")
    ap.add_argument("--baseline", help="a commit (or a checkout folder) to time the same search against")
    ap.add_argument("--runs", type=int, default=3, help="with --baseline: runs per checkout (the median is shown)")
    args = ap.parse_args()
    chunks = tuple(int(x) for x in args.prefill_chunks.split(","))
    if args.baseline:
        return side_by_side_search(args.baseline, args.runs, args.backend, chunks)
    t0 = time.perf_counter()
    import whatif
    from whatif.config_search import run  # noqa: F401 (imports timed apart from the search)
    import pandas  # noqa: F401
    imports_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = whatif.search("llama-3.1-70b", ("dgx-h100", "hgx-h200"), backend=args.backend, prefill_chunks=chunks,
                      **SPACE)
    wall = time.perf_counter() - t0
    n = len(r.configs)
    counts = r.counts()
    print(f"search space: llama-3.1-70b on dgx-h100 + hgx-h200, 16 GPUs, ISL 4000 / OSL 1000, "
          f"TTFT <= 1 s, TPOT <= 50 ms, prefill chunks {args.prefill_chunks}, backend {args.backend}")
    print(f"{n:,} configurations ({counts['ok']:,} meet the SLOs, {counts['misses SLO']:,} miss them, "
          f"{counts['does not fit']:,} do not fit, {counts['invalid']:,} invalid) from {r.replica_setups} replica "
          f"setups and {r.estimates} roofline estimates")
    print(f"wall {wall:.2f} s cold ({n / wall:,.0f} configurations/s; imports {imports_s:.2f} s apart); "
          f"target: {TARGET_CONFIGS:,} in < {TARGET_S:g} s")
    print(f"best: {r.best.mode} {r.best.label()} on {r.best.hardware}, {r.best.tok_s_per_gpu:,.0f} tok/s/GPU"
          if r.best else "best: none meets the SLOs")
    per_target = wall * TARGET_CONFIGS / n
    met = n >= TARGET_CONFIGS and wall < TARGET_S * n / TARGET_CONFIGS
    print(f"pro rata: {TARGET_CONFIGS:,} configurations in {per_target:.2f} s; "
          + ("target met" if met else "target NOT met") + (" (the whole space within the target too)"
                                                            if wall < TARGET_S else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
