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
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 10.0
TARGET_CONFIGS = 10_000
SPACE = dict(gpus=16, prompt=4000, output=1000, ttft=1.0, tpot=0.05, weight_dtypes=("bf16", "fp8"),
             kv_dtypes=("bf16", "fp8"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="process")
    ap.add_argument("--prefill-chunks", default="8192", help="prefill chunk sizes, comma-separated")
    args = ap.parse_args()
    chunks = tuple(int(x) for x in args.prefill_chunks.split(","))
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
          f"{counts['does not fit']:,} do not fit, {counts['invalid']:,} invalid) from {r.engines} engines and "
          f"{r.estimates} roofline estimates")
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
