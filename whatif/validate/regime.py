"""The regime of a measured kernel: the one definition every table, fit report and benchmark uses.

A kernel's regime is which of its ceilings binds at the GPU's datasheet figures (IDEAL efficiency, so a
regime never moves when the efficiency model is refitted):
- launch-bound: both ideal times under LAUNCH_BOUND_S, so launch, ramp-up and sync dominate;
- compute-bound / memory-bound: one ideal time more than RIDGE_BAND times the other (for a collective,
  'memory' is the link);
- ridge: the two within RIDGE_BAND of each other.
Token counts, GPU counts and message sizes are not regimes: group by those columns separately.
"""
from __future__ import annotations

from ..roofline.efficiency import IDEAL
from ..roofline.ops import Op
from ..roofline.timing import time_op

LAUNCH_BOUND_S = 5e-6       # below this ideal time a kernel is dominated by launch and ramp-up
RIDGE_BAND = 2.0            # compute and memory time within this factor: near the ridge point
REGIMES = ("launch-bound", "memory-bound", "ridge", "compute-bound")


def regime(op: Op, gpu, link=None) -> str:
    """One of REGIMES for `op` on `gpu` (and `link`, for a collective)."""
    t = time_op(op, gpu, IDEAL, link)
    if max(t.compute_s, t.memory_s) < LAUNCH_BOUND_S:
        return "launch-bound"
    if t.compute_s > RIDGE_BAND * t.memory_s:
        return "compute-bound"
    if t.memory_s > RIDGE_BAND * t.compute_s:
        return "memory-bound"
    return "ridge"
