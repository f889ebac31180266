"""Hugging Face readers of the 2025-26 families: per-layer attention kinds, hybrid and sparse attention, nested
text configs of multimodal releases (their vision tower counted as an encoder, not priced per token).

Not counted, as in the older readers: per-head q/k norm weights (Qwen3, MiniMax-M2, GLM, Gemma 3), routers'
score-correction biases, Qwen3-Next's shared-expert gate weights (hidden_size a layer; its ops are priced:
MoESpec.shared_expert_gate), Qwen3-VL's DeepStack mergers, multi-token-prediction modules
(`num_nextn_predict_layers`, `mtp_*`: used only for speculative decoding). A llama4 config without a
`vision_config` has no encoder counted.

Long because: one small reader per family (27 model types) beside the helpers several share (_dense_lead,
_index_share, nested_text); split by family they would import each other.
"""
from __future__ import annotations

from .hf_fields import HFConfig, decoder, vision_tower_params
from .model_sections import owns_indexer

ATTENTION_TYPES = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked",
                   "linear_attention": "linear"}
NEMOTRON_BLOCKS = {"M": ("mamba2", "none"), "*": ("full", "none"), "-": ("none", "dense"), "E": ("none", "moe")}


def nested_text(c: HFConfig) -> HFConfig:
    """The text config of a multimodal release (text_config), else the config itself."""
    return c.sub("text_config") or c


def _qwen_ffn(c: HFConfig, d: dict, layers: int) -> None:
    """Qwen MoE placement: layer i is MoE unless in mlp_only_layers, when (i + 1) % decoder_sparse_step == 0."""
    dense_only = set(c.int_list("mlp_only_layers"))
    step = c.opt_int("decoder_sparse_step", 1)
    if dense_only or step != 1:
        d["ffn_types"] = ["dense" if i in dense_only or (i + 1) % step else "moe" for i in range(layers)]


def _qwen_moe_spec(c: HFConfig) -> dict:
    shared = c.opt_int("shared_expert_intermediate_size", 0, minimum=0)
    return dict(num_experts=c.req("num_experts"), experts_per_token=c.req("num_experts_per_tok"),
                expert_intermediate_size=c.req("moe_intermediate_size"), shared_experts=1 if shared else 0,
                shared_expert_intermediate_size=shared, shared_expert_gate=bool(shared))


def qwen_moe(c: HFConfig, qkv_bias: bool) -> dict:
    """qwen2_moe and qwen3_moe: every layer MoE unless mlp_only_layers / decoder_sparse_step say otherwise."""
    d = decoder(c)
    bias = qkv_bias or c.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias and not qkv_bias, moe=_qwen_moe_spec(c))
    _qwen_ffn(c, d, d["num_layers"])
    return d


def _layer_types(c: HFConfig, d: dict) -> None:
    types = c.str_list("layer_types", ATTENTION_TYPES)
    if types is not None:
        d["layer_types"] = types


def gpt_oss(c: HFConfig) -> dict:
    """gpt-oss: alternating sliding-window (128) and full attention with learned sinks, every layer MoE with
    biased experts and router."""
    d = decoder(c)
    bias = c.flag("attention_bias", True)
    experts = c.raw.get("num_local_experts")
    d.update(qkv_bias=bias, o_bias=bias, mlp_bias=True, attention_sinks=True,
             sliding_window=c.opt_int("sliding_window", 0, minimum=0))
    top_k = c.opt_int("num_experts_per_tok", 0, minimum=0) or c.req("experts_per_token")
    d["moe"] = dict(num_experts=c.req("num_local_experts") if experts is not None else c.req("num_experts"),
                    experts_per_token=top_k, expert_intermediate_size=d["intermediate_size"], router_bias=True)
    _layer_types(c, d)
    return d


def minimax_m2(c: HFConfig) -> dict:
    """MiniMax-M2.x: GQA full attention, every layer a 256-expert top-8 MoE (no shared expert)."""
    d = decoder(c)
    d["qk_layer_norm"] = c.flag("use_qk_norm", False) and c.raw.get("qk_norm_type") == "per_layer"
    shared = c.opt_int("shared_intermediate_size", 0, minimum=0)
    d["moe"] = dict(num_experts=c.req("num_local_experts"), experts_per_token=c.req("num_experts_per_tok"),
                    expert_intermediate_size=d["intermediate_size"], shared_experts=1 if shared else 0,
                    shared_expert_intermediate_size=shared, fp32_router=True)
    _layer_types(c, d)
    return d


def glm4_moe(c: HFConfig) -> dict:
    """GLM-4.5/4.6/4.7: GQA with q/k/v biases (attention_bias), leading dense layers, then routed + shared experts."""
    d = decoder(c)
    d.update(qkv_bias=c.flag("attention_bias", False))
    d["moe"] = _deepseek_moe(c)
    return d


def _deepseek_moe(c: HFConfig) -> dict:
    return dict(num_experts=c.req("n_routed_experts"), experts_per_token=c.req("num_experts_per_tok"),
                expert_intermediate_size=c.req("moe_intermediate_size"),
                shared_experts=c.opt_int("n_shared_experts", 0, minimum=0),
                first_dense_layers=c.opt_int("first_k_dense_replace", 0, minimum=0),
                moe_layer_frequency=c.opt_int("moe_layer_freq", 1))


def deepseek(c: HFConfig) -> dict:
    """DeepSeek-V2/V3 and Kimi-K2: MLA + MoE; deepseek_v32 and GLM-5 (glm_moe_dsa) add the DSA indexer."""
    rope, nope = c.req("qk_rope_head_dim"), c.req("qk_nope_head_dim")
    d = decoder(c, head_dim=rope + nope)
    d["num_kv_heads"] = d["num_heads"]              # MLA: every head gets its own K/V from the latent
    d["mla"] = dict(kv_lora_rank=c.req("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                    v_head_dim=c.req("v_head_dim"), q_lora_rank=c.opt_int("q_lora_rank", 0, minimum=0))
    if c.raw.get("n_routed_experts") is not None:
        d["moe"] = _deepseek_moe(c)
    if c.raw.get("index_topk") is not None:
        d["indexer"] = dict(heads=c.req("index_n_heads"), head_dim=c.req("index_head_dim"), top_k=c.req("index_topk"),
                            **_index_share(c, d["num_layers"]))
    return d


INDEXER_TYPES = {"full": "full", "shared": "shared"}


def _index_share(c: HFConfig, layers: int) -> dict:
    """GLM-5.2's IndexShare schedule as vLLM derives it (deepseek_v2.py DeepseekV2MLAAttention: index_topk_freq
    default 1, index_skip_topk_offset default 2; a layer builds its indexer iff max(i - offset + 1, 0) % freq == 0).
    A config's `indexer_types` (transformers' per-layer form) must agree; an `index_topk_pattern` is refused."""
    freq = c.opt_int("index_topk_freq", 1)
    offset = c.opt_int("index_skip_topk_offset", 2, minimum=0)
    if c.raw.get("index_topk_pattern") is not None:
        raise c.unsupported("index_topk_pattern", "a per-layer F/S pattern is not read; index_topk_freq and "
                                                  "index_skip_topk_offset (or null) are")
    types = c.str_list("indexer_types", INDEXER_TYPES)
    derived = ["full" if owns_indexer(i, freq, offset) else "shared" for i in range(layers)]
    if types is not None and types != derived:
        raise c.unsupported("indexer_types", f"it disagrees with the schedule index_topk_freq {freq} and "
                                             f"index_skip_topk_offset {offset} give (as vLLM builds the indexers)")
    return dict(topk_freq=freq, skip_topk_offset=offset) if freq > 1 else {}


MLP_LAYER_TYPES = {"dense": "dense", "sparse": "moe"}


def glm4_moe_lite(c: HFConfig) -> dict:
    """GLM-4.7-Flash: DeepSeek-V3's MLA and GLM-4.5's routed + shared experts (transformers
    models/glm4_moe_lite/modular_glm4_moe_lite.py @008e5743: Glm4MoeLiteAttention(DeepseekV3Attention),
    Glm4MoeLiteMoE(Glm4MoeMoE)). Its dense layers are named by `mlp_layer_types` (default: the first one dense)."""
    d = deepseek(c)
    d["moe"]["first_dense_layers"] = _dense_lead(c, d["num_layers"])
    return d


def _dense_lead(c: HFConfig, layers: int) -> int:
    """The leading dense layers `mlp_layer_types` names (absent: `first_k_dense_replace`, else transformers' default
    of one); a dense layer after a sparse one is refused, naming the field."""
    types = c.str_list("mlp_layer_types", MLP_LAYER_TYPES)
    if types is None:
        types = ["dense"] * c.opt_int("first_k_dense_replace", 1, minimum=0)
        types += ["moe"] * (layers - len(types))
    lead = next((i for i, t in enumerate(types) if t != "dense"), len(types))
    if len(types) != layers or "dense" in types[lead:]:
        raise c.unsupported("mlp_layer_types", f"whatif runs {layers} layers with the dense ones first")
    return lead


def _kimi_linear_layers(c: HFConfig, layers: int) -> list[str]:
    """Kimi-Linear's mixer per layer: `layer_types` (transformers' form), else linear_attn_config's 1-indexed
    full_attn_layers / kda_layers (modular_kimi_linear.py KimiLinearConfig.__post_init__); every layer named once."""
    types = c.str_list("layer_types", ATTENTION_TYPES)
    if types is not None:
        if len(types) != layers or any(t not in ("full", "linear") for t in types):
            raise c.unsupported("layer_types", f"expected {layers} of full_attention / linear_attention")
        return types
    la = c.sub("linear_attn_config")
    full, kda = la.int_list("full_attn_layers", 1), la.int_list("kda_layers", 1)
    if sorted(full + kda) != list(range(1, layers + 1)):
        raise la.unsupported("full_attn_layers", f"full_attn_layers and kda_layers must name layers 1..{layers} "
                                                 f"once each (1-indexed)")
    return ["full" if i + 1 in full else "linear" for i in range(layers)]


def kimi_linear(c: HFConfig) -> dict:
    """Kimi-Linear: Kimi Delta Attention layers (GDN's delta rule and state with a per-channel decay gate) between
    MLA layers without RoPE, DeepSeek-V3's MoE (transformers models/kimi_linear/modular_kimi_linear.py:
    KimiLinearAttention(DeepseekV3Attention) "MLA ... with NoPE", KimiLinearModel deletes rotary_emb;
    KimiLinearDeltaAttention; KimiLinearMoE(DeepseekV3MoE)). vLLM keeps KDA's recurrent state fp32 whatever the
    cache dtype (model_executor/layers/mamba/mamba_utils.py kda_state_dtype: conv states in the model dtype)."""
    raw = dict(c.raw)
    raw.setdefault("max_position_embeddings", raw.get("model_max_length"))   # transformers' attribute_map
    raw.update(n_routed_experts=raw.get("num_experts"), num_experts_per_tok=raw.get("num_experts_per_token"),
               n_shared_experts=raw.get("num_shared_experts"))
    k = HFConfig(raw, c.path, c.model_type, c.prefix)
    if k.sub("linear_attn_config") is None:
        raise k.unsupported("linear_attn_config", "whatif reads KDA's heads, head_dim, conv kernel and layers from it")
    d = deepseek(k)
    d["moe"]["first_dense_layers"] = _dense_lead(k, d["num_layers"])
    d["position"] = "none" if k.flag("mla_use_nope", False) else "rope"
    d["layer_types"] = _kimi_linear_layers(k, d["num_layers"])
    la = k.sub("linear_attn_config")
    heads, dim = la.opt_int("num_heads", 32), la.opt_int("head_dim", 128)   # transformers' defaults
    d["linear_attention"] = dict(key_heads=heads, value_heads=heads, key_head_dim=dim, value_head_dim=dim,
                                 conv_kernel=la.opt_int("short_conv_kernel_size", 4), state_dtype="fp32",
                                 gate="channel", gate_rank=dim)   # f_a / g_a: [head_dim, hidden] (vLLM, transformers)
    return d


def kimi_k25(c: HFConfig) -> dict:
    """Kimi-K2.5: DeepSeek-V3's architecture (384 experts) in text_config, a MoonViT vision tower beside it."""
    d = deepseek(nested_text(c))
    v = c.sub("vision_config")
    if v is not None:
        hidden = v.req("vt_hidden_size")
        merge = v.int_list("merge_kernel_size", 1) or [2, 2]
        patch = v.req("patch_size")
        positions = v.opt_int("init_pos_emb_height", 64) * v.opt_int("init_pos_emb_width", 64)
        params = vision_tower_params(v.req("vt_num_hidden_layers"), hidden, v.req("vt_intermediate_size"),
                                     3 * patch * patch, positions, merge[0] * merge[-1],
                                     v.opt_int("text_hidden_size", d["hidden_size"]))
        d["encoder"] = dict(kind="vision (MoonViT)", params=params, source_fields="vision_config vt_* fields",
                            tower_layers=v.req("vt_num_hidden_layers"), tower_width=hidden,
                            tower_ffn=v.req("vt_intermediate_size"), tower_heads=v.req("vt_num_attention_heads"),
                            patch_size=patch, merge=merge[0] * merge[-1])
    return d


def llama4(c: HFConfig) -> dict:
    """Llama 4: chunked local attention on RoPE layers, full attention on the NoPE ones (every 4th), MoE every
    interleave_moe_layer_step-th layer (routed experts + one shared expert); dense layers intermediate_size_mlp."""
    t = nested_text(c)
    d = decoder(t)
    layers = d["num_layers"]
    flags = t.int_list("no_rope_layers")           # 1: the layer uses RoPE
    if flags and len(flags) != layers:
        raise t.unsupported("no_rope_layers", f"it has {len(flags)} entries; expected one per layer ({layers})")
    rope = [bool(f) for f in flags] or [(i + 1) % t.opt_int("nope_layer_interval", 4) != 0 for i in range(layers)]
    chunk = t.opt_int("attention_chunk_size", 0, minimum=0)
    d["nope_layers"] = [i for i in range(layers) if not rope[i]]
    d["layer_types"] = ["chunked" if rope[i] and chunk else "full" for i in range(layers)]
    d["attention_chunk_size"] = chunk
    step = t.opt_int("interleave_moe_layer_step", 1)
    expert = d["intermediate_size"]
    d["intermediate_size"] = t.opt_int("intermediate_size_mlp", expert)
    d["moe"] = dict(num_experts=t.req("num_local_experts"), experts_per_token=t.req("num_experts_per_tok"),
                    expert_intermediate_size=expert, shared_experts=1, moe_layer_frequency=step,
                    moe_layer_offset=step - 1)
    d["qkv_bias"] = d["o_bias"] = t.flag("attention_bias", False)
    return d


def qwen3_next(c: HFConfig) -> dict:
    """Qwen3-Next and Qwen3.5 (dense and MoE): Gated DeltaNet layers between gated full-attention layers."""
    t = nested_text(c)
    if t.raw.get("intermediate_size") is None and t.raw.get("moe_intermediate_size") is not None:
        t.raw = {**t.raw, "intermediate_size": t.raw["moe_intermediate_size"]}   # all-MoE: no dense MLP to size
    d = decoder(t)
    layers = d["num_layers"]
    _layer_types(t, d)
    if "layer_types" not in d:
        every = t.opt_int("full_attention_interval", 4)
        d["layer_types"] = ["full" if (i + 1) % every == 0 else "linear" for i in range(layers)]
    d["attention_output_gate"] = t.flag("attn_output_gate", True)
    bias = t.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias)
    dtype = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(t.text("mamba_ssm_dtype"), "")
    d["linear_attention"] = dict(key_heads=t.req("linear_num_key_heads"), value_heads=t.req("linear_num_value_heads"),
                                 key_head_dim=t.req("linear_key_head_dim"),
                                 value_head_dim=t.req("linear_value_head_dim"),
                                 conv_kernel=t.opt_int("linear_conv_kernel_dim", 4), state_dtype=dtype)
    if t.raw.get("num_experts"):
        d["moe"] = _qwen_moe_spec(t)
        _qwen_ffn(t, d, layers)
    _qwen_vision(c, d)
    return d


def qwen3_vl(c: HFConfig) -> dict:
    """Qwen3-VL: a Qwen3 decoder in text_config beside a ViT (its DeepStack mergers are not counted)."""
    t = nested_text(c)
    d = decoder(t)
    bias = t.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias)
    if t.raw.get("num_experts"):
        d["moe"] = _qwen_moe_spec(t)
        _qwen_ffn(t, d, d["num_layers"])
    _qwen_vision(c, d)
    return d


def _qwen_vision(c: HFConfig, d: dict) -> None:
    v = c.sub("vision_config")
    if v is None:
        return
    patch, temporal = v.req("patch_size"), v.opt_int("temporal_patch_size", 1)
    merge = v.opt_int("spatial_merge_size", 1)
    params = vision_tower_params(v.req("depth"), v.req("hidden_size"), v.req("intermediate_size"),
                                 3 * temporal * patch * patch, v.opt_int("num_position_embeddings", 0, minimum=0),
                                 merge * merge, v.opt_int("out_hidden_size", d["hidden_size"]))
    d["encoder"] = dict(kind="vision (Qwen ViT)", params=params, source_fields="vision_config")


def nemotron_h(c: HFConfig) -> dict:
    """Nemotron-H / Nemotron-3: single-mixer blocks from hybrid_override_pattern (M Mamba-2, * attention without
    RoPE, - relu2 MLP, E MoE), one norm each."""
    hidden, heads = c.req("hidden_size"), c.req("num_attention_heads")
    layers = c.req("num_hidden_layers")
    pattern = c.raw.get("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != layers or set(pattern) - set(NEMOTRON_BLOCKS):
        raise c.unsupported("hybrid_override_pattern", f"expected {layers} characters of "
                                                       f"{', '.join(NEMOTRON_BLOCKS)} (one per layer)")
    head_dim = c.opt_int("head_dim", 0, minimum=0) or c.opt_int("attention_head_dim", hidden // heads)
    dtype = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(c.text("mamba_ssm_cache_dtype"), "")
    d = dict(hidden_size=hidden, num_layers=layers, num_heads=heads,
             num_kv_heads=c.opt_int("num_key_value_heads", heads), head_dim=head_dim,
             intermediate_size=c.req("intermediate_size"), vocab_size=c.req("vocab_size"),
             max_position_embeddings=c.req("max_position_embeddings"), mlp="plain", norm="rmsnorm", position="none",
             tie_word_embeddings=c.flag("tie_word_embeddings", False), qkv_bias=c.flag("attention_bias", False),
             o_bias=c.flag("attention_bias", False), mlp_bias=c.flag("mlp_bias", False),
             layer_types=[NEMOTRON_BLOCKS[ch][0] for ch in pattern],
             ffn_types=[NEMOTRON_BLOCKS[ch][1] for ch in pattern])
    d["mamba"] = dict(heads=c.req("mamba_num_heads"), head_dim=c.req("mamba_head_dim"),
                      state_size=c.req("ssm_state_size"), n_groups=c.opt_int("n_groups", 1),
                      conv_kernel=c.opt_int("conv_kernel", 4), chunk_size=c.opt_int("chunk_size", 128),
                      proj_bias=c.flag("use_bias", False), conv_bias=c.flag("use_conv_bias", True), state_dtype=dtype)
    if "E" in pattern:
        d["moe"] = dict(num_experts=c.req("n_routed_experts"), experts_per_token=c.req("num_experts_per_tok"),
                        expert_intermediate_size=c.req("moe_intermediate_size"),
                        shared_experts=c.opt_int("n_shared_experts", 0, minimum=0),
                        shared_expert_intermediate_size=c.opt_int("moe_shared_expert_intermediate_size", 0, minimum=0))
    return d


def gemma_text(c: HFConfig) -> dict:
    """Gemma 2 and 3's decoder: local (sliding) and global layers, a norm before and after each half, tied
    embeddings, tanh softcapping (elementwise). Gemma 2 alternates; Gemma 3 has 5 local per global
    (sliding_window_pattern)."""
    t = nested_text(c)
    d = decoder(t, tie_default=True)
    layers = d["num_layers"]
    _layer_types(t, d)
    if "layer_types" not in d:
        every = t.opt_int("sliding_window_pattern", 6 if c.model_type.startswith("gemma3") else 2)
        d["layer_types"] = ["full" if (i + 1) % every == 0 else "sliding" for i in range(layers)]
    d.update(sliding_window=t.opt_int("sliding_window", 0, minimum=0), sandwich_norm=True,
             attn_logit_softcapping=t.opt_float("attn_logit_softcapping"),
             final_logit_softcapping=t.opt_float("final_logit_softcapping"))
    bias = t.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias)
    return d


def gemma(c: HFConfig) -> dict:
    """Gemma 2 and 3 (gemma_text), with Gemma 3's SigLIP tower counted where a vision_config is given."""
    d = gemma_text(c)
    v = c.sub("vision_config")
    if v is not None:   # SigLIP: positions = (image / patch)^2; the projector is a norm and one linear
        patch, hidden = v.req("patch_size"), v.req("hidden_size")
        positions = (v.req("image_size") // patch) ** 2
        tower = vision_tower_params(v.req("num_hidden_layers"), hidden, v.req("intermediate_size"),
                                    3 * patch * patch, positions, 1, d["hidden_size"])
        tower -= hidden * hidden + hidden + d["hidden_size"]    # SigLIP's projector: one linear, no merge MLP
        d["encoder"] = dict(kind="vision (SigLIP)", params=tower, source_fields="vision_config")
    return d


def gemma4_vision_params(v: HFConfig, text_hidden: int) -> int:
    """Gemma 4's vision tower as its tensors list it: per block q/k/v/o (no bias), a gated three-matrix MLP, four
    norms and per-head q/k norms; a patch projection (no bias), a two-axis position table, the standardize
    bias and scale, and the projection into the decoder (its pre-projection norm has no weight)."""
    h, ffn, head = v.req("hidden_size"), v.req("intermediate_size"), v.opt_int("head_dim", 0, minimum=0)
    patch = v.req("patch_size")
    block = 4 * h * h + 3 * h * ffn + 4 * h + 2 * head
    table = 2 * v.req("position_embedding_size") * h
    return v.req("num_hidden_layers") * block + 3 * patch * patch * h + table + 2 * h * v.flag("standardize", False) \
        + h * text_hidden


def gemma4(c: HFConfig) -> dict:
    """Gemma 4 (dense 31B): Gemma 3's local:global layers with the global ones shaped apart (global_head_dim,
    num_global_key_value_heads) and, with attention_k_eq_v, no v_proj (V is k_proj's output, cached beside K).
    The MoE block (26B-A4B), per-layer input embeddings and cross-layer KV sharing (E2B / E4B) are refused."""
    t = nested_text(c)
    if t.flag("enable_moe_block", False):
        raise t.unsupported("enable_moe_block", "Gemma 4's dense MLP beside routed experts in one layer is not read "
                                                "yet (the 31B dense release is)")
    if t.opt_int("hidden_size_per_layer_input", 0, minimum=0):
        raise t.unsupported("hidden_size_per_layer_input", "per-layer input embeddings (Gemma 4 E2B / E4B) are not "
                                                           "modelled; 0 is")
    if t.opt_int("num_kv_shared_layers", 0, minimum=0):
        raise t.unsupported("num_kv_shared_layers", "layers reusing an earlier layer's KV cache are not modelled; "
                                                    "0 is")
    d = gemma_text(c)
    d.update(global_head_dim=t.opt_int("global_head_dim", 0, minimum=0),
             global_kv_heads=t.opt_int("num_global_key_value_heads", 0, minimum=0),
             attention_k_eq_v=t.flag("attention_k_eq_v", False))
    v = c.sub("vision_config")
    if v is not None:
        d["encoder"] = dict(kind="vision (Gemma 4)", params=gemma4_vision_params(v, d["hidden_size"]),
                            source_fields="vision_config (tensor shapes of modeling_gemma4.Gemma4VisionModel)")
    return d


FAMILY_BUILDERS = {
    "qwen2_moe": lambda c: qwen_moe(c, qkv_bias=True),
    "qwen3_moe": lambda c: qwen_moe(c, qkv_bias=False),
    "gpt_oss": gpt_oss,
    "minimax_m2": minimax_m2,
    "glm4_moe": glm4_moe,
    "glm_moe_dsa": deepseek,
    "glm4_moe_lite": glm4_moe_lite,
    "deepseek_v2": deepseek,
    "deepseek_v3": deepseek,
    "deepseek_v32": deepseek,
    "kimi_k2": deepseek,
    "kimi_k25": kimi_k25,
    "kimi_linear": kimi_linear,
    "llama4": llama4,
    "llama4_text": llama4,
    "qwen3_next": qwen3_next,
    "qwen3_5": qwen3_next,
    "qwen3_5_text": qwen3_next,
    "qwen3_5_moe": qwen3_next,
    "qwen3_5_moe_text": qwen3_next,
    "qwen3_vl": qwen3_vl,
    "qwen3_vl_moe": qwen3_vl,
    "nemotron_h": nemotron_h,
    "gemma2": gemma,
    "gemma3": gemma,
    "gemma3_text": gemma,
    "gemma4": gemma4,
    "gemma4_text": gemma4,
}
