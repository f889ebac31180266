"""Efficiency models: what fraction of the hardware's ceilings each op class reaches.

Three sources (every result says which it used):
- ideal: datasheet ceilings, no overheads (pure roofline, to compare with LLM-Viewer-style tools);
- default: shape-aware model whose few parameters per GPU were fitted on public measurements
  (roofline/data/efficiency_default.yaml says on what), transferred by architecture where a GPU
  has no measurements of its own;
- calibrated: the same model with parameters from a calibration file (the schema of one `gpus:`
  entry of data/efficiency_default.yaml, plus `gpu: NAME`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import WhatifError
from ..specs.profiles import read_yaml
from .engines import DEFAULT_ENGINE, check_engine
from .op_kinds import OpClass

SOURCES = ("ideal", "default", "calibrated")
DEFAULT_FILE = Path(__file__).resolve().parent / "data" / "efficiency_default.yaml"

# GEMM tile candidates (rows, cols, relative per-SM efficiency). cuBLAS picks among tile shapes;
# we take the fastest, so wave and tile quantization show up as they do for a real library.
# Smaller tiles reuse less data per FLOP: the relative efficiencies are assumed, not fitted. The
# 16-row tile stands for the skinny kernels (GEMV, Marlin-style m16 MMA) used at decode batch sizes.
TILES = ((128, 256, 1.0), (256, 128, 1.0), (128, 128, 0.95), (64, 128, 0.8), (64, 64, 0.6), (16, 128, 0.5))
SPLIT_K = (1, 2, 4, 8)


@dataclass(frozen=True)
class ClassParams:
    """Efficiency of one op class. A missing field means 'not used by this class'."""

    compute_eff: float = 1.0    # fraction of dense peak at large shapes
    memory_eff: float = 1.0     # fraction of HBM (or link) bandwidth
    overhead_s: float = 0.0     # fixed time per kernel (ramp-up, tail, sync), seconds
    smooth: float = 0.0         # p of (t_c^p + t_m^p)^(1/p); 0 means max(t_c, t_m)

    def combine(self, t_compute, t_memory):
        """Busy time from compute and memory times already scaled by the efficiencies: the one combine
        formula (timing.py applies it, validate/fit.py fits through it). Floats, or numpy arrays of them."""
        if self.smooth <= 0:
            if isinstance(t_compute, (float, int)):
                return max(t_compute, t_memory)
            import numpy as np   # arrays come only from the fitter: the estimate path stays numpy-free
            return np.maximum(t_compute, t_memory)
        p = self.smooth
        return (t_compute ** p + t_memory ** p) ** (1.0 / p)


@dataclass(frozen=True)
class Efficiency:
    source: str                 # ideal | default | calibrated
    provenance: str             # fitted / transferred / assumed, and on what
    classes: dict[str, ClassParams] = field(default_factory=dict)
    tiles: bool = True          # model tile and wave quantization for GEMMs
    kernel_gap_s: float = 0.0   # GPU idle time between consecutive kernels
    engine: str | None = None   # serving engine whose fitted kernel models time GEMMs, attention and
                                # collectives (kernel_timing.py); None: the per-class model times them

    def params(self, op_class: OpClass) -> ClassParams:
        return self.classes.get(op_class, self.classes.get(OpClass.ELEMENTWISE, ClassParams()))

    def comm_params(self, link_type: str) -> ClassParams:
        """Collectives over one link type (comm_nvlink: fitted on NVSwitch nodes), else generic comm."""
        return self.classes.get(f"{OpClass.COMM}_{link_type}") or self.classes.get(OpClass.COMM, ClassParams())


IDEAL = Efficiency("ideal", "datasheet ceilings, no efficiency losses or overheads", {}, tiles=False)


def _params_from(raw: dict, where: str) -> dict[str, ClassParams]:
    out = {}
    for cls, values in raw.items():
        if not isinstance(values, dict):
            raise WhatifError(f"{where}.{cls}: expected a mapping of parameters")
        try:
            out[cls] = ClassParams(**{k: float(v) for k, v in values.items()})
        except (TypeError, ValueError) as exc:
            raise WhatifError(f"{where}.{cls}: {exc}; valid: compute_eff, memory_eff, overhead_s, smooth") from None
    return out


def efficiency_from_mapping(data: dict, source: str, where: str) -> Efficiency:
    classes = data.get("classes")
    if not isinstance(classes, dict):
        raise WhatifError(f"{where}: missing 'classes' mapping")
    return Efficiency(source, str(data.get("provenance", where)), _params_from(classes, f"{where}.classes"),
                      tiles=True, kernel_gap_s=float(data.get("kernel_gap_s", 0.0)))


@cache
def _default_table() -> dict:
    return read_yaml(DEFAULT_FILE).get("gpus", {})


def default_efficiency(gpu, engine: str = DEFAULT_ENGINE) -> Efficiency:
    """The shipped model for `gpu` as `engine` runs it: GEMMs, attention and collectives by the kernel
    models fitted on the engine's measured kernels (data/kernel_fit.yaml, data/collective_fit.yaml),
    the other op classes by the per-class fit of data/efficiency_default.yaml (the GPU's own, else a
    same-architecture one, else the nearest)."""
    from ..specs.hardware import ARCHS
    table = _default_table()
    if gpu.name in table:
        name, prefix = gpu.name, ""
    else:   # nearest architecture by generation: the same one if it was fitted
        name = min(table, key=lambda n: abs(ARCHS.index(table[n]["arch"]) - ARCHS.index(gpu.arch)))
        arch = table[name]["arch"]
        prefix = (f"transferred from {name} (same {arch} architecture): " if arch == gpu.arch
                  else f"assumed: no {gpu.arch} fit; borrowed from {name} ({arch}): ")
    eff = efficiency_from_mapping(table[name], "default", f"{DEFAULT_FILE.name}:{name}")
    engine = check_engine(engine)
    from .kernel_timing import kernel_provenance
    provenance = (f"engine {engine} kernel models: {kernel_provenance(gpu, engine)}; "
                  f"other ops (and MoE experts, MLA): {prefix}{eff.provenance}")
    return Efficiency("default", provenance, eff.classes, True, eff.kernel_gap_s, engine=engine)



def calibrated_efficiency(gpu, path: str | None) -> Efficiency:
    if path is None:
        raise WhatifError("--efficiency calibrated needs --calibration FILE (a YAML with gpu, provenance and "
                          "classes, as one entry of whatif/roofline/data/efficiency_default.yaml)")
    data = read_yaml(Path(path))
    if data.get("gpu") not in (None, gpu.name):
        raise WhatifError(f"{path}: calibration is for GPU '{data.get('gpu')}', not '{gpu.name}'")
    return efficiency_from_mapping(data, "calibrated", str(path))


def load_efficiency(source: str, gpu, calibration: str | None = None, engine: str = DEFAULT_ENGINE) -> Efficiency:
    """`engine` picks whose kernel fits the default model uses (ideal and calibrated ignore it)."""
    if source == "ideal":
        return IDEAL
    if source == "default":
        return default_efficiency(gpu, engine)
    if source == "calibrated":
        return calibrated_efficiency(gpu, calibration)
    raise WhatifError(f"--efficiency: '{source}' is not valid; valid: {', '.join(SOURCES)}")
