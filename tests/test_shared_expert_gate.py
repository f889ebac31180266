"""Qwen's gated shared expert (MoESpec.shared_expert_gate, roofline/moe.shared_expert_gate_ops): after the shared
expert's down GEMM the engines run the gate GEMV (hidden x 1, unquantized), its sigmoid, the scale and the add to the
routed output (sglang models/qwen2_moe.py Qwen2MoeSparseMoeBlock.forward), each a kernel of every MoE layer."""
import json

import pytest

from whatif.api import estimate
from whatif.specs.models import spec_from_hf_config
from whatif.specs.op_kinds import OpRole

GATE_OPS = ("shared_expert_gate", "shared_expert_sigmoid", "shared_expert_scale", "shared_expert_add")


def decode_ops(model: str, batch: int = 4, **kw) -> dict:
    """{op name: (instances, seconds, an op)} of a TP8 B200 SGLang decode step of `batch` sequences."""
    e = estimate(model, "dgx-b200", tp=8, gpus=8, batch=batch, prompt=1024, output=2, kernel_engine="sglang",
                 with_max_batch=False, **kw).estimate
    out: dict = {}
    for t in e.decode.op_times:
        n, s, _ = out.get(t.op.name, (0, 0.0, None))
        out[t.op.name] = (n + t.op.count, s + t.total_s, t.op)
    return out


@pytest.mark.parametrize("quant", ({}, {"quantization": "fp8", "kv_dtype": "fp8"}))
def test_every_qwen35_moe_layer_runs_the_gate_ops_and_the_gate_stays_16_bit(quant):
    ops = decode_ops("Qwen/Qwen3.5-397B-A17B", **quant)
    for name in GATE_OPS:
        count, seconds, op = ops[name]
        assert count == 60 and seconds > 0 and op.role == OpRole.SHARED_EXPERT_GATE   # 60 MoE layers
    gate = ops["shared_expert_gate"][2]
    assert (gate.shape.n, gate.shape.k, gate.dtype) == (1, 4096, "bf16")
    assert "shared_expert_gate_group_quant" not in ops   # no block-scale input quantize for an unquantized GEMV


def test_a_shared_expert_without_a_gate_runs_only_the_add():
    ops = decode_ops("deepseek-ai/DeepSeek-V3")
    assert "shared_expert_down" in ops and not any(name in ops for name in GATE_OPS[:-1])
    assert ops["shared_expert_add"][2].role == OpRole.SHARED_EXPERT_ADD


@pytest.mark.parametrize("shared, gated", ((0, False), (256, True)))
def test_the_qwen_reader_gates_a_shared_expert_when_there_is_one(tmp_path, shared, gated):
    cfg = dict(model_type="qwen2_moe", hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
               num_key_value_heads=2, intermediate_size=512, vocab_size=1000, max_position_embeddings=4096,
               num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128,
               shared_expert_intermediate_size=shared)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    m = spec_from_hf_config(path)
    assert m.moe.shared_expert_gate is gated and m.moe.shared_experts == (1 if shared else 0)
