"""Kernels of the decode step read at the engines' sources in session 68 C: Qwen3's per-head q/k RMSNorm, one kernel
over q and k before RoPE (roofline/graph.qk_head_norm; TensorRT-LLM fused_qk_norm_rope, SGLang `_apply_qk_norm`), and
TensorRT-LLM's NVFP4 TRTLLM-Gen MoE, which leaves its experts unfinalized at <= 128 tokens and finalizes them and adds
the shared expert's output in the all-reduce (engine_kernels.moe_finalize_fused; modeling_deepseekv3.py do_finalize)."""
import pytest

from tests.test_shared_expert_gate import decode_ops
from whatif.api import estimate
from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.specs.kernel_options import kernel_options
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole


def test_qwen3_families_norm_each_head_and_others_do_not():
    assert load_model("qwen3-32b").qk_head_norm and load_model("qwen3-235b-a22b").qk_head_norm
    assert load_model("qwen3.5-397b-a17b").qk_head_norm
    assert not load_model("llama-3.1-8b").qk_head_norm
    assert not load_model("minimax-m2.5").qk_head_norm   # its norm spans the whole q and k (qk_layer_norm)


def test_the_head_norm_reads_and_writes_this_gpus_q_and_k_heads_once_a_full_attention_layer():
    ops = decode_ops("Qwen/Qwen3-32B", batch=8)   # 64 heads, 8 KV heads of 128 over TP8
    count, seconds, op = ops["qk_head_norm"]
    assert count == 64 and seconds > 0 and op.role == OpRole.QK_HEAD_NORM
    assert op.shape.elements == 8 * (8 + 1) * 128
    assert op.hbm_bytes == pytest.approx(8 * 9 * 128 * 2 * 2.0 + 2 * 128 * 2.0)   # (+ the two weight rows)
    assert decode_ops("Qwen/Qwen3.5-397B-A17B")["qk_head_norm"][0] == 15   # its 15 gated full-attention layers
    assert "qk_head_norm" not in decode_ops("deepseek-ai/DeepSeek-V3")


def trtllm_ops(batch: int, moe_kernels: str | None = "trtllm-gen", quant: str = "nvfp4", **kw) -> dict:
    """{op name: (instances, an op)} of a TP8 B200 TensorRT-LLM DeepSeek-R1 decode step of `batch` sequences."""
    e = estimate("deepseek-ai/DeepSeek-R1", "dgx-b200", tp=8, gpus=8, batch=batch, prompt=1024, output=2,
                 kernel_engine="trtllm", quantization=quant, kv_dtype="fp8", moe_kernels=moe_kernels,
                 with_max_batch=False, **kw).estimate
    out: dict = {}
    for t in e.decode.op_times:
        n, _ = out.get(t.op.name, (0, None))
        out[t.op.name] = (n + t.op.count, t.op)
    return out


def test_nvfp4_trtllm_gen_moe_adds_the_shared_output_in_its_all_reduce_up_to_128_tokens():
    fused, apart = trtllm_ops(128), trtllm_ops(129)
    assert "shared_expert_add" not in fused and apart["shared_expert_add"][0] == 58
    # the fused all-reduce reads the shared output instead (one 16-bit hidden state a token)
    unfused = trtllm_ops(128, moe_kernels=None)
    assert unfused["shared_expert_add"][0] == 58
    extra = fused["mlp_allreduce"][1].hbm_bytes - unfused["mlp_allreduce"][1].hbm_bytes
    assert extra == pytest.approx(128 * 7168 * 2.0)


@pytest.mark.parametrize("kw", ({"moe_kernels": None}, {"quant": "fp8"}, {"engine": "sglang"}))
def test_other_kernels_precisions_and_engines_keep_the_add(kw):
    if kw.get("engine"):
        assert decode_ops("deepseek-ai/DeepSeek-R1", quantization="nvfp4", moe_kernels="trtllm-gen",
                          kv_dtype="fp8")["shared_expert_add"][0] == 58
        return
    assert trtllm_ops(4, **kw)["shared_expert_add"][0] == 58


def test_the_finalize_fusion_is_trtllms_and_needs_its_moe_kernels():
    assert engine_spec("trtllm").moe_finalize_allreduce_max_tokens == 128
    assert engine_spec("sglang").moe_finalize_allreduce_max_tokens == 0
    assert engine_spec("trtllm").with_moe_kernels(None).moe_finalize_allreduce_max_tokens == 0
    assert engine_spec("trtllm").with_moe_kernels("trtllm-gen").moe_finalize_allreduce_max_tokens == 128


def test_a_bad_token_bound_names_its_field():
    with pytest.raises(WhatifError, match="moe_finalize_allreduce_max_tokens"):
        kernel_options({"moe_finalize_allreduce_max_tokens": -1}, "trtllm.kernels", lambda key: -1)
