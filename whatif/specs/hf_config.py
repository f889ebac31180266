"""Read a Hugging Face config.json (no network) into a ModelSpec.

Each supported `model_type` maps its own field names onto the ModelSpec schema (the same mapping the
shipped YAML profiles use); the result goes through `spec_from_dict`, so it is validated exactly like
a YAML profile. What a config says that the spec cannot express is ignored, as in the profiles:

* sliding-window attention (mistral, qwen2, phi3): modelled as full attention;
* partial rotary (phi): RoPE on part of each head changes neither parameters nor the KV cache;
* Qwen3's per-head q/k RMSNorm weights, phi-2's lm_head bias, DeepSeek-V3's router
  e_score_correction_bias and Qwen2-MoE's shared-expert gate: a few thousand parameters, not counted;
* DeepSeek's multi-token-prediction layers (num_nextn_predict_layers): not counted;
* OPT's learned position table has 2 offset rows beyond max_position_embeddings, so the spec's
  max_position_embeddings is the config's + 2 (the table size; the parameter count then matches).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import WhatifError, shown
from .safe_yaml import parse_json, read_text


class _Config:
    """Typed access to one config.json mapping; every error names the file and the field."""

    def __init__(self, raw: dict, path: Path, model_type: str):
        self.raw = raw
        self.path = path
        self.model_type = model_type

    def _check_int(self, key: str, value, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            want = "a positive integer" if minimum >= 1 else "an integer >= 0"
            raise WhatifError(f"{self.path}: field '{key}' is {shown(value)}; expected {want}")
        return value

    def req(self, key: str) -> int:
        """A required positive integer field."""
        if self.raw.get(key) is None:
            raise WhatifError(f"{self.path}: missing field '{key}' (required for model_type "
                              f"'{self.model_type}'; expected a positive integer)")
        return self._check_int(key, self.raw[key], 1)

    def opt_int(self, key: str, default: int, minimum: int = 1) -> int:
        """An optional integer field; absent or null -> default."""
        value = self.raw.get(key)
        return default if value is None else self._check_int(key, value, minimum)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise WhatifError(f"{self.path}: field '{key}' is {shown(value)}; expected true or false")
        return value

    def unsupported(self, key: str, why: str):
        return WhatifError(f"{self.path}: field '{key}' = {shown(self.raw.get(key))} is not supported: {why}")


# ---------------------------------------------------------------- per model_type

def _decoder(c: _Config, *, tie_default: bool = False, head_dim: int | None = None) -> dict:
    """The fields every RoPE decoder shares (llama-style names)."""
    hidden, heads = c.req("hidden_size"), c.req("num_attention_heads")
    return dict(
        hidden_size=hidden,
        num_layers=c.req("num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=c.opt_int("num_key_value_heads", heads),
        head_dim=head_dim if head_dim is not None else c.opt_int("head_dim", hidden // heads),
        intermediate_size=c.req("intermediate_size"),
        vocab_size=c.req("vocab_size"),
        max_position_embeddings=c.req("max_position_embeddings"),
        mlp="gated", norm="rmsnorm", position="rope",
        tie_word_embeddings=c.flag("tie_word_embeddings", tie_default),
    )


def _llama(c: _Config) -> dict:
    d = _decoder(c)
    bias = c.flag("attention_bias", False)          # LlamaAttention: one flag for q, k, v and o
    d.update(qkv_bias=bias, o_bias=bias, mlp_bias=c.flag("mlp_bias", False))
    return d


def _mistral(c: _Config) -> dict:
    return _decoder(c)                              # sliding_window ignored (see module docstring)


def _mixtral(c: _Config) -> dict:
    d = _decoder(c)
    d["moe"] = dict(num_experts=c.req("num_local_experts"), experts_per_token=c.req("num_experts_per_tok"),
                    expert_intermediate_size=d["intermediate_size"])
    return d


def _qwen2(c: _Config) -> dict:
    d = _decoder(c)
    d["qkv_bias"] = True                            # Qwen2 hard-codes biases on q/k/v (not o, not the MLP)
    return d


def _qwen2_moe(c: _Config) -> dict:
    d = _qwen2(c)
    if c.raw.get("mlp_only_layers"):
        raise c.unsupported("mlp_only_layers", "the spec can only make leading layers dense")
    if c.opt_int("decoder_sparse_step", 1) != 1:
        raise c.unsupported("decoder_sparse_step", "only 1 (every layer MoE) is supported")
    expert = c.req("moe_intermediate_size")
    shared = c.opt_int("shared_expert_intermediate_size", 0, minimum=0)
    if shared % expert:
        raise c.unsupported("shared_expert_intermediate_size",
                            f"it must be a multiple of moe_intermediate_size ({expert})")
    d["moe"] = dict(num_experts=c.req("num_experts"), experts_per_token=c.req("num_experts_per_tok"),
                    expert_intermediate_size=expert, shared_experts=shared // expert)
    return d


def _qwen3(c: _Config) -> dict:
    d = _decoder(c)                                 # q/k RMSNorm weights not counted
    bias = c.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias)
    return d


def _phi3(c: _Config) -> dict:
    return _decoder(c)


def _phi(c: _Config) -> dict:
    d = _decoder(c)                                 # partial_rotary_factor changes no size
    d.update(mlp="plain", norm="layernorm", qkv_bias=True, o_bias=True, mlp_bias=True, parallel_block=True)
    return d


def _deepseek(c: _Config) -> dict:
    rope, nope = c.req("qk_rope_head_dim"), c.req("qk_nope_head_dim")
    d = _decoder(c, head_dim=rope + nope)
    d["num_kv_heads"] = d["num_heads"]              # MLA: every head gets its own K/V from the latent
    d["mla"] = dict(kv_lora_rank=c.req("kv_lora_rank"), qk_rope_head_dim=rope, qk_nope_head_dim=nope,
                    v_head_dim=c.req("v_head_dim"), q_lora_rank=c.opt_int("q_lora_rank", 0, minimum=0))
    if c.raw.get("n_routed_experts") is not None:
        d["moe"] = dict(num_experts=c.req("n_routed_experts"), experts_per_token=c.req("num_experts_per_tok"),
                        expert_intermediate_size=c.req("moe_intermediate_size"),
                        shared_experts=c.opt_int("n_shared_experts", 0, minimum=0),
                        first_dense_layers=c.opt_int("first_k_dense_replace", 0, minimum=0),
                        moe_layer_frequency=c.opt_int("moe_layer_freq", 1))
    return d


OPT_POSITION_OFFSET = 2     # OPTLearnedPositionalEmbedding has max_position_embeddings + 2 rows


def _opt(c: _Config) -> dict:
    hidden, heads = c.req("hidden_size"), c.req("num_attention_heads")
    proj = c.opt_int("word_embed_proj_dim", hidden)
    if proj != hidden:
        raise c.unsupported("word_embed_proj_dim", f"it differs from hidden_size ({hidden}); OPT models with an "
                                                   f"embedding projection (opt-350m) have no spec field")
    bias = c.flag("enable_bias", True)
    return dict(
        hidden_size=hidden,
        num_layers=c.req("num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=heads,
        head_dim=hidden // heads,
        intermediate_size=c.req("ffn_dim"),
        vocab_size=c.req("vocab_size"),
        max_position_embeddings=c.req("max_position_embeddings") + OPT_POSITION_OFFSET,
        mlp="plain", norm="layernorm", position="learned",
        tie_word_embeddings=c.flag("tie_word_embeddings", True),
        qkv_bias=bias, o_bias=bias, mlp_bias=bias,
    )


_BUILDERS = {
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "opt": _opt,
    "phi": _phi,
    "phi3": _phi3,
    "qwen2": _qwen2,
    "qwen2_moe": _qwen2_moe,
    "qwen3": _qwen3,
}
SUPPORTED_MODEL_TYPES = tuple(sorted(_BUILDERS))


def hf_config_fields(path: Path) -> dict:
    """The model-profile fields of a Hugging Face config.json (models.spec_from_hf_config checks them into a
    ModelSpec); name: the folder (or the file stem), source: the path."""
    path = Path(path)
    raw = parse_json(read_text(path, "Hugging Face config.json"), str(path))
    if not isinstance(raw, dict):
        raise WhatifError(f"{path}: expected a JSON object at the top level (a Hugging Face config.json)")
    supported = ", ".join(SUPPORTED_MODEL_TYPES)
    model_type = raw.get("model_type")
    if model_type is None:
        raise WhatifError(f"{path}: missing field 'model_type'; supported: {supported}")
    if not isinstance(model_type, str) or model_type not in _BUILDERS:
        raise WhatifError(f"{path}: field 'model_type' is {shown(model_type)}, which is not supported; "
                          f"supported: {supported}")
    data = _BUILDERS[model_type](_Config(raw, path, model_type))
    if path.name == "config.json":
        name = path.resolve().parent.name or path.stem
    else:
        name = path.stem
    data.update(name=name, family=model_type, source=str(path))
    return data
