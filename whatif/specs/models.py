"""Model specs: one frozen dataclass, read from model_profiles/*.yaml or a Hugging Face config.json.

The spec holds only architecture facts; parameter counts and KV bytes are derived from it.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import WhatifError, check_mapping, closest, shown
from .checks import MAX_HEADS, MAX_LAYERS, MAX_TOKENS, MAX_VOCAB, MAX_WIDTH, boolean, integer, is_file, string
from .model_layers import STATE_DTYPE_BYTES, LayerSpec
from .model_schema import LAYER_FIELDS, layer_fields
from .profiles import MODEL_DIR, absolute, looks_like_path, profile_index, read_yaml

if TYPE_CHECKING:   # (the fields' types: a dense model's cold start creates no section class, model_sections.py)
    from .model_sections import EncoderSpec, IndexerSpec, LinearAttentionSpec, MambaSpec, MLASpec, MoESpec

MLP_KINDS = ("gated", "plain")
NORM_KINDS = ("rmsnorm", "layernorm")
POSITION_KINDS = ("rope", "learned", "alibi", "none")


# Families whose attention RMS-normalizes each head of q and k (q_norm / k_norm over head_dim, before RoPE): HF
# transformers Qwen3Attention (Qwen3, Qwen3-MoE, Qwen3-VL's text decoder) and Qwen3NextAttention (Qwen3-Next, Qwen3.5's
# full-attention layers); every engine runs it (session 68 C: roofline/graph.py qk_head_norm).
QK_HEAD_NORM_FAMILIES = frozenset({"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe",
                                   "qwen3_5_moe_text", "qwen3_vl", "qwen3_vl_moe"})


@dataclass(frozen=True)
class ModelSpec:
    """A model's architecture facts (model_profiles/ or a config.json); counts and KV bytes derive from it."""

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
    mlp: str = "gated"                 # gated: gate+up+down (SwiGLU); plain: up+down (GELU, relu2)
    norm: str = "rmsnorm"
    position: str = "rope"
    tie_word_embeddings: bool = False
    qkv_bias: bool = False
    o_bias: bool = False
    mlp_bias: bool = False
    parallel_block: bool = False       # attention and MLP read the same normed input (phi-2, GPT-J)
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    # per-layer kinds (model_layers.py); each list repeats over the layers when shorter than them
    layer_types: tuple[str, ...] = ()  # token mixer per layer; empty: all full attention
    ffn_types: tuple[str, ...] = ()    # feed-forward per layer; empty: dense, or MoE where `moe` says
    nope_layers: tuple[int, ...] = ()  # layers without RoPE (llama4's global layers)
    sliding_window: int = 0            # tokens a sliding layer sees (itself included)
    attention_chunk_size: int = 0      # tokens of a chunked-local layer's chunk
    attention_sinks: bool = False      # a learned sink logit per head (gpt-oss): num_heads weights a layer
    attention_output_gate: bool = False   # a sigmoid gate on the attention output (Qwen3-Next): q_proj x2
    qk_layer_norm: bool = False        # RMSNorm over all of q and all of k (MiniMax-M2 qk_norm_type per_layer)
    sandwich_norm: bool = False        # a norm before and after each half (Gemma 2/3): 4 a layer
    attn_logit_softcapping: float = 0.0    # tanh cap on attention scores (elementwise; not priced apart)
    final_logit_softcapping: float = 0.0   # tanh cap on the logits
    # full-attention layers' own shape where it differs from the sliding ones' (Gemma 4: 512-wide heads, 4 KV heads,
    # no v_proj: V is k_proj's output, v-normed and not rotated, and cached beside K); 0: head_dim / num_kv_heads
    global_head_dim: int = 0
    global_kv_heads: int = 0
    attention_k_eq_v: bool = False
    indexer: IndexerSpec | None = None     # DeepSeek Sparse Attention over MLA
    linear_attention: LinearAttentionSpec | None = None
    mamba: MambaSpec | None = None
    encoder: EncoderSpec | None = None
    source: str = ""

    # ------------------------------------------------------------ derived structure

    @property
    def q_dim(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def qk_head_norm(self) -> bool:
        """Whether each attention head's q and k are RMS-normalized before RoPE (QK_HEAD_NORM_FAMILIES)."""
        return self.family in QK_HEAD_NORM_FAMILIES

    @property
    def kv_dim(self) -> int:
        return self.num_kv_heads * self.head_dim

    def _moe_by_rule(self, layer: int) -> bool:
        m = self.moe
        if m is None or layer < m.first_dense_layers:
            return False
        return (layer - m.first_dense_layers) % m.moe_layer_frequency == m.moe_layer_offset

    def layer(self, i: int) -> LayerSpec:
        """Layer i's mixer, feed-forward block and RoPE."""
        mixer = self.layer_types[i % len(self.layer_types)] if self.layer_types else "full"
        if self.ffn_types:
            ffn = self.ffn_types[i % len(self.ffn_types)]
        else:
            ffn = "moe" if self._moe_by_rule(i) else "dense"
        own = self.indexer is None or self.indexer.owns(i)
        return LayerSpec(mixer, ffn, self.position == "rope" and i not in self.nope_layers, own)

    @cached_property
    def layers(self) -> tuple[LayerSpec, ...]:
        return tuple(self.layer(i) for i in range(self.num_layers))

    @cached_property   # (asked per KV size of every memory plan: a scan of all layers each time otherwise)
    def uniform_attention(self) -> bool:
        """Every layer full attention with a feed-forward block (the layout the fast pass pricers assume)."""
        return (all(s.mixer == "full" and s.ffn != "none" for s in self.layers) and self.indexer is None
                and self.global_view is self)

    @cached_property
    def global_view(self) -> ModelSpec:
        """This model as its full-attention layers see it: their own head width and KV heads (global_head_dim,
        global_kv_heads), else the model itself."""
        if not (self.global_head_dim or self.global_kv_heads):
            return self
        return replace(self, head_dim=self.global_head_dim or self.head_dim,
                       num_kv_heads=self.global_kv_heads or self.num_kv_heads, global_head_dim=0, global_kv_heads=0)

    def attention_view(self, mixer: str) -> ModelSpec:
        """The model whose head shape a layer of kind `mixer` has (full layers: global_view)."""
        return self.global_view if mixer == "full" else self

    def is_moe_layer(self, layer: int) -> bool:
        return self.layers[layer].ffn == "moe"

    @property
    def num_moe_layers(self) -> int:
        return sum(s.ffn == "moe" for s in self.layers)

    def kv_token_elements(self, layer: int) -> int:
        """Cached elements per token of one layer (K and V; MLA: latent + RoPE key; recurrent: none)."""
        if not self.layers[layer].attention:
            return 0
        if self.mla is not None:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        return 2 * self.attention_view(self.layers[layer].mixer).kv_dim

    def kv_elements_per_token(self) -> int:
        """Cached elements per token over all attention layers (windowed layers: per token they hold)."""
        return sum(self.kv_token_elements(i) for i in range(self.num_layers))

    def held_tokens(self, layer: int, tokens: float) -> float:
        """Tokens of a `tokens`-long sequence layer `layer` keeps cached (a window or chunk at most)."""
        mixer = self.layers[layer].mixer
        if mixer == "sliding":
            return min(tokens, self.sliding_window)
        if mixer == "chunked":
            return min(tokens, self.attention_chunk_size)
        return tokens if mixer == "full" else 0.0

    def indexer_key_bytes(self, layer: int) -> float:
        """Bytes a token keeps for DSA's lightning indexer in layer `layer` (an IndexShare layer reuses another's)."""
        return self.indexer.key_bytes if self.indexer is not None and self.layers[layer].own_indexer else 0.0

    def state_bytes(self, layer: int, kv_bytes: float) -> float:
        """Bytes of one sequence's constant recurrent state in one layer (recurrent state + conv state)."""
        mixer, spec = self.layers[layer].mixer, None
        if mixer == "linear":
            spec = self.linear_attention
        elif mixer == "mamba2":
            spec = self.mamba
        if spec is None:
            return 0.0
        state = STATE_DTYPE_BYTES.get(spec.state_dtype, kv_bytes)
        return spec.state_elements * state + (spec.conv_kernel - 1) * spec.conv_channels * kv_bytes

    def sequence_cache_bytes(self, tokens: float, kv_bytes: float) -> float:
        """Bytes one sequence of `tokens` tokens keeps over the whole model (no parallelism): each attention
        layer's K/V of the tokens it holds, DSA's indexer keys, each recurrent layer's state."""
        total = 0.0
        for i, spec in enumerate(self.layers):
            if spec.attention:
                held = self.held_tokens(i, tokens)
                total += held * self.kv_token_elements(i) * kv_bytes
                total += held * self.indexer_key_bytes(i)
            else:
                total += self.state_bytes(i, kv_bytes)
        return total

    def cache_summary(self, kv_bytes: float) -> dict[str, float]:
        """Bytes one sequence keeps over the whole model, by how they grow: per token (full attention layers and
        DSA's indexer keys), at most (windowed layers once their window is full), per sequence (recurrent states)."""
        grow = held = state = 0.0
        for i, spec in enumerate(self.layers):
            per_token = self.kv_token_elements(i) * kv_bytes + self.indexer_key_bytes(i)
            if spec.mixer == "full":
                grow += per_token
            elif spec.attention:
                held += self.held_tokens(i, float("inf")) * per_token
            else:
                state += self.state_bytes(i, kv_bytes)
        return {"kv_bytes_per_token": grow, "windowed_kv_bytes_max": held, "state_bytes_per_sequence": state}

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
            indexer = self.indexer.params(d, a.q_lora_rank) if self.indexer is not None else 0
            return q + kv_down + kv_up + o + indexer
        q = self.q_dim * (2 if self.attention_output_gate else 1)
        qkv = d * (q + 2 * self.kv_dim) + (q + 2 * self.kv_dim) * self.qkv_bias
        o = self.q_dim * d + d * self.o_bias
        return qkv + o + self.num_heads * self.attention_sinks

    def mixer_params(self, layer: int) -> int:
        mixer = self.layers[layer].mixer
        if mixer == "linear":
            return self.linear_attention.params(self.hidden_size)
        if mixer == "mamba2":
            return self.mamba.params(self.hidden_size)
        if mixer == "none":
            return 0
        if self.mla is not None:   # an IndexShare layer builds no indexer of its own
            shared = self.indexer is not None and not self.layers[layer].own_indexer
            return self.attention_params() - (self.indexer.params(self.hidden_size, self.mla.q_lora_rank) if shared
                                              else 0)
        view = self.attention_view(mixer)
        k_eq_v = mixer == "full" and self.attention_k_eq_v   # no v_proj: k_proj's output serves as V
        no_v = view.kv_dim * (self.hidden_size + self.qkv_bias) if k_eq_v else 0
        return view.attention_params() - no_v

    def dense_mlp_params(self, intermediate: int | None = None) -> int:
        i = intermediate or self.intermediate_size
        d = self.hidden_size
        mats = 3 if self.mlp == "gated" else 2
        bias = (i * (mats - 1) + d) * self.mlp_bias
        return mats * d * i + bias

    def ffn_params(self, layer: int) -> int:
        """The feed-forward block of a layer (MoE: every expert, shared ones and the router)."""
        ffn = self.layers[layer].ffn
        if ffn == "none":
            return 0
        if ffn == "dense":
            return self.dense_mlp_params()
        m = self.moe
        routed = m.num_experts * self.dense_mlp_params(m.expert_intermediate_size)
        shared = m.shared_experts * self.dense_mlp_params(m.shared_size)
        return routed + shared + (self.hidden_size + m.router_bias) * m.num_experts

    def norm_params(self) -> int:
        return self.hidden_size * (2 if self.norm == "layernorm" else 1)

    def layer_norms(self, layer: int) -> int:
        """Norms of one layer: one before each half it has (Gemma: before and after), one if parallel."""
        if self.parallel_block:
            return 1
        spec = self.layers[layer]
        halves = (spec.mixer != "none") + (spec.ffn != "none")
        return halves * (2 if self.sandwich_norm else 1)

    def layer_params(self, layer: int) -> int:
        """All parameters of one layer (MoE: every expert)."""
        norms = self.norm_params() * self.layer_norms(layer)
        return self.mixer_params(layer) + self.ffn_params(layer) + norms

    def embedding_params(self) -> int:
        pos = self.max_position_embeddings * self.hidden_size if self.position == "learned" else 0
        return self.vocab_size * self.hidden_size + pos

    def lm_head_params(self) -> int:
        return 0 if self.tie_word_embeddings else self.vocab_size * self.hidden_size

    def encoder_params(self) -> int:
        return self.encoder.params if self.encoder is not None else 0

    def total_params(self) -> int:
        """The decoder's parameters (a modality encoder beside it: encoder_params)."""
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

_SUB = ("moe", "mla", "indexer", "linear_attention", "mamba", "encoder")
_SIMPLE = {f.name for f in fields(ModelSpec)} - set(_SUB) - set(LAYER_FIELDS)
# each integer field and its stated physical bound (checks.py says why each is far above any real model)
_INT_FIELDS = {"hidden_size": MAX_WIDTH, "num_layers": MAX_LAYERS, "num_heads": MAX_HEADS,
               "num_kv_heads": MAX_HEADS, "head_dim": MAX_WIDTH, "intermediate_size": MAX_WIDTH,
               "vocab_size": MAX_VOCAB, "max_position_embeddings": MAX_TOKENS}
_BOOL_FIELDS = ("tie_word_embeddings", "qkv_bias", "o_bias", "mlp_bias", "parallel_block")


def spec_from_dict(data: dict, where: str) -> ModelSpec:
    """Validate a model mapping (the YAML schema) into a ModelSpec: every field's type and range."""
    data = dict(data)
    check_mapping(data, _SIMPLE | set(_SUB) | set(LAYER_FIELDS), where)
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
    extra = layer_fields(data, where)
    return ModelSpec(**data, **extra)


def spec_from_hf_config(path: Path) -> ModelSpec:
    """A ModelSpec from a Hugging Face config.json (read offline by hf_config.py)."""
    from .hf_config import hf_config_fields   # (its family builders: only for a config.json)
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
        from .hf_ids import is_hf_id, resolve_hf_id
        folder = Path(name) / "config.json"    # a checkpoint folder, as the engines take one
        if is_file(folder, "--model"):
            return _load_path(str(absolute(folder)))
        if not is_file(name, "--model") and is_hf_id(name):
            kind, found = resolve_hf_id(name)
            return _load_path(str(profile_index(MODEL_DIR)[found] if kind == "profile" else absolute(found)))
        if not is_file(name, "--model"):
            raise WhatifError(f"--model: no such file '{name}'")
        return _load_path(str(absolute(name)))
    index = profile_index(MODEL_DIR)
    name = next((n for n in index if n.lower() == name.lower()), name)   # names match case-insensitively
    if name not in index:
        raise WhatifError(f"--model: unknown model {shown(name)}{release_hint(name) or closest(name, index)}; see "
                          "`whatif list models` or pass a path to a Hugging Face config.json")
    return _load_path(str(index[name]))


def release_hint(name: str) -> str:
    """' (did you mean ID?)' where a bare name is a shipped Hugging Face id's repository name (deepseek-r1: the
    release deepseek-ai/DeepSeek-R1, which runs the deepseek-v3 profile in its checkpoint's format); '' otherwise."""
    from .hf_ids import shipped_spellings
    ids = [i for i in shipped_spellings() if i.split("/")[-1].lower() == name.lower()]
    if not ids:
        return ""
    return f" (did you mean {' or '.join(repr(i) for i in sorted(ids))}: the {shipped_spellings()[ids[0]]} profile " \
           "in that checkpoint's format?)"


def list_models() -> list[str]:
    return list(profile_index(MODEL_DIR))
