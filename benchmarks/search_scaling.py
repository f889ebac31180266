"""How `whatif search` scales with workers: configurations per second against worker processes or Ray CPUs.

    python benchmarks/search_scaling.py [--workers 1,2,4] [--backend process|ray] [--space issue|sweep] [--prune]

Each point is the whole search in a fresh process (cold kernel-timing caches, as a user's run), timed around
`whatif.search` alone (imports apart): wall, CPU of the process and its workers (user + sys), and
configurations / wall second. `--backend process` runs `jobs=N` (forked workers, backends.py); `--backend ray`
starts a local Ray with `num_cpus=N` first (one task per replica setup; `pip install 'whatif[ray]'`). Spaces:
- issue: issue 42's, llama-3.1-70b on one dgx-h100, weights and KV bf16/fp8, chunks 2048/8192, none/kivi
  (9,800 configurations, 80 replica setups);
- sweep: the same on 16 GPUs of two nodes (`--nodes 2`; cross-node disaggregated pools), weights bf16/fp8,
  KV bf16/fp8, chunks 1024/2048/8192, none/kivi: ~100,000 configurations.
On a machine with C free cores the curve can rise only up to C workers: quote C with it. `--csv PATH` appends
each point (backend, space, workers, configurations, wall, CPU, configurations/s, cores, load average) to PATH;
benchmarks/data/search_scaling.csv holds the points measured so far. With Ray, CPU counts
the driver alone (the Ray workers are the raylet's processes, not this one's children).
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

SPACES = {
    "issue": dict(gpus=8, weight_dtypes=["bf16", "fp8"], kv_dtypes=["bf16", "fp8"], prefill_chunks=[2048, 8192],
                  techniques=["kivi"]),
    "sweep": dict(gpus=16, nodes=2, weight_dtypes=["bf16", "fp8"], kv_dtypes=["bf16", "fp8"],
                  prefill_chunks=[1024, 2048, 8192], techniques=["kivi"]),
}

WORKER = """
import json, resource, sys, time
import whatif
space, backend, n = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if sys.argv[4] == "prune":
    space["prune"] = True
if backend == "ray":
    import ray
    ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False, configure_logging=False)
    kw = {"backend": "ray"}
else:
    kw = {"jobs": n}
t0, c0 = time.perf_counter(), time.process_time()
r = whatif.search("llama-3.1-70b", "dgx-h100", **space, **kw)
wall = time.perf_counter() - t0
kids = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"configs": len(r.configs), "setups": r.replica_setups, "wall": wall, "pruned": r.pruned,
                  "cpu": time.process_time() - c0 + kids.ru_utime + kids.ru_stime}))
"""


def point(space: dict, backend: str, n: int, prune: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    proc = subprocess.run([sys.executable, "-c", WORKER, json.dumps(space), backend, str(n),
                           "prune" if prune else "-"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"search with {backend} x{n} failed: {tail}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def append_row(path: Path, row: dict) -> None:
    """One measured point, appended (the header written with the file's first row)."""
    import csv
    new = not path.exists()
    with path.open("a", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(row))
        if new:
            out.writeheader()
        out.writerow(row)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    ap.add_argument("--backend", default="process", choices=("process", "ray"))
    ap.add_argument("--space", default="issue", choices=tuple(SPACES))
    ap.add_argument("--prune", action="store_true", help="search with --prune (configurations: those kept)")
    ap.add_argument("--csv", help="also append each point to this CSV (e.g. benchmarks/data/search_scaling.csv)")
    args = ap.parse_args()
    space = SPACES[args.space]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"space '{args.space}': llama-3.1-70b on dgx-h100, {json.dumps(space)}; backend {args.backend}; "
          f"{'--prune; ' if args.prune else ''}{cores} CPUs visible; load average {os.getloadavg()[0]:.1f} at the "
          "start")
    print(f"{'workers':>7}  {'configs':>8}  {'wall s':>7}  {'CPU s':>7}  {'configs/s':>9}  {'speed-up':>8}")
    first = None
    for n in (int(x) for x in args.workers.split(",")):
        r = point(space, args.backend, n, args.prune)
        rate = r["configs"] / r["wall"]
        first = first or rate
        print(f"{n:>7}  {r['configs']:>8,}  {r['wall']:>7.2f}  {r['cpu']:>7.2f}  {rate:>9,.0f}  {rate / first:>7.2f}x")
        if args.csv:
            append_row(Path(args.csv), {"backend": args.backend, "space": args.space, "prune": args.prune,
                                        "workers": n, "configs": r["configs"], "wall_s": round(r["wall"], 2),
                                        "cpu_s": round(r["cpu"], 2), "configs_per_s": round(rate),
                                        "cores": cores, "load_average": round(os.getloadavg()[0], 1),
                                        "date": time.strftime("%Y-%m-%d", time.gmtime())})
    return 0


if __name__ == "__main__":
    sys.exit(main())
