"""Timing one kernel: warm-up, rotating input sets, and the median via triton.testing.do_bench.

do_bench (CUDA events) flushes the L2 before each run; rotating several input sets on top keeps small
shapes from being served by caches between the flush and the launch. On the CPU (a dry run) a plain
perf_counter median stands in: the interpreter's times mean nothing for a GPU.
"""
from __future__ import annotations

import math
import statistics
import time

WARMUP_MS = 10      # do_bench warm-up per case, milliseconds of runs
REP_MS = 40         # do_bench timed runs per case, milliseconds of runs
ROTATE_BYTES = 256 * 2**20   # rotate input sets until they span this much (several times a 50-60 MB L2)
MAX_SETS = 8
CPU_REPEATS = 3


def input_sets(op_bytes: float, free_bytes: float) -> int:
    """How many input sets to rotate: enough to span ROTATE_BYTES, at most MAX_SETS, within a quarter of free memory."""
    want = math.ceil(ROTATE_BYTES / max(op_bytes, 1.0))
    fit = int(free_bytes / 4 // max(op_bytes, 1.0))
    return max(1, min(MAX_SETS, want, fit))


def median_seconds(launches: list, device: str) -> float:
    """Median seconds of one launch, cycling through `launches` (one closure per input set)."""
    state = {"i": 0}

    def run():
        launches[state["i"] % len(launches)]()
        state["i"] += 1

    if device == "cpu":
        run()
        times = []
        for _ in range(CPU_REPEATS):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)
    import triton.testing
    return triton.testing.do_bench(run, warmup=WARMUP_MS, rep=REP_MS, return_mode="median") * 1e-3
