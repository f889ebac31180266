"""The Hugging Face readers of the 2025-26 families (specs/hf_families.py) on the real config.json files of
../shared/reference/model_configs, and each file's id resolving to a shipped profile of the same architecture."""
import dataclasses
import json
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.specs.hf_ids import resolve_hf_id
from whatif.specs.models import load_model, spec_from_hf_config

REF = Path("/work/shared/reference/model_configs")
CONFIGS = sorted(p for p in REF.glob("*_config.json") if not p.name.endswith("hf_quant_config.json")) \
    if REF.is_dir() else []
NOT_READ: set = set()
NO_PROFILE = {"Qwen/Qwen3-VL-8B-Instruct"}   # read, but no shipped profile (not in the serving set)
needs_ref = pytest.mark.skipif(not CONFIGS, reason="the shared reference model configs are not here")


def hf_id(path: Path) -> str:
    return path.name[: -len("_config.json")].replace("--", "/", 1)


def architecture(spec) -> dict:
    skip = ("name", "family", "source")
    return {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec) if f.name not in skip}


@needs_ref
@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: hf_id(p))
def test_each_reference_config_reads_and_its_id_resolves_to_a_profile_of_that_architecture(path):
    if hf_id(path).replace("/", "--") in NOT_READ:
        with pytest.raises(WhatifError, match="model_type.*not supported; supported: "):
            spec_from_hf_config(path)
        return
    spec = spec_from_hf_config(path)
    if hf_id(path) in NO_PROFILE:
        return
    kind, name = resolve_hf_id(hf_id(path))
    assert kind == "profile"
    assert architecture(load_model(name)) == architecture(spec), f"{hf_id(path)} -> {name}"


@needs_ref
def test_infinity_is_read_where_whatif_does_not_use_it_and_refused_where_it_does(tmp_path):
    src = REF / "nvidia--Nemotron-H-56B-Base-8K_config.json"
    assert "Infinity" in src.read_text()
    m = spec_from_hf_config(src)     # time_step_limit: [0.0, Infinity]: not a field whatif reads
    assert [s.mixer for s in m.layers].count("mamba2") == 54 and [s.ffn for s in m.layers].count("dense") == 54
    bad = tmp_path / "config.json"
    bad.write_text(src.read_text().replace('"ssm_state_size": 256', '"ssm_state_size": Infinity'))
    with pytest.raises(WhatifError, match="'ssm_state_size': Infinity is not a finite number"):
        spec_from_hf_config(bad)


@needs_ref
def test_nested_text_configs_and_their_vision_towers():
    k = spec_from_hf_config(REF / "moonshotai--Kimi-K2.5_config.json")
    assert k.moe.num_experts == 384 and k.mla is not None
    assert 0.35e9 < k.encoder_params() < 0.55e9          # MoonViT, "400M" on the card (projector included)
    scout = spec_from_hf_config(REF / "meta-llama--Llama-4-Scout-17B-16E-Instruct_config.json")
    assert scout.nope_layers == tuple(range(3, 48, 4))
    assert [s.mixer for s in scout.layers[:4]] == ["chunked", "chunked", "chunked", "full"]
    assert scout.encoder is None                          # this config.json has no vision_config


@needs_ref
def test_gpt_oss_alternates_sliding_and_full_attention_with_sinks():
    m = spec_from_hf_config(REF / "openai--gpt-oss-120b_config.json")
    assert [s.mixer for s in m.layers[:4]] == ["sliding", "full", "sliding", "full"]
    assert m.sliding_window == 128 and m.attention_sinks and m.moe.router_bias
    # a sequence longer than the window: the sliding half holds 128 tokens, the full half all of them
    per_layer = 2 * 8 * 64 * 2
    assert m.sequence_cache_bytes(10_000, 2) == 18 * (10_000 + 128) * per_layer


def test_qwen3_moe_places_dense_layers_by_mlp_only_layers_and_sparse_step(tmp_path):
    cfg = dict(model_type="qwen3_moe", hidden_size=256, num_hidden_layers=6, num_attention_heads=4,
               num_key_value_heads=2, head_dim=64, intermediate_size=512, vocab_size=1000,
               max_position_embeddings=4096, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=128,
               mlp_only_layers=[0], decoder_sparse_step=2)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    m = spec_from_hf_config(path)
    assert [m.is_moe_layer(i) for i in range(6)] == [False, True, False, True, False, True]


def test_gemma2_alternates_local_and_global_with_softcaps(tmp_path):
    cfg = dict(model_type="gemma2", hidden_size=3584, num_hidden_layers=42, num_attention_heads=16,
               num_key_value_heads=8, head_dim=256, intermediate_size=14336, vocab_size=256000,
               max_position_embeddings=8192, sliding_window=4096, attn_logit_softcapping=50.0,
               final_logit_softcapping=30.0)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    m = spec_from_hf_config(path)
    assert [s.mixer for s in m.layers[:2]] == ["sliding", "full"] and m.tie_word_embeddings and m.sandwich_norm
    assert m.attn_logit_softcapping == 50.0 and m.final_logit_softcapping == 30.0
    assert m.total_params() == pytest.approx(9.24e9, rel=0.01)    # Gemma 2 9B's card: 9.24B


def test_gemma3_reads_its_nested_text_config_and_counts_its_siglip_tower(tmp_path):
    text = dict(hidden_size=5376, num_hidden_layers=62, num_attention_heads=32, num_key_value_heads=16, head_dim=128,
                intermediate_size=21504, vocab_size=262208, max_position_embeddings=131072, sliding_window=1024)
    vision = dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, patch_size=14, image_size=896)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(model_type="gemma3", text_config=text, vision_config=vision)))
    m = spec_from_hf_config(path)
    assert [s.mixer for s in m.layers[:6]] == ["sliding"] * 5 + ["full"]
    assert m.total_params() == pytest.approx(27.0e9, rel=0.01) and 0.38e9 < m.encoder_params() < 0.45e9


# GLM-4.7-Flash's config as printed whole (gogongxt/python scripts/models/glm_4.7_flash.md @cbff706d), the fields the
# glm4_moe_lite reader reads (mlp_layer_types: 1 dense then 46 sparse)
GLM47_FLASH = dict(model_type="glm4_moe_lite", hidden_size=2048, num_hidden_layers=47, num_attention_heads=20,
                   num_key_value_heads=20, intermediate_size=10240, vocab_size=154880, max_position_embeddings=202752,
                   kv_lora_rank=512, q_lora_rank=768, qk_nope_head_dim=192, qk_rope_head_dim=64, v_head_dim=256,
                   n_routed_experts=64, num_experts_per_tok=4, moe_intermediate_size=1536, n_shared_experts=1,
                   first_k_dense_replace=1, tie_word_embeddings=False, mlp_layer_types=["dense"] + ["sparse"] * 46)


def test_glm4_moe_lite_reads_as_the_shipped_glm_4_7_flash(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GLM47_FLASH))
    assert architecture(spec_from_hf_config(path)) == architecture(load_model("glm-4.7-flash"))
    assert resolve_hf_id("zai-org/GLM-4.7-Flash") == ("profile", "glm-4.7-flash")
    # ai-dynamo/aiconfigurator model_configs/zai-org--GLM-4.7-Flash_config.json @19d098ad (trimmed): no
    # mlp_layer_types, and head_dim 64 (transformers maps head_dim to qk_rope_head_dim): the same architecture
    trimmed = {k: v for k, v in GLM47_FLASH.items() if k != "mlp_layer_types"}
    path.write_text(json.dumps({**trimmed, "head_dim": 64}))
    assert architecture(spec_from_hf_config(path)) == architecture(load_model("glm-4.7-flash"))


def test_glm4_moe_lite_takes_its_dense_layers_from_mlp_layer_types(tmp_path):
    path = tmp_path / "config.json"
    cfg = {**GLM47_FLASH, "mlp_layer_types": ["dense"] * 2 + ["sparse"] * 45}
    path.write_text(json.dumps(cfg))
    m = spec_from_hf_config(path)
    assert [m.is_moe_layer(i) for i in range(3)] == [False, False, True]
    cfg = {k: v for k, v in GLM47_FLASH.items() if k not in ("mlp_layer_types", "first_k_dense_replace")}
    path.write_text(json.dumps(cfg))
    assert [spec_from_hf_config(path).is_moe_layer(i) for i in range(2)] == [False, True]   # transformers' default
    path.write_text(json.dumps({**GLM47_FLASH, "mlp_layer_types": ["sparse", "dense"] + ["sparse"] * 45}))
    with pytest.raises(WhatifError, match="mlp_layer_types.*dense ones first"):
        spec_from_hf_config(path)
    path.write_text(json.dumps({**GLM47_FLASH, "mlp_layer_types": ["dense", "mlp"] + ["sparse"] * 45}))
    with pytest.raises(WhatifError, match="valid entries: dense, sparse"):
        spec_from_hf_config(path)


# Gemma-4-31B-it's config as printed whole (gogongxt/python scripts/models/gemma_4_31b_it.md @cbff706d, Gemma4Config
# repr, transformers 5.7.0): the fields the gemma4 reader reads
GEMMA4_TEXT = dict(model_type="gemma4_text", attention_bias=False, attention_k_eq_v=True, enable_moe_block=False,
                   final_logit_softcapping=30.0, global_head_dim=512, head_dim=256, hidden_size=5376,
                   hidden_size_per_layer_input=0, intermediate_size=21504,
                   layer_types=(["sliding_attention"] * 5 + ["full_attention"]) * 10, max_position_embeddings=262144,
                   num_attention_heads=32, num_global_key_value_heads=4, num_hidden_layers=60, num_key_value_heads=16,
                   num_kv_shared_layers=0, sliding_window=1024, tie_word_embeddings=True, vocab_size=262144)
GEMMA4_VISION = dict(model_type="gemma4_vision", head_dim=72, hidden_size=1152, intermediate_size=4304,
                     num_hidden_layers=27, num_attention_heads=16, patch_size=16, position_embedding_size=10240,
                     standardize=True)
GEMMA4 = dict(model_type="gemma4", text_config=GEMMA4_TEXT, vision_config=GEMMA4_VISION, tie_word_embeddings=True)


def test_gemma4_reads_as_the_shipped_gemma_4_31b_and_counts_the_checkpoints_tensors(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GEMMA4))
    m = spec_from_hf_config(path)
    assert architecture(m) == architecture(load_model("gemma-4-31b"))
    assert resolve_hf_id("google/gemma-4-31B-it") == ("profile", "gemma-4-31b")
    # the report's 31,273,088,876 tensor elements: ours + per-head q/k norms (50 x 2 x 256 + 10 x 2 x 512) + 60
    # layer scalars, none of which whatif counts
    assert m.total_params() + m.encoder_params() + 50 * 512 + 10 * 1024 + 60 == 31_273_088_876
    # a sliding layer q/k/v/o [8192|4096|4096|8192]; a global one q [16384], k [2048], no v, o [16384]
    assert m.mixer_params(0) == 5376 * (8192 + 2 * 4096 + 8192) and m.mixer_params(5) == 5376 * (16384 + 2048 + 16384)
    assert m.cache_summary(2) == {"kv_bytes_per_token": 10 * 2 * 4 * 512 * 2.0,
                                  "windowed_kv_bytes_max": 1024 * 50 * 2 * 16 * 256 * 2.0,
                                  "state_bytes_per_sequence": 0.0}


@pytest.mark.parametrize("field, value, said", [("enable_moe_block", True, "routed experts"),
                                                ("hidden_size_per_layer_input", 256, "per-layer input embeddings"),
                                                ("num_kv_shared_layers", 20, "earlier layer's KV cache")])
def test_gemma4_refuses_what_it_does_not_model_by_field(tmp_path, field, value, said):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GEMMA4, "text_config": {**GEMMA4_TEXT, field: value}}))
    with pytest.raises(WhatifError, match=f"text_config.{field}.*{said}"):
        spec_from_hf_config(path)


# GLM-5.2's raw config.json as printed (gogongxt/python scripts/models/glm_5.2.md @b5211991): GLM-5's fields plus
# IndexShare (index_topk_freq 4, index_skip_topk_offset 3, and the same schedule spelled out in indexer_types)
GLM52_INDEXER_TYPES = ["full"] * 3 + (["shared"] * 3 + ["full"]) * 18 + ["shared"] * 3
GLM52 = dict(model_type="glm_moe_dsa", first_k_dense_replace=3, head_dim=192, hidden_size=6144, index_head_dim=128,
             index_n_heads=32, index_skip_topk_offset=3, index_topk=2048, index_topk_freq=4, index_topk_pattern=None,
             indexer_types=GLM52_INDEXER_TYPES, intermediate_size=12288, kv_lora_rank=512,
             max_position_embeddings=1048576, moe_intermediate_size=2048, n_routed_experts=256, n_shared_experts=1,
             num_attention_heads=64, num_experts_per_tok=8, num_hidden_layers=78, num_key_value_heads=64,
             num_nextn_predict_layers=1, q_lora_rank=2048, qk_nope_head_dim=192, qk_rope_head_dim=64,
             tie_word_embeddings=False, v_head_dim=256, vocab_size=154880)


def test_glm52_reads_as_the_shipped_profile_with_its_index_share_schedule(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(GLM52))
    m = spec_from_hf_config(path)
    assert architecture(m) == architecture(load_model("glm-5.2"))
    assert resolve_hf_id("zai-org/GLM-5.2") == ("profile", "glm-5.2")
    assert [i for i, s in enumerate(m.layers) if s.own_indexer] == [0, 1, 2] + list(range(6, 78, 4))   # 21
    # the report's 753,329,940,480 tensor elements: ours + the MTP layer 78 (a MoE layer with its indexer, eh_proj,
    # enorm, hnorm, shared_head.norm) + 76 routers' score-correction biases
    mtp = m.layer_params(3) + m.indexer.params(6144, 2048) + 6144 * 12288 + 3 * 6144
    assert m.total_params() + mtp + 76 * 256 == 753_329_940_480
    # GLM-5 (no schedule fields): every layer its own indexer, as before
    glm5 = {k: v for k, v in GLM52.items() if not k.startswith("index_topk_") and k not in
            ("index_skip_topk_offset", "indexer_types")}
    path.write_text(json.dumps(glm5))
    assert all(s.own_indexer for s in spec_from_hf_config(path).layers)


@pytest.mark.parametrize("change, field", [({"indexer_types": ["full"] * 78}, "indexer_types"),
                                           ({"index_topk_pattern": "FFFS" * 19 + "SS"}, "index_topk_pattern")])
def test_glm52_refuses_a_schedule_it_would_not_build_as_vllm_does(tmp_path, change, field):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**GLM52, **change}))
    with pytest.raises(WhatifError, match=f"field '{field}'"):
        spec_from_hf_config(path)


# Kimi-Linear-48B-A3B-Instruct's config as printed whole (gogongxt/python scripts/models/kimi_linear_48b_a3b_instruct.md
# @d2644104, KimiLinearConfig repr, transformers 5.7.0): the fields the kimi_linear reader reads
KIMI_LINEAR = dict(model_type="kimi_linear", first_k_dense_replace=1, head_dim=72, hidden_size=2304,
                   intermediate_size=9216, kv_lora_rank=512,
                   linear_attn_config=dict(full_attn_layers=[4, 8, 12, 16, 20, 24, 27], head_dim=128,
                                           kda_layers=[1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22,
                                                       23, 25, 26], num_heads=32, short_conv_kernel_size=4),
                   mla_use_nope=True, model_max_length=1048576, moe_intermediate_size=1024, moe_layer_freq=1,
                   num_attention_heads=32, num_expert_group=1, num_experts=256, num_experts_per_token=8,
                   num_hidden_layers=27, num_key_value_heads=32, num_nextn_predict_layers=0, num_shared_experts=1,
                   q_lora_rank=None, qk_nope_head_dim=128, qk_rope_head_dim=64, tie_word_embeddings=False,
                   v_head_dim=128, vocab_size=163840)


def test_kimi_linear_reads_as_the_shipped_profile_and_counts_the_checkpoints_tensors(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(KIMI_LINEAR))
    m = spec_from_hf_config(path)
    assert architecture(m) == architecture(load_model("kimi-linear-48b-a3b"))
    assert resolve_hf_id("moonshotai/Kimi-Linear-48B-A3B-Instruct") == ("profile", "kimi-linear-48b-a3b")
    assert [i for i, s in enumerate(m.layers) if s.mixer == "full"] == [3, 7, 11, 15, 19, 23, 26]   # 1-indexed
    assert m.position == "none" and m.moe.first_dense_layers == 1
    # the report's 49,122,681,728 tensor elements: ours + 26 routers' score-correction biases (26 x 256)
    assert m.total_params() + 26 * 256 == 49_122_681_728
    # a KDA layer's tensors: q/k/v [4096, 2304], b [32, 2304], f_a / g_a [128, 2304], f_b / g_b [4096, 128], three
    # convs [4096, 1, 4], A_log 32, dt_bias 4096 (per channel), o_norm 128, o_proj [2304, 4096]
    kda = 3 * 4096 * 2304 + 32 * 2304 + 2 * 128 * 2304 + 2 * 4096 * 128 + 3 * 4096 * 4 + 32 + 4096 + 128 + 2304 * 4096
    assert m.mixer_params(0) == kda == 39_514_272
    # an MLA layer (no q LoRA): q [6144, 2304], kv_a [576, 2304], kv_a_layernorm 512, kv_b [8192, 512], o
    assert m.mixer_params(3) == 6144 * 2304 + 576 * 2304 + 512 + 8192 * 512 + 2304 * 4096
    # KV: 7 MLA layers x 576 latents x 2 B; state: 20 KDA layers x (32 x 128 x 128 fp32 + 3 convs x 3 x 4096 x 2 B)
    assert m.cache_summary(2) == {"kv_bytes_per_token": 7 * 576 * 2.0, "windowed_kv_bytes_max": 0.0,
                                  "state_bytes_per_sequence": 20 * (32 * 128 * 128 * 4 + 3 * 3 * 4096 * 2.0)}
    # transformers' layer_types spelling reads the same
    types = ["full_attention" if s.mixer == "full" else "linear_attention" for s in m.layers]
    path.write_text(json.dumps({**KIMI_LINEAR, "layer_types": types}))
    assert architecture(spec_from_hf_config(path)) == architecture(m)


@pytest.mark.parametrize("change, field", [
    ({"linear_attn_config": {**KIMI_LINEAR["linear_attn_config"], "kda_layers": [1, 2, 3]}}, "full_attn_layers"),
    ({"layer_types": ["full_attention"] * 26}, "layer_types"),
    ({"mlp_layer_types": ["sparse", "dense"] + ["sparse"] * 25}, "mlp_layer_types"),
    ({"linear_attn_config": None}, "linear_attn_config")])
def test_kimi_linear_refuses_a_layer_plan_it_cannot_place(tmp_path, change, field):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**KIMI_LINEAR, **change}))
    with pytest.raises(WhatifError, match=f"field '(linear_attn_config.)?{field}'"):
        spec_from_hf_config(path)
