"""The model-profile schema's per-layer and sub-spec fields (model_layers.py), checked into ModelSpec keywords:
types, ranges, and what each layer kind needs (a window for sliding layers, a spec for recurrent ones)."""
from __future__ import annotations

from dataclasses import MISSING, fields

from ..errors import WhatifError, check_mapping, shown
from .checks import MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_WIDTH, boolean, integer, mapping, number, string
from .model_layers import FFN_KINDS, MIXER_KINDS, STATE_DTYPE_BYTES

# section key -> its class in model_sections.py (imported when a profile has a section: a dense model's needs none)
SUB_SPECS = {"moe": "MoESpec", "mla": "MLASpec", "indexer": "IndexerSpec", "linear_attention": "LinearAttentionSpec",
             "mamba": "MambaSpec", "encoder": "EncoderSpec"}
LAYER_FIELDS = ("layer_types", "ffn_types", "nope_layers", "sliding_window", "attention_chunk_size",
                "attention_sinks", "attention_output_gate", "qk_layer_norm", "sandwich_norm", "attn_logit_softcapping",
                "final_logit_softcapping", "global_head_dim", "global_kv_heads", "attention_k_eq_v")
_BOUNDS = {"num_experts": MAX_HEADS, "experts_per_token": MAX_HEADS, "shared_experts": MAX_HEADS,
           "first_dense_layers": MAX_LAYERS, "moe_layer_frequency": MAX_LAYERS, "moe_layer_offset": MAX_LAYERS,
           "heads": MAX_HEADS, "key_heads": MAX_HEADS, "value_heads": MAX_HEADS, "n_groups": MAX_HEADS,
           "top_k": MAX_TOKENS, "chunk_size": MAX_TOKENS, "params": 1 << 50, "topk_freq": MAX_LAYERS,
           "skip_topk_offset": MAX_LAYERS}      # others: MAX_WIDTH
_ZERO_OK = ("shared_experts", "first_dense_layers", "moe_layer_offset", "shared_expert_intermediate_size",
            "q_lora_rank", "skip_topk_offset", "gate_rank")
LINEAR_GATES = ("head", "channel")     # GDN's scalar decay a head; KDA's a key channel


def sub_spec(cls, raw, where: str):
    """A sub-spec from its mapping: integers positive (or >= 0 where 0 means 'none'), flags, names."""
    check_mapping(raw, {f.name for f in fields(cls)}, where)
    values = {}
    for f in fields(cls):
        if f.name not in raw:
            if f.default is MISSING:
                raise WhatifError(f"{where}: missing field '{f.name}'")
            continue
        at, value = f"{where}.{f.name}", raw[f.name]
        if isinstance(f.default, bool):
            values[f.name] = boolean(value, at)
        elif f.name == "state_dtype":
            if value not in STATE_DTYPE_BYTES and value != "":
                raise WhatifError(f"{at}: {shown(value)} is not valid; valid: {', '.join(STATE_DTYPE_BYTES)}")
            values[f.name] = value
        elif f.type == "str":
            values[f.name] = string(value, at, max_len=200, empty=f.name != "kind")
        else:
            low = 0 if f.name in _ZERO_OK else 1
            values[f.name] = integer(value, at, low, _BOUNDS.get(f.name, MAX_WIDTH))
    if "gate" in values and values["gate"] not in LINEAR_GATES:
        raise WhatifError(f"{where}.gate: {shown(values['gate'])} is not valid; valid: {', '.join(LINEAR_GATES)}")
    if values.get("gate") == "channel" and not values.get("gate_rank"):
        raise WhatifError(f"{where}.gate_rank: a channel gate needs the rank of its low-rank f / g projections")
    spec = cls(**values)
    from .model_sections import MoESpec   # (loaded already: `cls` is one of its classes)
    if isinstance(spec, MoESpec) and spec.moe_layer_offset >= spec.moe_layer_frequency:
        raise WhatifError(f"{where}.moe_layer_offset: {spec.moe_layer_offset} must be below moe_layer_frequency "
                          f"({spec.moe_layer_frequency})")
    return spec


def _kinds(value, where: str, valid: tuple, layers: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or len(value) > layers:
        raise WhatifError(f"{where}: expected a list of 1 to {layers} kinds (repeated over the layers); "
                          f"got {shown(value)}")
    for k in value:
        if k not in valid:
            raise WhatifError(f"{where}: {shown(k)} is not valid; valid: {', '.join(valid)}")
    return tuple(value[i % len(value)] for i in range(layers))   # one per layer: the canonical form


def layer_fields(data: dict, where: str) -> dict:
    """Pop the per-layer and sub-spec fields out of `data` into ModelSpec keywords, checked together."""
    layers = data["num_layers"]
    out: dict = {}
    for key, name in SUB_SPECS.items():
        raw = data.pop(key, None)
        if raw is not None:
            from . import model_sections
            out[key] = sub_spec(getattr(model_sections, name), mapping(raw, f"{where}.{key}"), f"{where}.{key}")
    if "layer_types" in data:
        out["layer_types"] = _kinds(data.pop("layer_types"), f"{where}.layer_types", MIXER_KINDS, layers)
    if "ffn_types" in data:
        out["ffn_types"] = _kinds(data.pop("ffn_types"), f"{where}.ffn_types", FFN_KINDS, layers)
    if "nope_layers" in data:
        raw = data.pop("nope_layers")
        if not isinstance(raw, list):
            raise WhatifError(f"{where}.nope_layers: expected a list of layer indices, got {shown(raw)}")
        out["nope_layers"] = tuple(integer(i, f"{where}.nope_layers", 0, layers - 1) for i in raw)
    for key in ("sliding_window", "attention_chunk_size"):
        if key in data:
            out[key] = integer(data.pop(key), f"{where}.{key}", 0, MAX_TOKENS, "tokens")
    if "global_head_dim" in data:
        out["global_head_dim"] = integer(data.pop("global_head_dim"), f"{where}.global_head_dim", 0, MAX_WIDTH)
    if "global_kv_heads" in data:
        kvh = out["global_kv_heads"] = integer(data.pop("global_kv_heads"), f"{where}.global_kv_heads", 0, MAX_HEADS)
        if kvh and data["num_heads"] % kvh:
            raise WhatifError(f"{where}.global_kv_heads: {kvh} must divide num_heads ({data['num_heads']})")
    for key in ("attention_sinks", "attention_output_gate", "qk_layer_norm", "sandwich_norm", "attention_k_eq_v"):
        if key in data:
            out[key] = boolean(data.pop(key), f"{where}.{key}")
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        if key in data:
            out[key] = number(data.pop(key), f"{where}.{key}", 0.0, 1e6)
    _needs(out, where, layers)
    return out


def _needs(out: dict, where: str, layers: int) -> None:
    """What each kind used needs, and specs nothing uses."""
    mixers, ffns = set(out.get("layer_types", ("full",))), set(out.get("ffn_types", ()))
    needs = {"sliding": ("sliding_window", "a window in tokens"),
             "chunked": ("attention_chunk_size", "a chunk in tokens"),
             "linear": ("linear_attention", "a linear_attention mapping"), "mamba2": ("mamba", "a mamba mapping")}
    for kind, (key, what) in needs.items():
        if kind in mixers and not out.get(key):
            raise WhatifError(f"{where}.{key}: layer_types has '{kind}' layers; give {what}")
    if "moe" in ffns and "moe" not in out:
        raise WhatifError(f"{where}.moe: ffn_types has 'moe' layers; give a moe mapping")
    if "mla" in out and (out.get("global_head_dim") or out.get("global_kv_heads") or out.get("attention_k_eq_v")):
        raise WhatifError(f"{where}.global_head_dim: a full-attention layer shape of its own needs GQA attention, "
                          f"not MLA")
    if "indexer" in out and "mla" not in out:
        raise WhatifError(f"{where}.indexer: DeepSeek Sparse Attention's indexer needs MLA (an mla mapping)")
    moe = out.get("moe")
    if moe is not None and moe.experts_per_token > moe.num_experts:
        raise WhatifError(f"{where}.moe.experts_per_token: {moe.experts_per_token} must be between 1 and "
                          f"num_experts ({moe.num_experts})")
    if moe is not None and moe.first_dense_layers > layers:
        raise WhatifError(f"{where}.moe.first_dense_layers: {moe.first_dense_layers} is more than num_layers "
                          f"({layers})")
