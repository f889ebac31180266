"""Model specs: one frozen dataclass, read from model_profiles/*.yaml or a Hugging Face config.json.

The spec holds only architecture facts; parameter counts and KV bytes are derived from it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path

from ..errors import WhatifError, check_mapping, closest, shown
from .checks import (MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_VOCAB, MAX_WIDTH, boolean, integer, is_file,
                     mapping, string)
from .hf_config import hf_config_fields
from .hf_ids import is_hf_id, resolve_hf_id
from .profiles import MODEL_DIR, looks_like_path, profile_index, read_yaml

MLP_KINDS = ("gated", "plain")
NORM_KINDS = ("rmsnorm", "layernorm")
POSITION_KINDS = ("rope", "learned", "alibi", "none")


@dataclass(frozen=True)
class MoESpec:
    num_experts: int                   # routed experts per MoE layer
    experts_per_token: int             # top-k
    expert_intermediate_size: int
    shared_experts: int = 0            # always-active experts (DeepSeek)
    first_dense_layers: int = 0        # leading layers with a dense MLP instead (DeepSeek: 3)
    moe_layer_frequency: int = 1       # every n-th layer (after the dense ones) is MoE


@dataclass(frozen=True)
class MLASpec:
    """Multi-head latent attention (DeepSeek-V2/V3): KV compressed to a latent plus a RoPE key."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int = 0               # 0: queries are projected directly (no low-rank Q)


@dataclass(frozen=True)
class ModelSpec:
    name: str
    family: str
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    mlp: str = "gated"                 # gated: gate+up+down (SwiGLU); plain: up+down (GELU)
    norm: str = "rmsnorm"
    position: str = "rope"
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    parallel_block: bool = False       # attention and MLP read the same normed input (phi-2, GPT-J)
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    source: str = ""

    # ------------------------------------------------------------ derived structure

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def is_moe_layer(self, layer: int) -> bool:
        m = self.moe
        if m is None or layer < m.first_dense_layers:
            return False
        return (layer - m.first_dense_layers) % m.moe_layer_frequency == 0

    @property
    def num_moe_layers(self) -> int:
        return sum(self.is_moe_layer(i) for i in range(self.num_layers))

    def kv_elements_per_token(self) -> int:
        """Cached elements per token over all layers (K and V; MLA: latent + RoPE key)."""
        if self.mla is not None:
            return self.num_layers * (self.mla.kv_lora_rank + self.mla.qk_rope_head_dim)
        return 2 * self.num_layers * self.kv_dim

    # ------------------------------------------------------------ parameter counts

    def attention_params(self) -> int:
        d = self.hidden_size
        if self.mla is not None:
            a = self.mla
            qk_head = a.qk_nope_head_dim + a.qk_rope_head_dim
            if a.q_lora_rank:
                q = d * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * self.num_heads * qk_head
            else:
                q = d * self.num_heads * qk_head
            kv_down = d * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank  # + latent norm
            kv_up = a.kv_lora_rank * self.num_heads * (a.qk_nope_head_dim + a.v_head_dim)
            o = self.num_heads * a.v_head_dim * d
            return q + kv_down + kv_up + o
        qkv = d * (self.q_dim + 2 * self.kv_dim) + (self.q_dim + 2 * self.kv_dim) * self.qkv_bias
        o = self.q_dim * d + d * self.o_bias
        return qkv + o

    def dense_mlp_params(self, intermediate: int | None = None) -> int:
        i = intermediate or self.intermediate_size
        d = self.hidden_size
        mats = 3 if self.mlp == "gated" else 2
        bias = (i * (mats - 1) + d) * self.mlp_bias
        return mats * d * i + bias

    def norm_params(self) -> int:
        return self.hidden_size * (2 if self.norm == "layernorm" else 1)

    def layer_params(self, layer: int) -> int:
        """All parameters of one layer (MoE: every expert)."""
        norms = self.norm_params() * (1 if self.parallel_block else 2)
        if self.is_moe_layer(layer):
            m = self.moe
            experts = (m.num_experts + m.shared_experts) * self.dense_mlp_params(m.expert_intermediate_size)
            mlp = experts + self.hidden_size * m.num_experts  # + router
        else:
            mlp = self.dense_mlp_params()
        return self.attention_params() + mlp + norms

    def embedding_params(self) -> int:
        pos = self.max_position_embeddings * self.hidden_size if self.position == "learned" else 0
        return self.vocab_size * self.hidden_size + pos

    def lm_head_params(self) -> int:
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    def total_params(self) -> int:
        layers = sum(self.layer_params(i) for i in range(self.num_layers))
        return self.embedding_params() + layers + self.norm_params() + self.lm_head_params()

    def active_params_per_token(self) -> int:
        """Parameters a token touches in a forward pass (MoE: top-k + shared experts)."""
        total = self.total_params()
        if self.moe is None:
            return total
        m = self.moe
        per_expert = self.dense_mlp_params(m.expert_intermediate_size)
        idle = (m.num_experts - m.experts_per_token) * per_expert * self.num_moe_layers
        return total - idle


# ---------------------------------------------------------------- loading

_SIMPLE = {f.name for f in fields(ModelSpec)} - {"moe", "mla"}
# each integer field and its stated physical bound (checks.py says why each is far above any real model)
_INT_FIELDS = {"hidden_size": MAX_WIDTH, "num_layers": MAX_LAYERS, "num_heads": MAX_HEADS,
               "num_kv_heads": MAX_HEADS, "head_dim": MAX_WIDTH, "intermediate_size": MAX_WIDTH,
               "vocab_size": MAX_VOCAB, "max_position_embeddings": MAX_TOKENS}
_BOOL_FIELDS = ("tie_word_embeddings", "qkv_bias", "o_bias", "mlp_bias", "parallel_block")
_SUB_BOUNDS = {"num_experts": MAX_HEADS, "experts_per_token": MAX_HEADS, "shared_experts": MAX_HEADS,
               "first_dense_layers": MAX_LAYERS, "moe_layer_frequency": MAX_LAYERS}   # others: MAX_WIDTH
_SUB_POSITIVE = ("num_experts", "experts_per_token", "expert_intermediate_size", "moe_layer_frequency",
                 "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")


def _sub(cls, raw, where: str):
    check_mapping(raw, {f.name for f in fields(cls)}, where)
    values = {}
    for f in fields(cls):
        if f.name in raw:
            low = 1 if f.name in _SUB_POSITIVE else 0
            values[f.name] = integer(raw[f.name], f"{where}.{f.name}", low, _SUB_BOUNDS.get(f.name, MAX_WIDTH))
    try:
        return cls(**values)
    except TypeError as exc:
        raise WhatifError(f"{where}: {exc}") from None


def spec_from_dict(data: dict, where: str) -> ModelSpec:
    """Validate a model mapping (the YAML schema) into a ModelSpec: every field's type and range."""
    data = dict(data)
    check_mapping(data, _SIMPLE | {"moe", "mla"}, where)
    for key in ("name", "family", *[k for k in _INT_FIELDS if k != "head_dim"]):
        if key not in data:
            raise WhatifError(f"{where}: missing field '{key}'")
    for key in ("name", "family"):
        string(data[key], f"{where}.{key}")
    if "source" in data:
        string(data["source"], f"{where}.source", max_len=1000, empty=True)
    for key in (k for k in _INT_FIELDS if k != "head_dim"):
        integer(data[key], f"{where}.{key}", 1, _INT_FIELDS[key])
    if "head_dim" not in data:
        data["head_dim"] = data["hidden_size"] // data["num_heads"]
    integer(data["head_dim"], f"{where}.head_dim", 1, _INT_FIELDS["head_dim"])
    for key in _BOOL_FIELDS:
        if key in data:
            boolean(data[key], f"{where}.{key}")
    for key, valid in (("mlp", MLP_KINDS), ("norm", NORM_KINDS), ("position", POSITION_KINDS)):
        if key in data and (not isinstance(data[key], str) or data[key] not in valid):
            raise WhatifError(f"{where}.{key}: {shown(data[key])} is not valid; valid: {', '.join(valid)}")
    if data["num_heads"] % data["num_kv_heads"]:
        raise WhatifError(f"{where}.num_kv_heads: {data['num_kv_heads']} must divide num_heads ({data['num_heads']})")
    for key in ("moe", "mla"):
        if data.get(key) is not None:
            mapping(data[key], f"{where}.{key}")
    moe = _sub(MoESpec, data.pop("moe"), f"{where}.moe") if data.get("moe") else None
    mla = _sub(MLASpec, data.pop("mla"), f"{where}.mla") if data.get("mla") else None
    data.pop("moe", None), data.pop("mla", None)
    if moe is not None and not 1 <= moe.experts_per_token <= moe.num_experts:
        raise WhatifError(f"{where}.moe.experts_per_token: {moe.experts_per_token} must be between 1 and "
                          f"num_experts ({moe.num_experts})")
    if moe is not None and moe.first_dense_layers > data["num_layers"]:
        raise WhatifError(f"{where}.moe.first_dense_layers: {moe.first_dense_layers} is more than num_layers "
                          f"({data['num_layers']})")
    return ModelSpec(**data, moe=moe, mla=mla)


def spec_from_hf_config(path: Path) -> ModelSpec:
    """A ModelSpec from a Hugging Face config.json (read offline by hf_config.py)."""
    return spec_from_dict(hf_config_fields(Path(path)), str(path))


@cache
def _load_path(path: str) -> ModelSpec:
    p = Path(path)
    if p.suffix == ".json":
        return spec_from_hf_config(p)
    return spec_from_dict(read_yaml(p), p.name)


def load_model(name: str) -> ModelSpec:
    """A model by profile name, YAML path or Hugging Face config.json path (no network)."""
    if not isinstance(name, str) or not name:
        raise WhatifError(f"--model: expected a model name or a config path, got {shown(name)}")
    if looks_like_path(name):
        folder = Path(name) / "config.json"    # a checkpoint folder, as the engines take one
        if is_file(folder, "--model"):
            return _load_path(str(folder.resolve()))
        if not is_file(name, "--model") and is_hf_id(name):
            kind, found = resolve_hf_id(name)
            return _load_path(str(profile_index(MODEL_DIR)[found] if kind == "profile" else Path(found).resolve()))
        if not is_file(name, "--model"):
            raise WhatifError(f"--model: no such file '{name}'")
        return _load_path(str(Path(name).resolve()))
    index = profile_index(MODEL_DIR)
    name = next((n for n in index if n.lower() == name.lower()), name)   # names match case-insensitively
    if name not in index:
        raise WhatifError(f"--model: unknown model {shown(name)}{closest(name, index)}; see `whatif list models` "
                          f"or pass a path to a Hugging Face config.json")
    return _load_path(str(index[name]))


def list_models() -> list[str]:
    return list(profile_index(MODEL_DIR))
