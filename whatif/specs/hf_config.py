"""Read a Hugging Face config.json (no network) into a ModelSpec.

Each supported `model_type` maps its own field names onto the ModelSpec schema (the same mapping the
shipped YAML profiles use); the result goes through `spec_from_dict`, so it is validated exactly like
a YAML profile. What a config says that the spec cannot express is ignored, as in the profiles:

* sliding-window attention of mistral, qwen2 and phi3 configs: modelled as full attention (the families of
  hf_families.py read their per-layer kinds: gpt_oss, gemma2/3, llama4, qwen3_next/qwen3_5, nemotron_h);
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
from .hf_families import FAMILY_BUILDERS
from .hf_fields import HFConfig, decoder
from .profiles import absolute
from .safe_yaml import parse_json, read_text


# ---------------------------------------------------------------- per model_type

def _llama(c: HFConfig) -> dict:
    d = decoder(c)
    bias = c.flag("attention_bias", False)          # LlamaAttention: one flag for q, k, v and o
    d.update(qkv_bias=bias, o_bias=bias, mlp_bias=c.flag("mlp_bias", False))
    return d


def _mistral(c: HFConfig) -> dict:
    return decoder(c)                              # sliding_window ignored (see module docstring)


def _mixtral(c: HFConfig) -> dict:
    d = decoder(c)
    d["moe"] = dict(num_experts=c.req("num_local_experts"), experts_per_token=c.req("num_experts_per_tok"),
                    expert_intermediate_size=d["intermediate_size"])
    return d


def _qwen2(c: HFConfig) -> dict:
    d = decoder(c)
    d["qkv_bias"] = True                            # Qwen2 hard-codes biases on q/k/v (not o, not the MLP)
    return d


def _qwen3(c: HFConfig) -> dict:
    d = decoder(c)                                 # q/k RMSNorm weights not counted
    bias = c.flag("attention_bias", False)
    d.update(qkv_bias=bias, o_bias=bias)
    return d


def _phi3(c: HFConfig) -> dict:
    return decoder(c)


def _phi(c: HFConfig) -> dict:
    d = decoder(c)                                 # partial_rotary_factor changes no size
    d.update(mlp="plain", norm="layernorm", qkv_bias=True, o_bias=True, mlp_bias=True, parallel_block=True)
    return d


OPT_POSITION_OFFSET = 2     # OPTLearnedPositionalEmbedding has max_position_embeddings + 2 rows


def _opt(c: HFConfig) -> dict:
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
    "llama": _llama,
    "mistral": _mistral,
    "mixtral": _mixtral,
    "opt": _opt,
    "phi": _phi,
    "phi3": _phi3,
    "qwen2": _qwen2,
    "qwen3": _qwen3,
    **FAMILY_BUILDERS,
}
SUPPORTED_MODEL_TYPES = tuple(sorted(_BUILDERS))


def hf_config_fields(path: Path) -> dict:
    """The model-profile fields of a Hugging Face config.json (models.spec_from_hf_config checks them into a
    ModelSpec); name: the folder (or the file stem), source: the path."""
    path = Path(path)
    raw = parse_json(read_text(path, "Hugging Face config.json"), str(path), non_finite=True)
    if not isinstance(raw, dict):
        raise WhatifError(f"{path}: expected a JSON object at the top level (a Hugging Face config.json)")
    supported = ", ".join(SUPPORTED_MODEL_TYPES)
    model_type = raw.get("model_type")
    if model_type is None:
        raise WhatifError(f"{path}: missing field 'model_type'; supported: {supported}")
    if not isinstance(model_type, str) or model_type not in _BUILDERS:
        raise WhatifError(f"{path}: field 'model_type' is {shown(model_type)}, which is not supported; "
                          f"supported: {supported}")
    data = _BUILDERS[model_type](HFConfig(raw, path, model_type))
    data.update(name=config_name(path), family=model_type, source=str(path))
    return data


def config_name(path: Path) -> str:
    """The model's name from where its config.json lies: org/name in the hub cache's layout
    (models--org--name/snapshots/REV/config.json, the file itself a link into blobs/, so not resolved), else
    its folder, else the file's stem."""
    if path.name != "config.json":
        return path.stem
    folder = absolute(path).parent
    if folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        return folder.parent.parent.name[len("models--"):].replace("--", "/", 1)
    return folder.name or path.stem
