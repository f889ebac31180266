"""The one fitter: efficiency parameters from measured kernel times (deterministic coordinate search).

The model per op class is the one the roofline applies (roofline/efficiency.py, ClassParams.combine):
t = combine(t_c / compute_eff, t_m / memory_eff) + overhead_s, where t_c and t_m are the ideal compute
and memory (or link) times of roofline/timing.py at unit efficiency. They do not depend on the
parameters, so a fit evaluates thousands of parameter sets over numpy arrays in milliseconds.
Every efficiency is searched in (0, 1]: a kernel cannot beat its datasheet ceiling, and a fit that
wants to is reading its data wrong (a fit pinned at 1 is the tell).
Used by `whatif validate calibrate` and by benchmarks/accuracy_reference.py (the default model).
"""
from __future__ import annotations

import numpy as np

from ..roofline.efficiency import ClassParams, Efficiency
from ..roofline.timing import time_op

SMOOTH_GRID = (0.0, 1.5, 2.0, 3.0, 4.0, 6.0)
# Tensor-core classes whose compute term binds at large shapes: only these fit compute_eff and smooth;
# the others are memory-bound kernels (or collectives) whose compute term never binds.
COMPUTE_CLASSES = ("gemm", "attention_prefill")


def ideal_times(ops, gpu, link=None) -> tuple[np.ndarray, np.ndarray]:
    """(compute_s, memory_s) of each op at efficiency 1 with tile/wave quantization."""
    unit = Efficiency("fit", "unit efficiencies", {}, tiles=True)
    times = [time_op(op, gpu, unit, link) for op in ops]
    return np.array([t.compute_s for t in times]), np.array([t.memory_s for t in times])


def predict(params: ClassParams, t_c: np.ndarray, t_m: np.ndarray) -> np.ndarray:
    """Kernel times under `params` from ideal times: the roofline's own combine formula."""
    return params.combine(t_c / params.compute_eff, t_m / params.memory_eff) + params.overhead_s


def mape(pred: np.ndarray, measured: np.ndarray) -> float:
    return float(np.mean(np.abs(pred - measured) / measured))


def fit_class(t_c: np.ndarray, t_m: np.ndarray, measured: np.ndarray, fit_compute: bool = True,
              rounds: int = 6) -> tuple[ClassParams, float]:
    """Minimise MAPE over (compute_eff, memory_eff, overhead_s, smooth) by coordinate search."""
    best = ClassParams(0.8 if fit_compute else 1.0, 0.8, 2e-6, 0.0)
    best_err = mape(predict(best, t_c, t_m), measured)
    grids = {
        "compute_eff": np.linspace(0.3, 1.0, 71) if fit_compute else None,
        "memory_eff": np.linspace(0.05, 1.0, 96),
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
                 compute_classes=COMPUTE_CLASSES) -> dict[str, tuple[ClassParams, int, float]]:
    """Fit each op class present in `ops`: class -> (params, samples, in-sample MAPE)."""
    t_c, t_m = ideal_times(ops, gpu, link)
    classes = np.array([op.op_class for op in ops])
    out = {}
    for cls in sorted(set(classes)):
        sel = classes == cls
        params, err = fit_class(t_c[sel], t_m[sel], measured[sel], fit_compute=(cls in compute_classes))
        out[str(cls)] = (params, int(sel.sum()), err)
    return out
