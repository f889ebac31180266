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


def test_block_scaled_experts_add_their_serial_promotion(monkeypatch):
    """block_promotion.py: a block-scaled fp8 grouped GEMM priced by the dense fit adds PROMOTION_OPS CUDA-core ops per
    output per 128-deep K block at the fp32 peak, serial with the tensor cores; per-tensor fp8
    and the switch off don't."""
    from whatif.roofline import block_promotion as bp
    plain = expert_op(512, "fp8", experts=256)
    block = replace(plain, block_scaled=True)
    t_plain, t_block = kt.op_seconds(plain, H100, "trtllm")[0], kt.op_seconds(block, H100, "trtllm")[0]
    promotion = 512 * 256 * 4096 * (7168 // 128) * bp.PROMOTION_OPS / H100.peak_flops("fp32")
    assert t_block > t_plain + 0.5 * promotion   # compute-bound: most of it shows (the ridge blends the rest)
    assert t_block < 2.5 * t_plain
    monkeypatch.setattr(bp, "SERIAL_PROMOTION", False)
    assert kt.op_seconds(block, H100, "trtllm")[0] == t_plain


def test_the_promotion_constant_is_the_h100_pairs_and_b200_agrees():
    """PROMOTION_OPS is the median of H100's paired rows (benchmarks/block_fp8_promotion.py); B200's held-out pairs
    give a value within 10% of it (the mechanism transfers across GPUs)."""
    import importlib.util
    from pathlib import Path
    corpus = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "moe.parquet"
    if not corpus.exists() or importlib.util.find_spec("pandas") is None:
        pytest.skip("needs the shared corpus")
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import block_fp8_promotion as b
    from whatif.roofline.block_promotion import PROMOTION_OPS
    med = {g: b.pairs(g).query(f"rows_per_expert > {b.COMPUTE_ROWS}").ops.median() for g in b.PAIRS}
    assert abs(med["h100_sxm"] - PROMOTION_OPS) < 0.05
    assert abs(med["b200_sxm"] / PROMOTION_OPS - 1) < 0.10
