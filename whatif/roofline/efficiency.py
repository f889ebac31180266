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

from ..errors import WhatifError, check_mapping, closest, shown
from ..specs.profiles import read_yaml
from .engines import DEFAULT_ENGINE, check_engine
from ..specs.op_kinds import OpClass
from .ridge import ridge

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
        formula (roofline/ridge.py; timing.py applies it, validate/fit.py fits through it). Floats, or numpy
        arrays of them (from the fitter only: the estimate path stays numpy-free)."""
        return ridge(t_compute, t_memory, self.smooth)


@dataclass(frozen=True)
class Efficiency:
    """The efficiency model of a GPU: per-op-class fitted parameters and their provenance."""

    source: str                 # ideal | default | calibrated
    provenance: str             # fitted / transferred / assumed, and on what
    classes: dict[str, ClassParams] = field(default_factory=dict)
    tiles: bool = True          # model tile and wave quantization for GEMMs
    kernel_gap_s: float = 0.0   # GPU idle time between consecutive kernels
    engine: str | None = None   # serving engine whose fitted kernel models time GEMMs, attention and
                                # collectives (kernel_timing.py); None: the per-class model times them
    kernel_params: dict = field(default_factory=dict)   # (kernel model, dtype) -> params a calibration
                                # fitted, used instead of the engine's shipped fit (kernel_timing.py)
    custom_allreduce_max_bytes: float | None = None   # the engine spec's cap on its custom all-reduce (0: NCCL
                                # only); None: the fitted thresholds alone (data/collective_fit.yaml)
    multinode_nvls: bool = True   # NCCL may reduce in the NVSwitch across nodes (False: the engine spec's
                                # collectives.multinode_nvls, NCCL_NVLS_ENABLE=0: kernel_models/two_node_allreduce.py)
    module_fits: bool = True    # whole-module fits price their modules where they apply (module_fits.py);
                                # False: every op is its kernel's own time (accuracy_modern.py's comparison)
    moe_engine: str | None = None   # whose fused-MoE fit prices the expert GEMMs (moe_kernels.py: the same
                                # kernels measured under another engine); None: `engine`'s own
    moe_weight_only: bool = False   # 4-bit float experts on the engine's weight-only MoE kernel (moe_kernels marlin)
    grouped_problem_cost: bool = False   # price each local expert's grouped-GEMM problem where measured
                                # (grouped_problems.py; the scenario's moe_problem_cost); False: as before

    def params(self, op_class: OpClass) -> ClassParams:
        return self.classes.get(op_class, self.classes.get(OpClass.ELEMENTWISE, ClassParams()))

    def comm_params(self, link_type: str) -> ClassParams:
        """Collectives over one link type (comm_nvlink: fitted on NVSwitch nodes), else generic comm."""
        return self.classes.get(f"{OpClass.COMM}_{link_type}") or self.classes.get(OpClass.COMM, ClassParams())


IDEAL = Efficiency("ideal", "datasheet ceilings, no efficiency losses or overheads", {}, tiles=False)


# What a calibration file (or a default-table entry) may say, with the physical range of each parameter.
PARAM_RANGES = {   # name -> (low, high, low excluded, meaning)
    "compute_eff": (0.0, 1.0, True, "a fraction of the dense peak"),
    "memory_eff": (0.0, 1.0, True, "a fraction of the bandwidth"),
    "overhead_s": (0.0, 0.1, False, "seconds per kernel (launch and tail are microseconds)"),
    "smooth": (0.0, 64.0, False, "(0: the max of compute and memory time; >= 1: a p-norm exponent)"),
}
MAX_KERNEL_GAP_S = 0.01          # 10 ms idle between kernels: beyond any real launch gap (1-10 us)
CALIBRATION_KEYS = ("gpu", "arch", "provenance", "kernel_gap_s", "classes", "kernel_models", "calibration")


def class_names() -> tuple[str, ...]:
    """The op classes a calibration may set: every OpClass, and comm_<link type> for collectives."""
    from ..specs.hardware import LINK_TYPES
    return tuple(c.value for c in OpClass) + tuple(f"{OpClass.COMM}_{t}" for t in LINK_TYPES)


def _class_params(values, where: str) -> ClassParams:
    from ..specs.checks import number
    if not isinstance(values, dict):
        raise WhatifError(f"{where}: expected a mapping of parameters; valid: {', '.join(PARAM_RANGES)}")
    unknown = [k for k in values if k not in PARAM_RANGES]
    if unknown:
        raise WhatifError(f"{where}: unknown parameter {shown(unknown[0])}; valid: {', '.join(PARAM_RANGES)}")
    checked = {}
    for key, value in values.items():
        low, high, open_low, meaning = PARAM_RANGES[key]
        checked[key] = number(value, f"{where}.{key}", low, high, meaning, low_open=open_low)
    if 0 < checked.get("smooth", 0.0) < 1:
        raise WhatifError(f"{where}.smooth: {checked['smooth']:g} is out of range; valid: 0 (max of compute and "
                          f"memory time) or an exponent >= 1")
    return ClassParams(**checked)


def _params_from(raw: dict, where: str) -> dict[str, ClassParams]:
    valid = class_names()
    out = {}
    for cls, values in raw.items():
        if cls not in valid:
            raise WhatifError(f"{where}: unknown op class {shown(cls)}{closest(cls, valid)}; valid: {', '.join(valid)}")
        out[cls] = _class_params(values, f"{where}.{cls}")
    return out


def efficiency_from_mapping(data: dict, source: str, where: str) -> Efficiency:
    from ..specs.checks import number
    classes = data.get("classes")
    if not isinstance(classes, dict):
        raise WhatifError(f"{where}: missing 'classes' mapping")
    gap = number(data.get("kernel_gap_s", 0.0), f"{where}.kernel_gap_s", 0.0, MAX_KERNEL_GAP_S, "seconds")
    provenance = data.get("provenance", where)
    if not isinstance(provenance, str):
        raise WhatifError(f"{where}.provenance: {shown(provenance)}; say in text what the parameters were fitted on")
    return Efficiency(source, provenance, _params_from(classes, f"{where}.classes"), tiles=True, kernel_gap_s=gap)


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
    else:   # nearest architecture by generation (a CDNA GPU: its family's named NVIDIA stand-in)
        from .kernel_models import cdna
        target = cdna.stand_in(gpu.arch) if cdna.is_cdna(gpu.arch) else gpu.arch
        name = min(table, key=lambda n: abs(ARCHS.index(table[n]["arch"]) - ARCHS.index(target)))
        arch = table[name]["arch"]
        prefix = (f"transferred from {name} (same {arch} architecture): " if arch == gpu.arch
                  else f"assumed: no {gpu.arch} fit; borrowed from {name} ({arch}): ")
    eff = efficiency_from_mapping(table[name], "default", f"{DEFAULT_FILE.name}:{name}")
    engine = check_engine(engine)
    from .kernel_timing import kernel_provenance
    provenance = (f"engine {engine} kernel models: {kernel_provenance(gpu, engine)}; "
                  f"other ops (and vLLM's MLA prefill): {prefix}{eff.provenance}")
    return Efficiency("default", provenance, eff.classes, True, eff.kernel_gap_s, engine=engine)



def calibrated_efficiency(gpu, path: str | None) -> Efficiency:
    """The calibration file's parameters, every one checked (known classes and keys, physical ranges), for the
    GPU the file names (`gpu:` is required: a calibration transfers to no other GPU)."""
    if path is None:
        raise WhatifError("--efficiency calibrated needs --calibration FILE (a YAML with gpu, provenance and "
                          "classes, as one entry of whatif/roofline/data/efficiency_default.yaml)")
    if not isinstance(path, str) or not path.strip():
        raise WhatifError(f"--calibration: {shown(path)} must be a file path")
    data = read_yaml(Path(path))
    where = str(path)
    check_mapping(data, CALIBRATION_KEYS, where)
    eff = efficiency_from_mapping(data, "calibrated", where)
    if "gpu" not in data:
        raise WhatifError(f"{where}: missing field 'gpu' (the GPU profile the parameters were fitted on, e.g. "
                          f"gpu: {gpu.name})")
    if data["gpu"] != gpu.name:
        raise WhatifError(f"{where}: calibration is for GPU {shown(data['gpu'])}, not '{gpu.name}'")
    if data.get("kernel_models"):   # kernel models fitted on the user's rows; the rest keep the default's fits
        from .kernel_models.params import kernel_params_from
        from dataclasses import replace
        eff = replace(eff, engine=DEFAULT_ENGINE,
                      kernel_params=kernel_params_from(data["kernel_models"], f"{where}.kernel_models"))
    return eff


def _check_calibration_file(path) -> None:
    """The checks of calibrated_efficiency that need no GPU: the file reads and its fields are valid."""
    from ..specs.checks import is_file
    if not isinstance(path, str) or not path.strip():
        raise WhatifError(f"--calibration: {shown(path)} must be a file path")
    if not is_file(path, "--calibration"):
        raise WhatifError(f"--calibration: no such file {shown(path)}")
    data = read_yaml(Path(path))
    check_mapping(data, CALIBRATION_KEYS, str(path))
    efficiency_from_mapping(data, "calibrated", str(path))


def efficiency_source(source: str | None, calibration: str | None) -> str:
    """The efficiency source to use: a calibration file alone implies 'calibrated' (said on stderr, so that the
    file is never silently ignored); a calibration file with another source is an error."""
    if calibration is None:
        return source or "default"
    if source is None:
        import sys
        _check_calibration_file(calibration)   # a bad file's error alone, not after the note
        print("note: --calibration given: using --efficiency calibrated", file=sys.stderr)
        return "calibrated"
    if source != "calibrated":
        raise WhatifError(f"--calibration: applies only to --efficiency calibrated, not {shown(source)}; "
                          f"drop one of them")
    return source


def load_efficiency(source: str, gpu, calibration: str | None = None, engine: str = DEFAULT_ENGINE) -> Efficiency:
    """`engine` picks whose kernel fits the default model uses (ideal and calibrated ignore it)."""
    if source == "ideal":
        return IDEAL
    if source == "default":   # (a release's GEMMs as measured in its era's layers: era_gemm_fits.py)
        from .era_gemm_fits import with_engine_gemm_fits
        return with_engine_gemm_fits(default_efficiency(gpu, engine), gpu.name, engine)
    if source == "calibrated":
        return calibrated_efficiency(gpu, calibration)
    raise WhatifError(f"--efficiency: '{source}' is not valid; valid: {', '.join(SOURCES)}")
