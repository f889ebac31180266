"""The one compute/memory combination of the roofline: a kernel's busy time from its compute and memory
times (each already divided by its efficiency), so the ridge between the two bounds bends as measured.

    busy = (t_c^p + t_m^p)^(1/p)      p >= 1 (p = 1: the sum; p -> infinity: the max)
    busy = max(t_c, t_m)              p <= 0

Computed as hi * ((t_c/hi)^p + (t_m/hi)^p)^(1/p) with hi = max(t_c, t_m), which neither overflows nor
underflows at large p. The per-class model (efficiency.ClassParams), the kernel models
(kernel_models/*) and the fused-MoE model all combine through it; floats stay on `math` (the estimate path
imports no numpy), numpy arrays (the fitters' columns) go through numpy.
"""
from __future__ import annotations


def ridge(t_compute, t_memory, p: float):
    if isinstance(t_compute, (int, float)) and isinstance(t_memory, (int, float)):
        return ridge_floats(t_compute, t_memory, p)
    import numpy as np
    t_compute, t_memory = np.asarray(t_compute, dtype=float), np.asarray(t_memory, dtype=float)
    hi = np.maximum(t_compute, t_memory)
    if p <= 0:
        return hi
    safe = np.where(hi > 0, hi, 1.0)
    return np.where(hi > 0, hi * ((t_compute / safe) ** p + (t_memory / safe) ** p) ** (1.0 / p), 0.0)


def ridge_floats(t_compute: float, t_memory: float, p: float) -> float:
    """`ridge` of two floats, without its type dispatch (the simulator's pricers call it per new batch shape)."""
    hi = max(t_compute, t_memory)
    if p <= 0 or hi <= 0:
        return hi
    return hi * ((t_compute / hi) ** p + (t_memory / hi) ** p) ** (1.0 / p)
