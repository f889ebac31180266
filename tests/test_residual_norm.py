"""The residual add folded into the RMSNorm after it (kernels.fused_add_rmsnorm, roofline/residual_norm.py):
TensorRT-LLM's RMSNorm.forward(hidden, residual) runs FlashInfer's fused_add_rmsnorm, one kernel that reads the
hidden state and the residual and writes both. Checked on the ops (which go, what the fused op streams), on a pass's
kernel count and time, against engines without it, and as a bad profile value."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Precision
from whatif.roofline.context import pass_context
from whatif.roofline.engine_kernels import engine_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.graph import pass_ops
from whatif.roofline.ops import OpClass
from whatif.roofline.residual_norm import residual_norm_fused
from whatif.scenario import Scenario
from whatif.specs.engines import VERSION_DIR, engine_from_mapping
from whatif.specs.op_kinds import OpRole
from whatif.specs.profiles import read_yaml

BF16 = Precision("bf16", "bf16", "bf16")
ADDS = (OpRole.ATTN_RESIDUAL, OpRole.MLP_RESIDUAL)
NORMS = (OpRole.POST_ATTN_NORM, OpRole.INPUT_NORM)


def model_ops(model: str, tp: int, batch: ForwardBatch):
    sc = Scenario(model=model, hardware="h100-sxm", gpus=tp, precision=BF16)
    spec, _, par, _ = sc.resolve()
    return spec, pass_ops(pass_context(spec, batch, par, sc.precision, 0))


def by_role(ops, role):
    return [op for op in ops if op.role == role]


@pytest.mark.parametrize("batch", [ForwardBatch.decode(8, 1000), ForwardBatch.prefill(1, 2048)])
def test_trtllm_runs_each_residual_add_inside_the_norm_after_it(batch):
    """Qwen3-32B at TP 1 (no all-reduce to fuse them): two kernels fewer a layer; each norm now reads the hidden
    state and the residual and writes both (4 x 2 B an element and the weight row), the add's flops with it."""
    spec, ops = model_ops("Qwen/Qwen3-32B", 1, batch)
    run = engine_ops(ops, engine_spec("trtllm"), spec)
    assert all(by_role(ops, r) for r in ADDS) and not any(by_role(run, r) for r in ADDS)
    kernels = sum(op.count for op in ops if op.op_class != OpClass.TRANSFER)
    rope_kv = sum(op.count for op in ops if op.role in (OpRole.ROPE, OpRole.KV_WRITE))   # (the attention does them)
    assert sum(op.count for op in run if op.op_class != OpClass.TRANSFER) == kernels - rope_kv - 2 * spec.num_layers
    d, tokens = spec.hidden_size, batch.tokens
    for norm_role, add_role in zip(NORMS, ADDS):
        (before,), (add,), (after,) = by_role(ops, norm_role), by_role(ops, add_role), by_role(run, norm_role)
        assert after.hbm_bytes == pytest.approx(tokens * d * 4 * 2 + d * 2)
        assert after.hbm_bytes == pytest.approx(before.hbm_bytes + add.hbm_bytes * 2 / 3)   # the sum's re-read goes
        assert after.flops == before.flops + add.flops and after.count == before.count


def test_engines_without_the_fused_kernel_keep_both_ops():
    """vLLM's profile does not set it (not mapped here), nor TensorRT-LLM's TensorRT-engine flow; SGLang's does
    (RMSNorm.forward_cuda: sgl_kernel fused_add_rmsnorm), and TensorRT-LLM's PyTorch flow under its other launches."""
    batch = ForwardBatch.decode(8, 1000)
    spec, ops = model_ops("Qwen/Qwen3-32B", 1, batch)
    for name in ("vllm", "trtllm-engine", "sglang-0.3"):
        run = engine_ops(ops, engine_spec(name), spec)
        assert all(by_role(run, r) for r in ADDS), name
    for name in ("sglang", "sglang-0.5", "trtllm-pdl"):
        assert not any(by_role(engine_ops(ops, engine_spec(name), spec), r) for r in ADDS), name


def test_a_tp_all_reduce_that_already_fuses_leaves_nothing_to_fold():
    """Llama-3.1-70B at TP 2, decode: the all-reduces add the residual and norm (allreduce_fused); the ops are
    the same with or without fused_add_rmsnorm."""
    spec, ops = model_ops("llama-3.1-70b", 2, ForwardBatch.decode(8, 1000))
    run = engine_ops(ops, engine_spec("trtllm"), spec)
    assert not any(by_role(run, r) for r in ADDS + NORMS)
    assert residual_norm_fused(run, spec) == run


def test_a_layernorm_model_is_left_alone():
    """The fused kernel is RMSNorm's: a LayerNorm model keeps its residual adds."""
    spec, ops = model_ops("Qwen/Qwen3-32B", 1, ForwardBatch.decode(8, 1000))
    assert residual_norm_fused(ops, replace(spec, norm="layernorm")) == ops
    assert residual_norm_fused(ops, None) == ops


def test_the_pass_is_faster_in_decode():
    """One launch gap and one kernel overhead fewer for each pair outweigh the residual's bytes at decode sizes."""
    from whatif.roofline.efficiency import default_efficiency
    from whatif.roofline.timing import time_op
    gpu = Scenario(model="Qwen/Qwen3-32B", hardware="h100-sxm", gpus=1).resolve()[1].gpu
    eff = default_efficiency(gpu, "trtllm")
    spec, ops = model_ops("Qwen/Qwen3-32B", 1, ForwardBatch.decode(8, 1000))

    def seconds(o):
        return sum(time_op(op, gpu, eff).total_s + op.count * eff.kernel_gap_s for op in o
                   if op.role in ADDS + NORMS)
    assert seconds(engine_ops(ops, engine_spec("trtllm"), spec)) < seconds(ops)


def test_a_bad_fused_add_rmsnorm_names_the_field():
    data = read_yaml(VERSION_DIR.parent / "trtllm.yaml")
    data["kernels"]["fused_add_rmsnorm"] = {**data["kernels"]["fused_add_rmsnorm"], "value": "yes"}
    with pytest.raises(WhatifError, match="fused_add_rmsnorm"):
        engine_from_mapping(data, "bad.yaml")
