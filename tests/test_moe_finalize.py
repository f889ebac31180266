"""The TRTLLM-Gen NVFP4 MoE's finalize pass and per-GEMM form (kernel_models/moe.FINALIZE_FITS, session 63 F): the fit
(validate/moe_fit) and the serving path (kernel_timing.expert_gemm_seconds) price the fused layer the same way: each
grouped GEMM its own ridge, the down GEMM's bf16 per-slot output written and read back (4 B a slot-element)."""
from dataclasses import replace

import pytest

from whatif.roofline.kernel_models import moe
from whatif.roofline.kernel_models.fitted_roofline import RooflineParams
from whatif.roofline.kernel_timing import expert_gemm_seconds
from whatif.roofline.ops import gemm
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole

B200 = load_system("b200").gpu
SHAPE = dict(tokens=8192, hidden=7168, inter=2048, topk=8, experts=256, tp=4, ep=1, distribution="balanced",
             peak=9e15, hbm=8e12, w_bytes=0.5625, a_bytes=0.5625)


@pytest.mark.parametrize("l2_bytes", (0.0, 1e12))   # streamed from HBM, and L2-resident
def test_the_two_gemms_sum_to_the_layer(l2_bytes):
    whole = moe.moe_ideal_times(**SHAPE, l2_bytes=l2_bytes)
    parts = moe.moe_gemm_ideal_times(**SHAPE, l2_bytes=l2_bytes)
    assert len(parts) == 2 and parts[0][0] == pytest.approx(2 * parts[1][0])   # gate+up: twice the down's flops
    for i in range(3):
        assert sum(p[i] for p in parts) == pytest.approx(whole[i], rel=1e-12)


def test_the_serving_form_is_the_joint_form_only_at_a_linear_ridge():
    """At smooth 1 one ridge of the layer and a ridge per GEMM agree; above it they differ: why the fp4 fits are
    fitted in the serving (per-GEMM) form."""
    parts = moe.moe_gemm_ideal_times(**SHAPE)
    whole = moe.moe_ideal_times(**SHAPE)
    for smooth, same in ((1.0, True), (4.0, False)):
        p = RooflineParams(1e-5, 0.5, 0.7, smooth, item_s=0.0, l2_speedup=2.0)
        joint, split = float(moe.moe_time(*whole, p)), float(moe.split_moe_time(parts, p))
        assert (split == pytest.approx(joint, rel=1e-9)) is same


def down_op(rows: float, experts: int = 32, dtype: str = "fp4"):
    base = gemm("experts_down", rows, 7168, 256, 0.5625, 0.5625, dtype, role=OpRole.EXPERT_DOWN)
    return replace(base, shape=replace(base.shape, groups=float(experts), grid_m=rows / 16))


def test_the_serving_down_gemm_charges_the_finalize_pass_as_the_fit_does():
    op = down_op(8192.0)
    t, t_c, t_m, fixed = expert_gemm_seconds(op, B200, engine="sglang")
    p = moe.moe_params("blackwell", "fp4", "sglang")
    fin = moe.finalize_seconds(8192.0, 7168, B200.hbm_bandwidth.value, "sglang", "fp4")
    assert fin == pytest.approx(8192 * 7168 * 4.0 / B200.hbm_bandwidth.value)
    assert t == pytest.approx(fixed + float(moe.fused_gemm_time(t_c, t_m - fin / p.memory_eff, fin, p)))
    assert t_m > fin / p.memory_eff > 0
    # the gate+up GEMM, the small-M (decode) regime and kernels without the bf16 round trip charge none
    assert moe.finalize_seconds(8192.0, 7168, 8e12, "sglang", "bf16") == 0.0
    up = replace(down_op(8192.0), role=OpRole.EXPERT_UP, name="experts_up")
    assert expert_gemm_seconds(up, B200, engine="sglang")[2] < t_m
    small = down_op(32 * moe.SMALL_M)
    t_s, t_cs, t_ms, fixed_s = expert_gemm_seconds(small, B200, engine="sglang")
    p_s = moe.moe_params("blackwell", "fp4", "sglang", "small")   # (the regime the 16 rows an expert take)
    assert t_s == pytest.approx(fixed_s + float(moe.fused_gemm_time(t_cs, t_ms, 0.0, p_s)))
