"""block_promotion.DENSE_SERIAL_PROMOTION: a dense block-scaled fp8 GEMM pays the serial K-block promotion only where
the (engine, architecture) is named; empty by default (session 75 A: DeepGEMM runs block scales at per-tensor speed)."""
from dataclasses import replace

from whatif.roofline import block_promotion as bp
from whatif.roofline import kernel_timing as kt
from whatif.roofline.ops import gemm
from whatif.specs.hardware import load_system

H100 = load_system("h100-sxm").gpu
B200 = load_system("b200").gpu


def dense_op(block_scaled: bool):
    return replace(gemm("qkv", 8192, 4096, 7168, 1, 1, "fp8"), block_scaled=block_scaled)


def test_by_default_a_dense_block_scaled_gemm_runs_at_per_tensor_speed():
    assert bp.DENSE_SERIAL_PROMOTION == frozenset()
    for gpu in (H100, B200):
        assert kt.op_seconds(dense_op(True), gpu, "trtllm") == kt.op_seconds(dense_op(False), gpu, "trtllm")


def test_a_named_engine_and_architecture_adds_the_promotion_there_only(monkeypatch):
    monkeypatch.setattr(bp, "DENSE_SERIAL_PROMOTION", frozenset({("trtllm", "hopper")}))
    plain, block = kt.op_seconds(dense_op(False), H100, "trtllm")[0], kt.op_seconds(dense_op(True), H100, "trtllm")[0]
    promotion = 8192 * 4096 * (7168 // 128) * bp.PROMOTION_OPS / H100.peak_flops("fp32")
    assert block > plain + 0.5 * promotion   # compute-bound at 8k rows: most of it shows
    assert kt.op_seconds(dense_op(True), H100, "sglang") == kt.op_seconds(dense_op(False), H100, "sglang")
    assert kt.op_seconds(dense_op(True), B200, "trtllm") == kt.op_seconds(dense_op(False), B200, "trtllm")
    assert kt.op_seconds(dense_op(False), H100, "trtllm")[0] == plain   # per-tensor fp8 never pays it
