"""Expert GEMMs no fused-MoE fit covers, past the decode regime, are priced by the engine's fitted dense GEMM model at
their tile-padded rows (kernel_timing.dense_expert_seconds); decode-size ones keep the per-class model."""
from dataclasses import replace

import pytest

from whatif.roofline import kernel_timing as kt
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.op_shapes import GemmShape
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole

B200 = load_system("b200").gpu
H100 = load_system("h100-sxm").gpu


def expert_op(rows_per_expert: float, dtype: str, experts: int = 32, n: int = 4096, k: int = 7168):
    base = gemm("experts", rows_per_expert * experts, n, k, 1, 1, dtype, role=OpRole.EXPERT_UP)
    return replace(base, shape=replace(base.shape, groups=float(experts)))


@pytest.mark.parametrize("gpu,dtype", ((B200, "fp8"), (B200, "fp4"), (H100, "fp8")))
def test_prefill_experts_take_the_dense_fit_decode_ones_stay_per_class(gpu, dtype):
    assert not kt.covers(expert_op(8, dtype), gpu, "trtllm")   # <= SMALL_M rows an expert: per-class
    op = expert_op(100, dtype)   # 100 rows an expert: padded to 128 (tile_m)
    assert kt.covers(op, gpu, "trtllm")
    dense = replace(op, shape=GemmShape(128 * 32, 4096, 7168))
    assert kt.op_seconds(op, gpu, "trtllm") == kt.gemm_seconds(dense, gpu, "trtllm")
    eff = load_efficiency("default", gpu, engine="trtllm")
    assert time_op(op, gpu, eff, None).time_s == kt.op_seconds(op, gpu, "trtllm")[0]


def test_experts_with_a_fused_moe_fit_keep_it():
    op = expert_op(100, "fp8")
    fused = kt.expert_gemm_seconds(op, B200, engine="sglang")
    assert kt.op_seconds(op, B200, "sglang") == fused


def test_off_restores_the_per_class_model(monkeypatch):
    monkeypatch.setattr(kt, "DENSE_FIT_EXPERTS", False)
    assert not kt.covers(expert_op(100, "fp8"), H100, "trtllm")


def test_large_prefill_experts_are_no_faster_than_the_per_class_price():
    """The dense fit's large-M efficiency sits below the per-class model's assumed one (the corpus's moe rows at 8k-16k
    tokens measure 2-7x the per-class price, docs/accuracy.md): the new price is higher there."""
    op = expert_op(512, "fp4", experts=256)
    eff = load_efficiency("default", B200, engine="trtllm")
    dense_s = time_op(op, B200, eff, None).time_s
    kt_off = replace(eff, engine=None)   # (no kernel models: the per-class model)
    assert dense_s > time_op(op, B200, kt_off, None).time_s
