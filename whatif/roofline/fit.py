"""Fitting efficiency parameters to measured kernel times (deterministic coordinate search).

The model per op class is t = combine(t_c / compute_eff, t_m / memory_eff) + overhead_s, where
t_c and t_m are the ideal compute and memory times from timing.py. They do not depend on the
parameters, so a fit evaluates thousands of parameter sets over numpy arrays in milliseconds.
"""
from __future__ import annotations

import numpy as np

from .efficiency import ClassParams, Efficiency
from .timing import time_op

SMOOTH_GRID = (0.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def ideal_times(ops, gpu, link=None) -> tuple[np.ndarray, np.ndarray]:
    """(compute_s, memory_s) of each op at efficiency 1 with tile/wave quantization."""
    unit = Efficiency("fit", "unit efficiencies", {}, tiles=True)
    times = [time_op(op, gpu, unit, link) for op in ops]
    return np.array([t.compute_s for t in times]), np.array([t.memory_s for t in times])


def predict(params: ClassParams, t_c: np.ndarray, t_m: np.ndarray) -> np.ndarray:
    c, m = t_c / params.compute_eff, t_m / params.memory_eff
    if params.smooth <= 0:
        busy = np.maximum(c, m)
    else:
        p = params.smooth
        busy = (c ** p + m ** p) ** (1.0 / p)
    return busy + params.overhead_s


def mape(pred: np.ndarray, measured: np.ndarray) -> float:
    return float(np.mean(np.abs(pred - measured) / measured))


def fit_class(t_c: np.ndarray, t_m: np.ndarray, measured: np.ndarray, fit_compute: bool = True,
              rounds: int = 6, max_memory_eff: float = 1.0) -> tuple[ClassParams, float]:
    """Minimise MAPE over (compute_eff, memory_eff, overhead_s, smooth) by coordinate search."""
    best = ClassParams(0.8 if fit_compute else 1.0, 0.8, 2e-6, 0.0)
    best_err = mape(predict(best, t_c, t_m), measured)
    grids = {
        "compute_eff": np.linspace(0.3, 1.0, 71) if fit_compute else None,
        "memory_eff": np.linspace(0.05, max_memory_eff, int(round(max_memory_eff * 100)) - 4),
        "overhead_s": np.concatenate([[0.0], np.geomspace(2e-7, 1e-4, 100)]),
        "smooth": np.array(SMOOTH_GRID) if fit_compute else None,
    }
    for _ in range(rounds):
        improved = False
        for name, grid in grids.items():
            if grid is None:
                continue
            for value in grid:
                cand = ClassParams(**{**best.__dict__, name: float(value)})
                err = mape(predict(cand, t_c, t_m), measured)
                if err < best_err - 1e-12:
                    best, best_err, improved = cand, err, True
        if not improved:
            break
    return best, best_err


def fit_by_class(ops, measured: np.ndarray, gpu, link=None,
                 compute_classes=("gemm",)) -> dict[str, tuple[ClassParams, int, float]]:
    """Fit each op class present in `ops`: class -> (params, samples, in-sample MAPE).

    Only `compute_classes` fit a compute efficiency and a smoothing exponent (the others are memory-bound
    kernels whose compute term never binds). Collectives may exceed the link's per-direction figure
    (in-switch reduction, NVLS), so their effective-bandwidth factor may go above 1.
    """
    t_c, t_m = ideal_times(ops, gpu, link)
    classes = np.array([op.op_class for op in ops])
    out = {}
    for cls in sorted(set(classes)):
        sel = classes == cls
        params, err = fit_class(t_c[sel], t_m[sel], measured[sel], fit_compute=(cls in compute_classes),
                                max_memory_eff=3.0 if cls == "comm" else 1.0)
        out[str(cls)] = (params, int(sel.sum()), err)
    return out
