"""What `whatif validate run` will time on a GPU: cases per kernel family and regime, the train / held-out split,
the distinct compiled kernel configurations, and an upper estimate of the run's length.

    python benchmarks/validate_sweep.py [--gpu h100-sxm]

The estimate charges each case do_bench's warm-up and timed runs (timing.WARMUP_MS + REP_MS, or the kernel's
own predicted time when longer), ASSUMED_CASE_OVERHEAD_S for drawing inputs and the correctness check, and
ASSUMED_COMPILE_S per compiled configuration; the runner's budget stops new cases at 420 s whatever happens.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRITON_INTERPRET", "1")   # import the kernels without a GPU

from whatif.specs.hardware import load_component  # noqa: E402
from whatif.roofline.efficiency import default_efficiency  # noqa: E402
from whatif.roofline.timing import time_op  # noqa: E402
from whatif.validate.cases import regime, sweep  # noqa: E402
from whatif.validate.kernels import FAMILIES  # noqa: E402
from whatif.validate.timing import REP_MS, WARMUP_MS  # noqa: E402

ASSUMED_CASE_OVERHEAD_S = 0.15   # inputs drawn on the GPU, one checked launch, the reference, Python; assumed
ASSUMED_COMPILE_S = 3.0          # one Triton compile on the GPU machine's CPU; assumed
CONFIGS_PER_FAMILY = 12          # the most compiled configurations a family may use (its docstring counts them)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h100-sxm")
    gpu = load_component(ap.parse_args().gpu, "gpu")
    eff = default_efficiency(gpu)
    cases = sweep(FAMILIES, gpu)
    regimes = ("launch-bound", "memory-bound", "ridge", "compute-bound")
    print(f"{len(cases)} cases on {gpu.name}\n")
    print(f"{'family':<20}" + "".join(f"{r:>15}" for r in regimes) + f"{'train':>8}{'held-out':>10}")
    total_s = 0.0
    for family in FAMILIES:
        mine = [c for c in cases if c.family == family]
        counts = Counter(regime(c.op(), gpu) for c in mine)
        splits = Counter(c.split for c in mine)
        print(f"{family:<20}" + "".join(f"{counts[r]:>15}" for r in regimes)
              + f"{splits['train']:>8}{splits['held-out']:>10}")
        for c in mine:
            kernel_ms = time_op(c.op(), gpu, eff).time_s * 1e3
            total_s += (WARMUP_MS + max(REP_MS, 5 * kernel_ms)) * 1e-3 + ASSUMED_CASE_OVERHEAD_S
    configs = CONFIGS_PER_FAMILY * len({c.family for c in cases})
    total_s += configs * ASSUMED_COMPILE_S
    print(f"\nupper estimate: {total_s:.0f} s ({len(cases)} cases, <= {configs} compiled configurations at "
          f"{ASSUMED_COMPILE_S:g} s each, assumed); the runner stops starting cases at 420 s")


if __name__ == "__main__":
    main()
