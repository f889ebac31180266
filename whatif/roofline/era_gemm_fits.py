"""GEMMs of an engine release priced by the kernel model fitted on Vidur's in-layer timings of its era's layers.

Vidur's operator profiling (reference/vidur-profiling; microsoft/vidur vidur/profiling/mlp/mlp_impl.py) times
sarathi's ColumnParallelLinear / RowParallelLinear (sarathi.model_executor.parallel_utils.tensor_parallel.layers,
the vLLM 0.2-era tensor-parallel layers) run eagerly inside one transformer layer, on an A100-SXM4-80GB and an H100.
The GEMM kernel model `whatif validate calibrate` fitted on its training models is committed per GPU
(validate/measurements/<gpu>/calibration.yaml, `kernel_models`); its compute-bound GEMMs run 12-16% slower than
the shipped fits from aiconfigurator's newer engines (docs/accuracy.md, "Against Vidur's timings"). An engine
profile with `kernels.gemm_fits: vidur` (vLLM 0.2.x) takes that model for its GEMMs on a GPU Vidur measured; every
other op keeps the engine's fits, and a GPU without such a file keeps them all.
"""
from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path

from ..specs.profiles import read_yaml
from .engines import engine_spec
from .kernel_models.params import kernel_params_from

# validate/measurements/<gpu>/calibration.yaml, read as a file (the roofline imports nothing from validate/)
MEASUREMENTS_DIR = Path(__file__).resolve().parents[1] / "validate" / "measurements"


@cache
def vidur_gemm_params(gpu_name: str) -> dict:
    """{(gemm, dtype): params} of the committed Vidur calibration of `gpu_name`; empty where Vidur measured none."""
    path = MEASUREMENTS_DIR / gpu_name / "calibration.yaml"
    if not path.is_file():
        return {}
    block = read_yaml(path).get("kernel_models") or {}
    return {k: v for k, v in kernel_params_from(block, f"{path}.kernel_models").items() if k[0] == "gemm"}


def with_era_gemm_fits(eff, gpu_name: str, source: str):
    """`eff` (an Efficiency) with its GEMMs by the `source` fit of `gpu_name` (the shipped default model only: a user's
    calibration or the ideal model is left as it is)."""
    if source != "vidur" or eff.source != "default" or not eff.engine:
        return eff
    params = vidur_gemm_params(gpu_name)
    if not params:
        return eff
    return replace(eff, kernel_params={**params, **eff.kernel_params},
                   provenance=f"{eff.provenance}; GEMMs: the kernel model fitted on Vidur's in-layer timings of the "
                              f"vLLM 0.2-era layers on {gpu_name} (validate/measurements/{gpu_name}/calibration.yaml)")


def with_engine_gemm_fits(eff, gpu_name: str, engine: str):
    """`eff` with the GEMM fit the engine profile `engine` names (kernels.gemm_fits), if any."""
    source = engine_spec(engine).gemm_fits
    return with_era_gemm_fits(eff, gpu_name, source) if source else eff
