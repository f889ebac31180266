"""vLLM 0.2.x's GEMMs are priced by the kernel model fitted on Vidur's in-layer timings of the vLLM 0.2-era
tensor-parallel layers (kernels.gemm_fits: vidur; roofline/era_gemm_fits.py) on a GPU Vidur measured; other
engines, other GPUs and a user's calibration keep their fits."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.roofline.era_gemm_fits import vidur_gemm_params, with_era_gemm_fits
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.scenario import Scenario
from whatif.specs.kernel_options import kernel_options


def _resolved(engine: str, hardware: str = "dgx-a100-80gb"):
    _, system, _, eff = Scenario(model="opt-13b", hardware=hardware, kernel_engine=engine).resolve()
    return system.gpu, eff


def _fc1(m: int):   # OPT-13B's fc1 at tp 1: m tokens x 5120 -> 20480, fp16
    return gemm("fc1", m, 20480, 5120, 2, 2, "fp16")


def test_vllm_0_2_profiles_take_vidurs_gemm_fit():
    assert engine_spec("vllm-0.2").gemm_fits == "vidur" and engine_spec("vllm-0.2-ray").gemm_fits == "vidur"
    assert engine_spec("vllm").gemm_fits == "" and engine_spec("sglang").gemm_fits == ""
    assert "mlp_impl.py" in engine_spec("vllm-0.2").sources["kernels.gemm_fits"]


def test_a_prefill_gemm_runs_slower_and_a_decode_gemm_about_the_same_on_the_a100():
    gpu, old = _resolved("vllm-0.2-ray")
    _, new = _resolved("vllm")
    assert ("gemm", "bf16") in old.kernel_params and "Vidur" in old.provenance
    assert ("gemm", "bf16") not in new.kernel_params
    prefill = time_op(_fc1(2048), gpu, old).time_s / time_op(_fc1(2048), gpu, new).time_s
    decode = time_op(_fc1(8), gpu, old).time_s / time_op(_fc1(8), gpu, new).time_s
    assert 1.05 < prefill < 1.35 and 0.85 < decode < 1.1


def test_a_gpu_vidur_did_not_measure_keeps_the_engines_fits():
    assert ("gemm", "bf16") in vidur_gemm_params("a100-sxm-80gb")
    assert vidur_gemm_params("b200") == {}
    _, eff = _resolved("vllm-0.2", "b200")
    assert ("gemm", "bf16") not in eff.kernel_params


def test_a_users_calibration_is_left_as_it_is():
    gpu, eff = _resolved("vllm")
    calibrated = replace(eff, source="calibrated")
    assert with_era_gemm_fits(calibrated, gpu.name, "vidur") is calibrated


def test_an_unknown_gemm_fit_source_is_a_one_line_error():
    with pytest.raises(WhatifError, match="gemm_fits"):
        kernel_options({"gemm_fits": "newer"}, "x.kernels", lambda k: "newer")
