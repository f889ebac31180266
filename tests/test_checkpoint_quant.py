"""A checkpoint's quantization_config / hf_quant_config.json read as the default precision (specs/checkpoint_quant.py),
on the published files of tests/data/checkpoints: scheme, ignore list -> module classes, KV dtype, flags over it."""
import json
import shutil
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.inputs import scenario_from_inputs
from whatif.specs.checkpoint_quant import SHIPPED_DIR as SHIPPED
from whatif.specs.checkpoint_quant import checkpoint_quant, ignored_classes
from whatif.specs.models import load_model

DATA = Path(__file__).parent / "data" / "checkpoints"
DS = load_model("deepseek-v3")      # DeepSeek-V3's architecture: Kimi-K2/K2.5 and GLM-5 stand-ins for the reader
MIX = load_model("mixtral-8x7b")    # a MoE without shared experts: MiniMax / gpt-oss stand-in


def read(name, model=DS):
    return checkpoint_quant(str(DATA / f"{name}_config.json"), model)


def test_deepseek_fp8_block():
    q = read("deepseek-ai--DeepSeek-R1")
    assert (q.quantization, q.modules, q.kv) == ("fp8-block", (), "")
    assert "weight_block_size [128, 128]" in q.source
    assert read("Qwen--Qwen3-32B-FP8").quantization == "fp8-block"


def test_kimi_k25_int4_experts_group_32():
    """Kimi-K2.5: compressed-tensors int4 group 32, ignore = attention, shared experts, dense MLPs (regexes)."""
    q = read("moonshotai--Kimi-K2.5")
    assert q.quantization == "w4a16"
    assert dict(q.modules) == {"attention": "none", "attention_out": "none", "dense_mlp": "none",
                               "shared_experts": "none"}
    assert q.precision_fields(DS) == {"expert_quantization": "w4a16", "source": q.source}


def test_modelopt_nvfp4_keeps_the_excluded_attention_projections_16_bit():
    """DeepSeek-V3.1-NVFP4 excludes q_a/q_b/kv_a/kv_b but not o_proj: attention 16-bit, its output NVFP4; KV FP8."""
    q = read("nvidia--DeepSeek-V3.1-NVFP4")
    assert q.quantization == "nvfp4" and dict(q.modules) == {"attention": "none"} and q.kv == "fp8"
    assert "hf_quant_config.json" in q.source
    k = read("nvidia--Kimi-K2.5-NVFP4")   # ModelOpt fields inside config.json, language_model.* prefixes
    assert k.quantization == "nvfp4" and dict(k.modules) == {"attention": "none", "attention_out": "none"}


def test_experts_only_checkpoints_read_as_experts_only():
    m = read("nvidia--MiniMax-M2.5-NVFP4", MIX)
    assert m.precision_fields(MIX)["expert_quantization"] == "nvfp4" and m.kv == "fp8"
    g = read("openai--gpt-oss-120b", MIX)   # mxfp4 with modules_to_not_convert globs
    assert g.precision_fields(MIX)["expert_quantization"] == "mxfp4"


def test_ignore_spellings():
    exact = [f"model.layers.{i}.self_attn.q_proj" for i in range(MIX.num_layers)]
    assert ignored_classes(exact, MIX)[0] == (("attention", "none"),)
    assert ignored_classes(["model.layers.*.self_attn"], MIX)[0] == (("attention", "none"), ("attention_out", "none"))
    assert ignored_classes(["re:.*block_sparse_moe\\.experts.*"], MIX)[0] == (("experts", "none"),)
    assert ignored_classes(["model.layers.0.mlp.gate", "lm_head"], DS) == ((), ())   # router and head: not classes
    whole, partial = ignored_classes(["model.layers.0.self_attn.o_proj"], MIX)
    assert whole == () and partial == (("attention_out", 1, MIX.num_layers, "16-bit"),)


def test_checkpoint_is_the_default_and_flags_override(tmp_path):
    path = str(DATA / "deepseek-ai--DeepSeek-R1_config.json")
    p = scenario_from_inputs(None, {"model": path}).precision
    assert p.quantization == "fp8-block" and "DeepSeek-R1_config.json" in p.source and "(from " in p.label()
    # "fp8" is the engines' --quantization name for its method (vLLM's and SGLang's Fp8Config read its
    # weight_block_size): loaded as stored, 128x128 blocks (session 73 M); another scheme goes over it
    assert scenario_from_inputs(None, {"model": path}, quantization="fp8").precision.quantization == "fp8-block"
    assert scenario_from_inputs(None, {"model": path}, quantization="nvfp4").precision.quantization == "nvfp4"
    assert scenario_from_inputs(None, {"model": path}, dtype="bf16").precision.quantization == ""
    llama = str(DATA / "nvidia--Llama-3.1-70B-Instruct-FP8_config.json")
    p = scenario_from_inputs(None, {"model": llama}).precision
    assert (p.quantization, p.kv) == ("fp8", "fp8")                     # ModelOpt FP8 with an FP8 KV cache
    assert scenario_from_inputs(None, {"model": llama}, kv_dtype="bf16").precision.kv == "bf16"
    assert scenario_from_inputs(None, {"model": llama}, quantization="nvfp4").precision.kv == "fp8"
    assert scenario_from_inputs(None, {"model": llama, "kernel_engine": "vllm-0.2"}).precision.kv == "bf16"
    assert scenario_from_inputs(None, {"model": "llama-3-8b"}).precision.quantization == ""   # a profile: as ever


def test_a_release_profile_takes_the_checkpoint_kv_as_its_base_engine_unless_it_says_otherwise():
    """--kv-cache-dtype auto follows a checkpoint's FP8 KV in every release profile of an engine that does (vllm-0.18
    as vLLM, trtllm-engine as TensorRT-LLM, the ROCm builds as theirs), but not in a release that did not read it
    (memory.kv_dtype_from_checkpoint: false), nor in Transformers (whose base is vLLM's kernels, not its loader)."""
    from whatif.specs.checkpoint_quant import kv_follows_checkpoint
    llama = str(DATA / "nvidia--Llama-3.1-70B-Instruct-FP8_config.json")
    for engine in ("vllm", "vllm-0.18", "vllm-rocm", "sglang-0.5", "sglang-rocm", "trtllm-engine"):
        assert kv_follows_checkpoint(engine), engine
        assert scenario_from_inputs(None, {"model": llama, "kernel_engine": engine}).precision.kv == "fp8", engine
    for engine in ("vllm-0.2", "vllm-0.6", "sglang-0.3", "trtllm-0.6", "hf-transformers", "hf-transformers-4.35"):
        assert not kv_follows_checkpoint(engine), engine
        assert scenario_from_inputs(None, {"model": llama, "kernel_engine": engine}).precision.kv == "bf16", engine


def test_a_folder_and_its_hf_quant_config(tmp_path):
    shutil.copy(DATA / "nvidia--Llama-3.1-70B-Instruct-FP8_config.json", tmp_path / "config.json")
    shutil.copy(DATA / "nvidia--Llama-3.1-70B-Instruct-FP8_hf_quant_config.json", tmp_path / "hf_quant_config.json")
    assert scenario_from_inputs(None, {"model": str(tmp_path)}).precision.quantization == "fp8"


def test_unknown_formats_are_one_line_errors(tmp_path):
    cfg = json.loads((DATA / "deepseek-ai--DeepSeek-R1_config.json").read_text())
    for qc, match in (({"quant_method": "bitsandbytes"}, "quant_method: 'bitsandbytes' has no whatif scheme"),
                      ({"quant_method": "fp8", "weight_block_size": [64, 64]}, "weight_block_size"),
                      ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {
                          "num_bits": 2, "type": "int"}}}}, "no whatif scheme")):
        f = tmp_path / "config.json"
        f.write_text(json.dumps({**cfg, "quantization_config": qc}))
        with pytest.raises(WhatifError, match=match):
            checkpoint_quant(str(f), DS)
        checkpoint_quant.cache_clear()


def test_shipped_records_of_published_checkpoints():
    """An HF id that resolves to a shipped profile runs its published checkpoint's format; the profile name does
    not (a profile is an architecture). Every shipped record parses and names its own id and address."""
    from whatif.specs.checkpoint_quant import SHIPPED_DIR
    assert scenario_from_inputs(None, {"model": "deepseek-ai/DeepSeek-R1"}).precision.quantization == "fp8-block"
    assert scenario_from_inputs(None, {"model": "deepseek-v3"}).precision.quantization == ""
    records = sorted(SHIPPED_DIR.glob("*.json"))
    assert len(records) >= 15
    for f in records:
        data = json.loads(f.read_text())
        assert f.stem == data["id"].replace("/", "--") and data["source"].startswith("https://huggingface.co/")
        assert checkpoint_quant(str(f), DS).quantization in ("fp8", "fp8-block", "nvfp4", "mxfp4", "w4a16")


def test_expert_flag_goes_over_the_checkpoint():
    p = scenario_from_inputs(None, {"model": "deepseek-ai/DeepSeek-R1"}, expert_quantization="nvfp4").precision
    assert (p.quantization, p.expert_quantization) == ("fp8-block", "nvfp4")


def test_naming_the_checkpoints_own_scheme_loads_it_as_stored():
    """`--quantization mxfp4` on gpt-oss (an MXFP4 checkpoint whose attention is in modules_to_not_convert) is the
    checkpoint as the engines load it: experts MXFP4 weight-only (16-bit math, so it runs on Hopper), attention
    16-bit; another scheme is a what-if over every linear layer, and an expert flag still goes over it."""
    oss = "openai/gpt-oss-120b"
    own = scenario_from_inputs(None, {"model": oss, "hardware": "h100-sxm"}, quantization="mxfp4").precision
    assert own == scenario_from_inputs(None, {"model": oss, "hardware": "h100-sxm"}).precision
    assert (own.quantization, own.expert_quantization, own.weight, own.activation) == ("", "mxfp4", "bf16", "bf16")
    other = scenario_from_inputs(None, {"model": oss}, quantization="awq").precision
    assert other.quantization == "awq" and other.expert_quantization == ""
    mixed = scenario_from_inputs(None, {"model": oss}, quantization="mxfp4", expert_quantization="awq").precision
    assert mixed.expert_quantization == "awq"


def test_aliased_releases_run_their_shipped_sections(monkeypatch, tmp_path):
    """Session 69 Q: ids that resolve to a profile by alias and now ship their quantization section (no hub cache):
    the DeepSeek-V3-0324 NVFP4 export keeps every layer's self_attn* 16-bit (o_proj included) and declares no KV
    dtype; the Qwen3-32B NVFP4 export quantizes all but lm_head and declares an FP8 KV cache; Kimi-K2-Thinking is
    INT4 group-32 experts only, as Kimi-K2.5."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    ds = scenario_from_inputs(None, {"model": "nvidia/DeepSeek-V3-0324-NVFP4"}).precision
    assert (ds.quantization, ds.kv) == ("nvfp4", "bf16")
    assert dict(ds.modules) == {"attention": "none", "attention_out": "none"}
    qwen = scenario_from_inputs(None, {"model": "nvidia/Qwen3-32B-NVFP4"}).precision
    assert (qwen.quantization, qwen.kv, tuple(qwen.modules)) == ("nvfp4", "fp8", ())
    kimi = scenario_from_inputs(None, {"model": "moonshotai/Kimi-K2-Thinking"}).precision
    assert (kimi.quantization, kimi.expert_quantization) == ("", "w4a16")   # w4a16: int4 weights, group 32


def test_session_70_shipped_nvfp4_sections(monkeypatch, tmp_path):
    """Session 70 H: the Qwen3-30B-A3B NVFP4 export leaves only the routers (mlp.gate) and lm_head 16-bit, so no
    module class stays 16-bit; the Llama-3.1-8B FP4 export excludes lm_head only; both declare an FP8 KV cache."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for hf_id in ("nvidia/Qwen3-30B-A3B-NVFP4", "nvidia/Llama-3.1-8B-Instruct-FP4"):
        p = scenario_from_inputs(None, {"model": hf_id}).precision
        assert (p.quantization, p.kv, tuple(p.modules)) == ("nvfp4", "fp8", ()), hf_id


def test_deepseek_v31_ships_fp8_blocks_and_ue8m0_is_read_as_the_same_format(monkeypatch, tmp_path):
    """Session 70 H: V3.1's record (a printed copy of its config; DeepSeek's config_v3.1.json: fp8, ue8m0 scales)
    runs fp8-block with nothing 16-bit but the router / embeddings / head; scale_fmt changes no byte whatif prices."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    v31 = scenario_from_inputs(None, {"model": "deepseek-ai/DeepSeek-V3.1"}).precision
    v3 = scenario_from_inputs(None, {"model": "deepseek-ai/DeepSeek-V3"}).precision
    assert (v31.quantization, v31.kv, tuple(v31.modules)) == ("fp8-block", "bf16", ()) == \
        (v3.quantization, v3.kv, tuple(v3.modules))


def test_qwen_fp8_releases_keep_only_norms_routers_and_head_16_bit(monkeypatch, tmp_path):
    """Session 70 H: the Qwen FP8 releases' modules_to_not_convert name norms, routers (mlp.gate) and lm_head, none a
    module class, so every linear runs fp8-block; the dense 8B's section has no list at all."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    for hf_id in ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen/Qwen3-30B-A3B-Thinking-2507-FP8",
                  "Qwen/Qwen3-8B-FP8"):
        p = scenario_from_inputs(None, {"model": hf_id}).precision
        assert (p.quantization, p.kv, tuple(p.modules)) == ("fp8-block", "bf16", ()), hf_id


def test_session_70_m_fp8_sections_keep_no_class_16_bit(monkeypatch, tmp_path):
    """Session 70 M: GLM-5.1-FP8 (712 entries, GLM-5-FP8's list), GLM-4.5-FP8 (compressed-tensors FP8 per channel, 839
    norms / biases / routers) and Qwen3-Next-80B-A3B-Instruct-FP8 (407 entries) name no projection a class carries,
    so every linear runs the checkpoint's FP8."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    want = {"zai-org/GLM-5.1-FP8": "fp8-block", "zai-org/GLM-4.5-FP8": "fp8",
            "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8": "fp8-block"}
    for hf_id, scheme in want.items():
        p = scenario_from_inputs(None, {"model": hf_id}).precision
        assert (p.quantization, p.kv, tuple(p.modules)) == (scheme, "bf16", ()), hf_id
    g51 = json.loads((SHIPPED / "zai-org--GLM-5.1-FP8.json").read_text())["quantization_config"]
    g5 = json.loads((SHIPPED / "zai-org--GLM-5-FP8.json").read_text())["quantization_config"]
    assert g51 == g5 and len(g51["modules_to_not_convert"]) == 712


def test_glm_5_2_fp8_keeps_indexer_entries_only_on_its_indexer_layers(monkeypatch, tmp_path):
    """Session 70 Z: GLM-5.2-FP8's 541 entries are GLM-5.1-FP8's 712 less the indexer k_norm / k_norm.bias /
    indexers_proj of the 57 layers that reuse another layer's top-k (IndexShare); no class is left 16-bit."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    p = scenario_from_inputs(None, {"model": "zai-org/GLM-5.2-FP8"}).precision
    assert (p.quantization, p.kv, tuple(p.modules)) == ("fp8-block", "bf16", ())
    g52 = json.loads((SHIPPED / "zai-org--GLM-5.2-FP8.json").read_text())["quantization_config"]
    g51 = json.loads((SHIPPED / "zai-org--GLM-5.1-FP8.json").read_text())["quantization_config"]
    owners = {0, 1, 2, *range(6, 78, 4), 78}
    indexer = {f"model.layers.{i}.self_attn.{n}" for i in range(79) if i not in owners
               for n in ("indexer.k_norm", "indexer.k_norm.bias", "indexers_proj")}
    assert len(g52["modules_to_not_convert"]) == len(set(g52["modules_to_not_convert"])) == 541
    assert set(g52["modules_to_not_convert"]) == set(g51["modules_to_not_convert"]) - indexer
    assert {k: v for k, v in g52.items() if k != "modules_to_not_convert"} == \
        {k: v for k, v in g51.items() if k != "modules_to_not_convert"}


def test_gated_deltanet_in_proj_ba_alone_does_not_make_attention_16_bit():
    """Qwen3-Next's FP8 release keeps each DeltaNet layer's in_proj_ba ([64, 2048]) bf16 beside an FP8 in_proj_qkvz
    ([12288, 2048]): the 64 gate rows do not carry the attention class; in_proj_qkvz kept 16-bit does."""
    nxt = load_model("qwen3-next-80b-a3b")
    linear = [i for i in range(nxt.num_layers) if i % 4 != 3]
    assert ignored_classes([f"model.layers.{i}.linear_attn.in_proj_ba" for i in linear], nxt) == ((), ())
    whole, partial = ignored_classes([f"model.layers.{i}.linear_attn.in_proj_qkvz" for i in linear], nxt)
    assert whole == (("attention", "none"),) and partial == (("attention", 12, 48, "quantized"),)


def test_llama_405b_fp8_export_declares_no_kv_dtype_unlike_the_70b_one(monkeypatch, tmp_path):
    """Session 71 D: nvidia/Llama-3.1-405B-Instruct-FP8's hf_quant_config.json (ModelOpt 0.17.0) is per-tensor FP8
    with kv_cache_quant_algo null and no exclude list: every class FP8, the KV cache stays bf16; the 70B export's
    record declares an FP8 KV cache, so the two ids differ in their KV dtype only."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    big = scenario_from_inputs(None, {"model": "nvidia/Llama-3.1-405B-Instruct-FP8"}).precision
    assert (big.quantization, big.kv, tuple(big.modules)) == ("fp8", "bf16", ())
    small = scenario_from_inputs(None, {"model": "nvidia/Llama-3.1-70B-Instruct-FP8"}).precision
    assert (small.quantization, small.kv) == ("fp8", "fp8")
