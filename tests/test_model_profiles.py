"""Shipped model profiles and the Hugging Face config.json reader.

Pinned parameter counts are the models' exact published counts (sum of the checkpoint's tensors as
the Hugging Face model API / model cards report them), not numbers read back from our own formula;
each entry says where it comes from and what, if anything, the spec leaves out.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.specs.hf_config import SUPPORTED_MODEL_TYPES
from whatif.specs.models import spec_from_hf_config
from whatif.specs.models import MODEL_DIR, list_models, load_model

HF_CONFIGS = Path(__file__).parent / "data" / "hf_configs"
FIXTURES = sorted(p.parent.name for p in HF_CONFIGS.glob("*/config.json"))


# ---------------------------------------------------------------- every shipped profile

def test_profiles_are_shipped():
    names = set(list_models())
    required = {
        "llama-2-7b", "llama-2-13b", "llama-2-70b", "llama-3-8b", "llama-3-70b", "llama-3.1-8b",
        "llama-3.1-70b", "llama-3.1-405b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b",
        "deepseek-v3", "opt-125m", "opt-6.7b", "opt-30b", "opt-66b", "codellama-34b", "yi-34b", "phi-2",
        "vicuna-7b", "llama-68m", "qwen3-0.6b",
    }
    assert required <= names, sorted(required - names)


# Models whose checkpoint has no public Hugging Face config: their shapes come from the paper that defines them.
PAPER_SOURCED = {"opt-175b": "https://arxiv.org/abs/2205.01068"}    # weights released on request only
# Models written from a public repository's trimmed copy of the release's config.json (no quantization_config): the
# release id is an alias (hf_ids.ALIASES), so running it says 16-bit is assumed rather than reading as the source.
COPY_SOURCED = {
    "glm-4.7": "https://github.com/ai-dynamo/aiconfigurator/blob/a0ba9ec6d14e3d4ecd5d8d5468142c290634391d/",
    "kimi-k2-thinking": "https://github.com/ai-dynamo/aiconfigurator/blob/821eb9a651450cef303fb858289bca98959fe4c2/",
}


@pytest.mark.parametrize("name", list_models())
def test_every_profile_loads(name):
    spec = load_model(name)
    assert spec.name == name == (MODEL_DIR / f"{name}.yaml").stem
    if name in PAPER_SOURCED:
        assert spec.source.startswith(PAPER_SOURCED[name])
    elif name in COPY_SOURCED:
        assert spec.source.startswith(COPY_SOURCED[name]) and spec.source.endswith("_config.json")
    else:
        assert spec.source.startswith("https://huggingface.co/") and spec.source.endswith("/config.json")
    assert spec.total_params() > 0
    assert 0 < spec.active_params_per_token() <= spec.total_params()
    assert spec.kv_elements_per_token() > 0


# ---------------------------------------------------------------- parameter counts

# Exact published counts. "HF" = the model repo's safetensors parameter total (Hugging Face model API
# / model page); the spec reproduces every one of these exactly.
EXACT_PARAMS = {
    "llama-2-7b": 6_738_415_616,       # HF API safetensors total is 6,738,417,664: +2,048 = the 32 layers x 64
                                       # rotary inv_freq buffers saved in that checkpoint (not parameters)
    "llama-2-13b": 13_015_864_320,     # (HF API 13,015,866,880 = + 40 x 64 inv_freq buffers)
    "llama-2-70b": 68_976_648_192,     # (HF API 68,976,653,312 = + 80 x 64 inv_freq buffers)
    "vicuna-7b": 6_738_415_616,        # Llama 2 7B architecture
    "llama-3-8b": 8_030_261_248,       # HF
    "llama-3.1-8b": 8_030_261_248,     # HF (meta-llama/Llama-3.1-8B)
    "llama-3-70b": 70_553_706_496,     # HF
    "llama-3.1-70b": 70_553_706_496,   # HF (meta-llama/Llama-3.1-70B)
    "llama-3.1-405b": 405_853_388_800,  # HF (meta-llama/Llama-3.1-405B)
    "llama-3.2-1b": 1_235_814_400,     # HF
    "llama-3.2-3b": 3_212_749_824,     # HF
    "mistral-7b": 7_241_732_096,       # HF
    "mixtral-8x7b": 46_702_792_704,    # HF
    "qwen2.5-7b": 7_615_616_512,       # HF
    "qwen2.5-72b": 72_706_203_648,     # HF
    "codellama-34b": 33_743_970_304,   # published count of a CodeLlama-34B fine-tune (Phind), same shapes
    "yi-34b": 34_388_917_248,          # published count of Yi-34B-shaped checkpoints (Yi-1.5-34B), same shapes
    "opt-125m": 125_239_296,           # sum(p.numel()) of facebook/opt-125m, as commonly reported
    "opt-6.7b": 6_658_473_984,         # HF; matched only with the 2050-row position table (see opt-6.7b.yaml)
    "opt-13b": 12_853_473_280,         # facebook/opt-13b's config summed by hand (2050-row position table, as
                                       # opt-6.7b): 12.85B, which the OPT paper's Table 1 rounds to 13B
}

# Published counts that include parameters the spec has no field for: (published, what is missing, size).
PUBLISHED_WITH_KNOWN_GAP = {
    "phi-2": (2_779_683_840, "lm_head bias (vocab 51,200)", 51_200),
    "qwen3-0.6b": (596_049_920, "per-head q/k RMSNorm, 28 layers x 2 x head_dim 128", 28 * 2 * 128),
    # DeepSeek-V3 main model (61 layers, MTP module excluded), exact tensor total of the checkpoint's
    # main-model weights. Missing: the router's e_score_correction_bias, 58 MoE layers x 256 experts.
    "deepseek-v3": (671_026_419_200, "router e_score_correction_bias, 58 x 256", 58 * 256),
}

# No exact published count found: the nominal size must hold to 1%.
NOMINAL_PARAMS = {
    "opt-30b": 30e9,
    "opt-66b": 66e9,
    "opt-175b": 175e9,
    "falcon-180b": 180e9,              # TII's nominal size (the untied head included: 179.5B)
    "llama-68m": 68e6,
    "yi-6b": 6.06e9,                   # 01-ai/Yi-6B model page: 6.06B params (the spec gives 6,061,035,520)
}


@pytest.mark.parametrize("name,expected", sorted(EXACT_PARAMS.items()))
def test_exact_parameter_counts(name, expected):
    assert load_model(name).total_params() == expected


@pytest.mark.parametrize("name", sorted(PUBLISHED_WITH_KNOWN_GAP))
def test_parameter_counts_with_known_unmodelled_parameters(name):
    published, _what, missing = PUBLISHED_WITH_KNOWN_GAP[name]
    assert load_model(name).total_params() == published - missing


@pytest.mark.parametrize("name,nominal", sorted(NOMINAL_PARAMS.items()))
def test_nominal_parameter_counts(name, nominal):
    assert load_model(name).total_params() == pytest.approx(nominal, rel=0.01)


def test_deepseek_v3_is_671b_total_37b_active():
    spec = load_model("deepseek-v3")
    # 671,026,419,200 counts the 61 main layers only; the multi-token-prediction module (a 62nd,
    # MoE layer + eh_proj + norms: ~11.6B, ~13.5B with its embedding/head copies; DeepSeek's
    # "685B on Hugging Face = 671B + 14B MTP") is not in it and not in the spec either. Subtracting
    # it from 671,026,419,200 would double-count its removal (659.4B, 1.8% below the spec).
    assert spec.total_params() == pytest.approx(671_026_419_200, rel=0.01)
    # DeepSeek publishes "37B activated" (rounded); ours counts the input embedding and lm_head too.
    assert spec.active_params_per_token() == pytest.approx(37e9, rel=0.02)
    assert spec.num_moe_layers == 58


def test_mixtral_active_params():
    # 2 of 8 experts per token: the often quoted "12.9B active"
    assert load_model("mixtral-8x7b").active_params_per_token() == pytest.approx(12.9e9, rel=0.01)


# ---------------------------------------------------------------- KV cache

@pytest.mark.parametrize("name,bytes_per_token", [
    ("llama-2-7b", 524_288),       # 2 (K,V) x 32 layers x 4096 x 2 bytes
    ("llama-3-8b", 131_072),       # 2 x 32 layers x 8 KV heads x 128 x 2 bytes
    ("deepseek-v3", 70_272),       # MLA: 61 layers x (512 latent + 64 RoPE key) x 2 bytes
])
def test_fp16_kv_bytes_per_token(name, bytes_per_token):
    assert load_model(name).kv_elements_per_token() * 2 == bytes_per_token


# ---------------------------------------------------------------- config.json reader

def _without_identity(spec):
    return dataclasses.replace(spec, name="", source="")


def test_fixtures_cover_the_required_models():
    assert {"llama-2-7b", "mixtral-8x7b", "qwen2.5-7b", "deepseek-v3", "opt-6.7b", "phi-2"} <= set(FIXTURES)


@pytest.mark.parametrize("name", FIXTURES)
def test_hf_config_matches_the_profile(name):
    path = HF_CONFIGS / name / "config.json"
    spec = spec_from_hf_config(path)
    assert spec.name == name
    assert spec.source == str(path)
    assert _without_identity(spec) == _without_identity(load_model(name))


@pytest.mark.parametrize("name", FIXTURES)
def test_load_model_accepts_a_config_path(name):
    path = HF_CONFIGS / name / "config.json"
    assert _without_identity(load_model(str(path))) == _without_identity(load_model(name))


def test_name_is_the_stem_when_the_file_is_not_config_json(tmp_path):
    target = tmp_path / "my-llama.json"
    target.write_text((HF_CONFIGS / "llama-2-7b" / "config.json").read_text())
    assert spec_from_hf_config(target).name == "my-llama"


def _write(tmp_path, payload, name="config.json"):
    folder = tmp_path / "model"
    folder.mkdir()
    path = folder / name
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return path


def _llama_2_7b():
    return json.loads((HF_CONFIGS / "llama-2-7b" / "config.json").read_text())


def test_not_json_is_a_whatif_error(tmp_path):
    path = _write(tmp_path, "hidden_size: 4096\n")
    with pytest.raises(WhatifError) as err:
        spec_from_hf_config(path)
    message = str(err.value)
    assert str(path) in message and "JSON" in message and "\n" not in message


def test_unknown_model_type_lists_the_supported_ones(tmp_path):
    path = _write(tmp_path, {**_llama_2_7b(), "model_type": "gpt_bigcode"})
    with pytest.raises(WhatifError) as err:
        spec_from_hf_config(path)
    message = str(err.value)
    assert str(path) in message and "model_type" in message and "gpt_bigcode" in message
    assert all(t in message for t in SUPPORTED_MODEL_TYPES)
    assert "\n" not in message


def test_missing_hidden_size_names_the_field(tmp_path):
    cfg = _llama_2_7b()
    del cfg["hidden_size"]
    path = _write(tmp_path, cfg)
    with pytest.raises(WhatifError) as err:
        spec_from_hf_config(path)
    message = str(err.value)
    assert str(path) in message and "'hidden_size'" in message and "\n" not in message


def test_missing_model_type_lists_the_supported_ones(tmp_path):
    cfg = _llama_2_7b()
    del cfg["model_type"]
    path = _write(tmp_path, cfg)
    with pytest.raises(WhatifError, match="model_type.*supported: deepseek_v2"):
        spec_from_hf_config(path)


def test_wrongly_typed_field_is_a_whatif_error(tmp_path):
    path = _write(tmp_path, {**_llama_2_7b(), "num_hidden_layers": "32"})
    with pytest.raises(WhatifError, match="num_hidden_layers"):
        spec_from_hf_config(path)


def test_opt_with_embedding_projection_is_refused(tmp_path):
    cfg = json.loads((HF_CONFIGS / "opt-6.7b" / "config.json").read_text())
    path = _write(tmp_path, {**cfg, "hidden_size": 1024, "num_attention_heads": 16, "ffn_dim": 4096,
                             "word_embed_proj_dim": 512})
    with pytest.raises(WhatifError, match="word_embed_proj_dim"):
        spec_from_hf_config(path)


def test_defaults_kv_heads_and_head_dim(tmp_path):
    cfg = _llama_2_7b()
    del cfg["num_key_value_heads"]
    spec = spec_from_hf_config(_write(tmp_path, cfg))
    assert spec.num_kv_heads == 32 and spec.head_dim == 128


def test_deepseek_v2_lite_without_q_lora(tmp_path):
    # deepseek-ai/DeepSeek-V2-Lite (abbreviated): q_lora_rank null -> queries projected directly
    cfg = {"model_type": "deepseek_v2", "hidden_size": 2048, "num_hidden_layers": 27,
           "num_attention_heads": 16, "num_key_value_heads": 16, "intermediate_size": 10944,
           "moe_intermediate_size": 1408, "n_routed_experts": 64, "n_shared_experts": 2,
           "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1,
           "q_lora_rank": None, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "v_head_dim": 128, "vocab_size": 102400, "max_position_embeddings": 163840,
           "tie_word_embeddings": False}
    spec = spec_from_hf_config(_write(tmp_path, cfg))
    assert spec.mla.q_lora_rank == 0 and spec.moe.shared_experts == 2
    assert spec.total_params() == pytest.approx(15.7e9, rel=0.01)   # "15.7B total"


def test_unknown_profile_name_suggests_the_closest():
    with pytest.raises(WhatifError, match="did you mean 'llama-2-7b'"):
        load_model("llama-2-7x")
