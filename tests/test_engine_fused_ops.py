"""What an engine's kernels do beside the graph's ops (engine profile `kernels.attention_includes` and
`kernels.quantized_gemm_inputs`, roofline/engine_kernels.py fused_ops): TensorRT-LLM's attention operator applies
RoPE and appends the KV cache itself, and a GEMM whose fp8 input the kernel before it wrote runs no quantization
kernel. Each is checked on the ops, on their time, and as a bad profile value."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.context import pass_context
from whatif.roofline.engine_kernels import engine_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.graph import pass_ops
from whatif.roofline.kernel_timing import gemm_seconds
from whatif.specs.op_kinds import OpRole
from whatif.roofline.ops import OpClass
from whatif.scenario import Scenario
from whatif.specs.engines import engine_from_mapping
from whatif.specs.profiles import read_yaml
from whatif.specs.engines import VERSION_DIR, engine_mapping

FP8 = Precision("fp8", "fp8", "fp8")
DECODE = ForwardBatch.decode(8, 1000)
ADDS = {OpRole.ATTN_RESIDUAL, OpRole.MLP_RESIDUAL}   # TRT-LLM, SGLang: inside the next RMSNorm (residual_norm.py)


def ops_of(batch: ForwardBatch, tp: int = 2):
    sc = Scenario(model="llama-3.1-70b", hardware="h100-sxm", gpus=tp, precision=FP8)
    model, _, par, _ = sc.resolve()
    return pass_ops(pass_context(model, batch, par, sc.precision, 0))


def roles(ops) -> set:
    return {op.role for op in ops}


@pytest.mark.parametrize("batch", [ForwardBatch.decode(8, 1000), ForwardBatch.prefill(1, 2048)])
def test_trtllm_attention_does_the_rope_and_the_kv_append(batch):
    ops = ops_of(batch)
    assert {OpRole.ROPE, OpRole.KV_WRITE} <= roles(ops)
    for name in ("trtllm", "trtllm-engine", "trtllm-0.6"):
        run = engine_ops(ops, engine_spec(name))
        assert not {OpRole.ROPE, OpRole.KV_WRITE} & roles(run), name
        assert len(run) == len(ops) - 2, name            # nothing else dropped
    assert roles(engine_ops(ops, engine_spec("vllm"))) == roles(ops)   # vLLM runs its rotary kernel itself


def test_quantized_inputs_follow_the_engine_profile():
    ops = ops_of(ForwardBatch.decode(8, 1000))
    fp8_gemms = {op.role for op in ops if op.op_class == OpClass.GEMM and op.dtype == "fp8"}
    assert {OpRole.QKV_PROJ, OpRole.O_PROJ, OpRole.MLP_UP, OpRole.MLP_DOWN} <= fp8_gemms

    def marked(name):
        return {op.role for op in engine_ops(ops, engine_spec(name)) if op.input_quantized}
    assert marked("trtllm") == {OpRole.O_PROJ}          # PyTorch flow: attention writes o_proj's fp8 input
    assert marked("trtllm-engine") == fp8_gemms         # TensorRT engines: every Q layer fused into its producer
    assert marked("vllm") == set()
    assert not any(op.input_quantized for op in engine_ops(ops, engine_spec("trtllm-engine"))
                   if op.dtype != "fp8")


def test_a_quantized_input_drops_exactly_the_quantization_term():
    gpu = Scenario(hardware="h100-sxm").resolve()[1].gpu
    op = next(o for o in ops_of(ForwardBatch.decode(64, 1000)) if o.role == OpRole.QKV_PROJ)
    total, t_c, t_m, fixed = gemm_seconds(op, gpu, "trtllm")
    q_total, q_c, q_m, q_fixed = gemm_seconds(replace(op, input_quantized=True), gpu, "trtllm")
    assert (q_c, q_m) == (t_c, t_m)
    assert 0 < fixed - q_fixed == pytest.approx(total - q_total)
    bf16 = replace(op, dtype="bf16")
    assert gemm_seconds(replace(bf16, input_quantized=True), gpu, "trtllm") == gemm_seconds(bf16, gpu, "trtllm")


@pytest.mark.parametrize("key, value, message", [
    ("attention_includes", ["mlp_up"], "attention_includes: 'mlp_up' is not valid; valid: rope, kv_write"),
    ("attention_includes", "rope", "attention_includes: expected a list of op roles"),
    ("quantized_gemm_inputs", ["nope"], "quantized_gemm_inputs: 'nope' is not valid; valid: all,"),
])
def test_a_bad_kernels_value_names_the_field_and_what_is_valid(key, value, message):
    data = read_yaml(VERSION_DIR / "trtllm-engine.yaml")
    data["kernels"][key] = {**data["kernels"][key], "value": value}
    with pytest.raises(WhatifError, match=message):
        engine_from_mapping(data, "bad.yaml")


def test_an_mla_model_keeps_its_kv_write_ops():
    """The MLA operator has its own fit, whose coverage of the cache append is not established: its ops stay."""
    sc = Scenario(model="deepseek-v3", hardware="dgx-h100", gpus=8, parallel=Parallelism(tp=8))
    model, _, par, _ = sc.resolve()
    ops = pass_ops(pass_context(model, ForwardBatch.decode(8, 1000), par, sc.precision, 0))
    assert OpRole.KV_WRITE in roles(ops)
    assert roles(engine_ops(ops, engine_spec("trtllm"))) == roles(ops)


def model_ops(model: str, tp: int, precision: Precision = FP8, batch: ForwardBatch = DECODE):
    sc = Scenario(model=model, hardware="h100-sxm", gpus=tp, precision=precision)
    spec, _, par, _ = sc.resolve()
    return spec, pass_ops(pass_context(spec, batch, par, sc.precision, 0))


def test_trtllm_fuses_each_tp_all_reduce_with_the_residual_the_next_norm_and_its_quantize():
    """TensorRT-LLM's LlamaDecoderLayer (hidden > 4096, TP): the all-reduces add the residual, apply the next
    RMSNorm and write the next GEMM's fp8 input; the kernels they replace do not run."""
    spec, ops = model_ops("llama-3.1-70b", 2)
    fused = engine_ops(ops, engine_spec("trtllm"), spec)
    gone = {OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM}
    assert gone <= roles(ops) and not gone & roles(fused)
    assert len(fused) == len(ops) - 4 - 2   # (and the attention operator's RoPE and KV write)
    assert {op.role for op in fused if op.input_quantized} == {OpRole.QKV_PROJ, OpRole.O_PROJ, OpRole.MLP_UP}
    # each fused all-reduce streams the residual in and out and writes the fp8 input: 5 B per 16-bit element
    reduces = [op for op in fused if op.role in (OpRole.ATTN_ALLREDUCE, OpRole.MLP_ALLREDUCE)]
    assert len(reduces) == 2 and all(op.bytes["hbm"] == op.shape.bytes / 2 * 5 for op in reduces)
    assert engine_ops(ops, engine_spec("vllm"), spec) == ops   # vLLM runs them as the graph has them
    # a prefill of 2048 tokens all-reduces 33.5 MB, past the 16 MB workspace at TP 2: NCCL, then the ops unfused
    spec, ops = model_ops("llama-3.1-70b", 2, batch=ForwardBatch.prefill(1, 2048))
    fused = engine_ops(ops, engine_spec("trtllm"), spec)
    # (each residual add then runs inside the RMSNorm after it, FlashInfer's fused_add_rmsnorm: test_residual_norm.py)
    assert roles(fused) == roles(ops) - {OpRole.ROPE, OpRole.KV_WRITE} - ADDS
    assert not any(op.hbm_bytes for op in fused if op.op_class == OpClass.COMM)
    # no TP all-reduce (TP 1), or a hidden size of 4096 (Llama-3.1-8B): nothing fused beyond the attention operator
    # and the residual adds folded into their norms
    for model, tp in (("llama-3.1-70b", 1), ("llama-3.1-8b", 2)):
        spec, ops = model_ops(model, tp)
        assert roles(engine_ops(ops, engine_spec("trtllm"), spec)) == roles(ops) - {OpRole.ROPE, OpRole.KV_WRITE} - ADDS


def test_trtllm_fuses_gpt_oss_all_reduces_at_any_hidden_size():
    """modeling_gpt_oss.py TransformerBlock.forward_tp fuses both TP all-reduces with RESIDUAL_RMS_NORM (no hidden
    size condition): gpt-oss-120b (hidden 2880) at TP 2 runs no residual or norm kernel beside them; Llama-3.1-8B
    (4096) still runs its own (the per-family threshold)."""
    bf16 = Precision("bf16", "bf16", "bf16")
    spec, ops = model_ops("gpt-oss-120b", 2, bf16)
    fused = engine_ops(ops, engine_spec("trtllm"), spec)
    gone = {OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM}
    assert gone <= roles(ops) and not gone & roles(fused)
    spec, ops = model_ops("llama-3.1-8b", 2)
    assert gone - ADDS <= roles(engine_ops(ops, engine_spec("trtllm"), spec))   # (its adds inside its norms)


def test_trtllm_fuses_qwen3_moe_all_reduces_but_not_dense_qwen3s():
    """modeling_qwen3_moe.py Qwen3MoEDecoderLayer: PRE_/POST_MOE_FUSION with RESIDUAL_RMS_NORM at TP > 1 (no
    quantized output, so its block-FP8 GEMMs keep their own 1x128 quantize); modeling_qwen3.py's dense
    Qwen3DecoderLayer has no such fusion: Qwen3-32B keeps its residual and norm kernels."""
    gone = {OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM}
    spec, ops = model_ops("Qwen/Qwen3-235B-A22B-FP8", 4)
    fused = engine_ops(ops, engine_spec("trtllm"), spec)
    assert gone <= roles(ops) and not gone & roles(fused)
    assert len(fused) == len(ops) - 4 - 2   # (and the attention operator's RoPE and KV write)
    spec, ops = model_ops("Qwen/Qwen3-32B", 2)
    assert gone - ADDS <= roles(engine_ops(ops, engine_spec("trtllm"), spec))   # (its adds inside its norms)


def test_a_per_family_min_hidden_size_must_name_a_listed_family():
    data = read_yaml(VERSION_DIR.parent / "trtllm.yaml")
    data["kernels"]["allreduce_norm_fusion"] = {**data["kernels"]["allreduce_norm_fusion"],
                                                "value": {"families": ["llama"], "min_hidden_size": {"qwen3": 1}}}
    with pytest.raises(WhatifError, match="min_hidden_size: 'qwen3' is not in families; valid: llama"):
        engine_from_mapping(data, "bad.yaml")


def test_a_bad_allreduce_norm_fusion_names_the_field():
    data = read_yaml(VERSION_DIR.parent / "trtllm.yaml")
    data["kernels"]["allreduce_norm_fusion"] = {**data["kernels"]["allreduce_norm_fusion"], "value": {"families": []}}
    with pytest.raises(WhatifError, match="allreduce_norm_fusion: expected a mapping with families"):
        engine_from_mapping(data, "bad.yaml")


def test_a_static_input_scale_prices_the_scaling_kernel_not_the_fitted_dynamic_quantizer():
    """TensorRT-LLM's fp8 GEMMs with a checkpoint input_scale run static_quantize_e4m3_per_tensor alone; the
    corpus's GEMM rows (no input_scale) time the dynamic quantizer, whose scale pass costs ~7-8 us at small m."""
    from whatif.roofline.kernel_models.quantize import quantize_seconds
    ops = ops_of(ForwardBatch.decode(8, 1000))
    marked = {op.role for op in engine_ops(ops, engine_spec("trtllm")) if op.static_input_scale}
    assert marked == {OpRole.QKV_PROJ, OpRole.MLP_UP, OpRole.MLP_DOWN}   # o_proj's input arrives quantized
    assert not any(op.static_input_scale for op in engine_ops(ops, engine_spec("vllm")))
    for hw in ("h100-sxm", "b200"):
        gpu = Scenario(hardware=hw).resolve()[1].gpu
        op = next(o for o in ops if o.role == OpRole.MLP_DOWN)
        total, t_c, t_m, fixed = gemm_seconds(op, gpu, "trtllm")
        s_total, s_c, s_m, s_fixed = gemm_seconds(replace(op, static_input_scale=True), gpu, "trtllm")
        q_fixed = gemm_seconds(replace(op, input_quantized=True), gpu, "trtllm")[3]
        assert (s_c, s_m) == (t_c, t_m)
        scale = quantize_seconds(int(op.shape.m), int(op.shape.k), gpu, "trtllm", compute_scale=False)
        assert s_fixed == pytest.approx(q_fixed + scale)
        assert q_fixed < s_fixed < fixed - 3e-6   # the scale pass is gone, the scaling kernel stays


def test_a_bad_static_fp8_input_scale_names_the_field():
    data = read_yaml(VERSION_DIR / "trtllm-engine.yaml")
    data["kernels"]["static_fp8_input_scale"] = {"value": "yes", "unit": "bool", "provenance": "assumed",
                                                 "source": "test"}
    with pytest.raises(WhatifError, match="static_fp8_input_scale"):
        engine_from_mapping(data, "bad.yaml")


def test_vllm_fuses_small_tp_all_reduces_on_hopper_and_blackwell_within_its_flashinfer_caps():
    """vLLM 0.18's -O2 fuse_allreduce_rms (Hopper/Blackwell, TP > 1; versions/vllm-0.18.yaml): an all-reduce within
    FlashInfer's workspace (TP 8: 0.5 MB on Hopper, 1 MB on Blackwell) adds the residual and applies the next norm,
    priced by TensorRT-LLM's all-reduce fit (FlashInfer's kernel is its port); larger messages, other
    architectures, and the base vllm profile (0.12-0.14 ran it off): nothing fused."""
    from whatif.roofline.timing import comm_time
    from whatif.roofline.efficiency import default_efficiency
    from whatif.specs import hardware
    gone = {OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM}
    vllm = engine_spec("vllm-0.18")
    for gpu, batch, fuses in (("b200", 32, True), ("b200", 64, True), ("b200", 65, False), ("h100-sxm", 32, True),
                              ("h100-sxm", 33, False), ("a100-sxm-80gb", 8, False)):
        spec, ops = model_ops("llama-3.1-70b", 8, batch=ForwardBatch.decode(batch, 1000))   # 16 kB per sequence
        fused = engine_ops(ops, vllm.for_gpu(hardware.load_component(gpu, "gpu")), spec)
        assert (not gone & roles(fused)) == fuses and (gone <= roles(fused)) != fuses, (gpu, batch)
        kernels = {op.collective_kernel for op in fused if op.role in (OpRole.ATTN_ALLREDUCE, OpRole.MLP_ALLREDUCE)}
        assert kernels == ({"trtllm"} if fuses else {""}), (gpu, batch)
    # the fused all-reduce is timed by TensorRT-LLM's fit: faster than vLLM's custom kernel at 256 kB on 8 B200s
    b200 = hardware.load_component("b200", "gpu")
    spec, ops = model_ops("llama-3.1-70b", 8, batch=ForwardBatch.decode(16, 1000))
    reduce = next(op for op in ops if op.role == OpRole.ATTN_ALLREDUCE)
    fused = next(op for op in engine_ops(ops, vllm.for_gpu(b200), spec) if op.role == OpRole.ATTN_ALLREDUCE)
    from whatif.specs.hardware import load_system
    link = load_system("dgx-b200", 8).gpu_link
    eff = default_efficiency(b200, "vllm")
    assert comm_time(fused, eff, link).time_s < 0.6 * comm_time(reduce, eff, link).time_s
    assert engine_ops(ops, vllm, spec) == ops   # a spec not resolved for a GPU fuses nothing
    assert engine_ops(ops, engine_spec("vllm").for_gpu(b200), spec) == ops   # the base profile: off


def test_a_bad_allreduce_fusion_cap_names_the_field():
    data = engine_mapping(VERSION_DIR / "vllm-0.18.yaml")
    data["kernels"]["allreduce_fusion_max_bytes"] = {**data["kernels"]["allreduce_fusion_max_bytes"],
                                                    "value": {"volta": {8: 1}}}
    with pytest.raises(WhatifError, match="allreduce_fusion_max_bytes: 'volta' is not valid"):
        engine_from_mapping(data, "bad.yaml")
    data = engine_mapping(VERSION_DIR / "vllm-0.18.yaml")
    data["kernels"]["allreduce_fusion_kernel"] = {**data["kernels"]["allreduce_fusion_kernel"], "value": "nccl"}
    with pytest.raises(WhatifError, match="allreduce_fusion_kernel: 'nccl' is not valid"):
        engine_from_mapping(data, "bad.yaml")


def test_sglang_05_fuses_deepseek_all_reduces_on_blackwell_and_leaves_the_quantize_to_the_gemm():
    """SGLang 0.5.x (versions/sglang-0.5.yaml): DeepSeek-V3 on sm100 fuses each TP all-reduce with the residual add
    and the next RMSNorm up to 2,048 tokens (FUSE_ALLREDUCE_MAX_BATCH_SIZE), priced by TensorRT-LLM's fit; the
    fused kernel writes the 16-bit norm output, so no GEMM input is marked quantized. Hopper, other families,
    larger batches and the base sglang profile: nothing fused."""
    from whatif.specs import hardware
    gone = {OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM}
    sglang = engine_spec("sglang-0.5")
    b200, h100 = (hardware.load_component(g, "gpu") for g in ("b200", "h100-sxm"))
    for gpu, model, tokens, fuses in ((b200, "deepseek-v3", 64, True), (b200, "deepseek-v3", 2048, True),
                                      (b200, "deepseek-v3", 2049, False), (h100, "deepseek-v3", 64, False),
                                      (b200, "llama-3.1-70b", 64, False)):
        spec, ops = model_ops(model, 8, batch=ForwardBatch.decode(tokens, 1000))
        fused = engine_ops(ops, sglang.for_gpu(gpu), spec)
        # (unfused, the residual adds run inside their norms: sgl_kernel fused_add_rmsnorm, test_residual_norm.py)
        assert (not gone & roles(fused)) == fuses and (gone - ADDS <= roles(fused)) != fuses, (gpu.name, model, tokens)
        assert not any(op.input_quantized for op in fused if op.op_class == OpClass.GEMM
                       and op not in ops), (gpu.name, model, tokens)
    spec, ops = model_ops("deepseek-v3", 8, batch=ForwardBatch.decode(64, 1000))
    assert engine_ops(ops, engine_spec("sglang").for_gpu(b200), spec) == engine_ops(ops, engine_spec("sglang"), spec)
    assert gone - ADDS <= roles(engine_ops(ops, engine_spec("sglang").for_gpu(b200), spec))   # the base profile: off


def test_a_bad_allreduce_fusion_quantizes_names_the_field():
    data = engine_mapping(VERSION_DIR / "sglang-0.5.yaml")
    data["kernels"]["allreduce_fusion_quantizes"] = {**data["kernels"]["allreduce_fusion_quantizes"], "value": "no"}
    with pytest.raises(WhatifError, match="allreduce_fusion_quantizes"):
        engine_from_mapping(data, "bad.yaml")
