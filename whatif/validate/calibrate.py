"""`whatif validate calibrate`: fit the efficiency model of one GPU on the train rows of measurement tables,
and report the error before (default model) and after (calibrated) on the held-out rows the fit never saw.

The calibration file is one entry of roofline/data/efficiency_default.yaml plus `gpu:` (what
`--efficiency calibrated --calibration FILE` reads), with a `calibration:` block recording the tables it was
fitted on and the held-out figures, which the test suite re-checks. Classes with fewer than MIN_ROWS train rows
keep the default model's parameters, and the provenance says which.
With at least kernel_fit_rows.MIN_KERNEL_ROWS train rows of a GEMM or attention dtype, the kernel model of it
(roofline/kernel_models) is fitted too, by the same search that fits the shipped models on the corpus, and
written under `kernel_models:`; the calibrated model then times those ops with it (and the ops it did not fit
with the default's kernel fits), as the default model does.
"""
from __future__ import annotations

from dataclasses import astuple, dataclass
from pathlib import Path

import numpy as np

from ..errors import WhatifError
from ..specs.hardware import load_component
from ..roofline.efficiency import ClassParams, Efficiency, default_efficiency
from ..roofline.engines import DEFAULT_ENGINE
from .accuracy import score
from .fit import COMPUTE_CLASSES, fit_by_class
from .kernel_fit_rows import fit_rows as fit_kernel_rows
from .table import Row

MIN_ROWS = 3                               # fewest train rows a class is fitted on
SIGNIFICANT = 6                            # digits kept in the file


@dataclass(frozen=True)
class Calibration:
    gpu: str
    efficiency: Efficiency          # the calibrated model
    fitted: dict[str, tuple[int, float]]   # class -> (train rows, in-sample MAPE)
    kept: tuple[str, ...]           # classes left at the default model's parameters
    train: list[Row]
    held_out: list[Row]
    tables: tuple[str, ...]
    kernel: dict = None             # (kernel model, dtype) -> (train rows, in-sample mean |log error|)


def usable(rows: list[Row], gpu: str | None) -> tuple[str, list[Row]]:
    """The rows of one GPU that have a timing; a mixed table needs --gpu, a dry run is refused."""
    gpus = sorted({r.gpu for r in rows})
    if gpu is None:
        if len(gpus) != 1:
            raise WhatifError(f"--gpu: the tables hold measurements of several GPUs ({', '.join(gpus)}); name one")
        gpu = gpus[0]
    mine = [r for r in rows if r.gpu == gpu and r.ok]
    if any(r.source.startswith("dry run") for r in mine):
        raise WhatifError("the table is a dry run's (CPU interpreter times): it measures no GPU and cannot "
                          "calibrate one")
    if not mine:
        raise WhatifError(f"--gpu: no timed rows for '{gpu}'; the tables have: {', '.join(gpus)}")
    return gpu, mine


def _round(x: float) -> float:
    return float(f"{x:.{SIGNIFICANT}g}")


def fit_rows(train: list[Row], gpu) -> dict[str, tuple[ClassParams, int, float]]:
    ops = [r.op() for r in train]
    fitted = fit_by_class(ops, np.array([r.measured_s for r in train]), gpu)
    return {cls: (ClassParams(*map(_round, astuple(p))), n, err)
            for cls, (p, n, err) in fitted.items() if n >= MIN_ROWS}


def calibrate(rows: list[Row], gpu_name: str | None = None, tables: tuple[str, ...] = ()) -> Calibration:
    gpu_name, mine = usable(rows, gpu_name)
    gpu = load_component(gpu_name, "gpu")
    train = [r for r in mine if r.split == "train"]
    held = [r for r in mine if r.split != "train"]
    if not train:
        raise WhatifError(f"no train rows for '{gpu_name}': every row is held out, nothing to fit")
    default = default_efficiency(gpu)
    fitted = fit_rows(train, gpu)
    classes = {**default.classes, **{cls: p for cls, (p, _, _) in fitted.items()}}
    kept = tuple(sorted(c for c in default.classes if c not in fitted))
    names = ", ".join(Path(t).name for t in tables) or "measurement tables"
    provenance = (f"calibrated by `whatif validate calibrate` on {len(train)} train rows of {names} "
                  f"({', '.join(sorted(fitted))} fitted); {', '.join(kept) or 'nothing'} kept from the default model")
    kernel = fit_kernel_rows(train)
    if kernel:
        provenance += ("; kernel models " + ", ".join(f"{m} {d}" for m, d in kernel) +
                       f" fitted on the same rows, the others' from the default ({DEFAULT_ENGINE})")
    eff = Efficiency("calibrated", provenance, classes, True, default.kernel_gap_s,
                     engine=DEFAULT_ENGINE if kernel else None,
                     kernel_params={k: _rounded(p) for k, (p, _, _) in kernel.items()})
    return Calibration(gpu_name, eff, {c: (n, err) for c, (_, n, err) in fitted.items()}, kept, train, held,
                       tuple(tables), {k: (n, err) for k, (_, n, err) in kernel.items()})


def _rounded(params):
    """Kernel-model parameters at the digits the file keeps (so a reloaded file predicts the same)."""
    from dataclasses import replace
    return replace(params, **{k: _round(v) for k, v in params.__dict__.items()})


def errors(rows: list[Row], eff: Efficiency, gpu) -> np.ndarray:
    """Signed relative error (predicted - measured) / measured of each (timed) row under `eff`."""
    return np.array([s.error for s in score(rows, lambda _gpu: (gpu, eff))])


def summary(e: np.ndarray) -> dict:
    a = np.abs(e)
    return {"rows": int(len(e)), "mape": _round(float(a.mean())) if len(e) else None,
            "median_abs": _round(float(np.median(a))) if len(e) else None}


def held_out_report(cal: Calibration) -> dict:
    """Error before and after calibration on the held-out rows, overall and by family."""
    gpu = load_component(cal.gpu, "gpu")
    default = default_efficiency(gpu)
    before, after = errors(cal.held_out, default, gpu), errors(cal.held_out, cal.efficiency, gpu)
    families = sorted({r.family for r in cal.held_out})
    by_family = {}
    for f in families:
        sel = np.array([r.family == f for r in cal.held_out])
        by_family[f] = {"rows": int(sel.sum()), "default_mape": summary(before[sel])["mape"],
                        "calibrated_mape": summary(after[sel])["mape"]}
    return {"default": summary(before), "calibrated": summary(after), "by_family": by_family}


def calibration_document(cal: Calibration, report: dict) -> dict:
    classes = {}
    for cls, p in sorted(cal.efficiency.classes.items()):
        keys = (("compute_eff", "memory_eff", "overhead_s", "smooth") if cls in COMPUTE_CLASSES
                else ("memory_eff", "overhead_s"))
        classes[cls] = {k: getattr(p, k) for k in keys}
    kernel_models = {}
    for (model, dtype), p in sorted(cal.efficiency.kernel_params.items()):
        kernel_models.setdefault(model, {})[dtype] = dict(p.__dict__)
    return {"gpu": cal.gpu, "provenance": cal.efficiency.provenance, "kernel_gap_s": cal.efficiency.kernel_gap_s,
            "classes": classes, **({"kernel_models": kernel_models} if kernel_models else {}),
            "calibration": {"tables": [Path(t).name for t in cal.tables], "train_rows": len(cal.train),
                            "held_out_rows": len(cal.held_out),
                            "fitted": {c: {"rows": n, "in_sample_mape": _round(err)}
                                       for c, (n, err) in sorted(cal.fitted.items())},
                            **({"kernel_models_fitted": {f"{m} {d}": {"rows": n, "mean_abs_log_error": _round(err)}
                                                         for (m, d), (n, err) in sorted(cal.kernel.items())}}
                               if cal.kernel else {}),
                            "kept_from_default": list(cal.kept), "held_out": report}}


def write_calibration(path: str | Path, document: dict) -> None:
    import yaml
    header = ("# whatif calibration file: use with --efficiency calibrated --calibration THIS_FILE.\n"
              "# Written by `whatif validate calibrate`; `calibration.held_out` is the error on rows the fit did "
              "not see.\n")
    Path(path).write_text(header + yaml.safe_dump(document, sort_keys=False))
