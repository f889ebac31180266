"""Memory plan per GPU: weights, KV cache, activation peak and runtime reservation vs capacity.

Figures are per GPU of the most loaded pipeline stage. The KV cache is sized for every sequence
at its final length (prompt + output), as a server must reserve before it can promise to finish.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..models import ModelSpec
from .config import Parallelism, Precision
from .graph import base_kv_format, kv_width_per_gpu, stage_layers
from .techniques.compose import NONE, TechniqueSet

CONTEXT_SEARCH_LIMIT = 1 << 40   # tokens: "unbounded" for caches that stop growing (StreamingLLM)

RUNTIME_RESERVED_BYTES = 1.0e9   # CUDA context + cuBLAS/NCCL workspaces; assumed, order of vLLM's non-torch memory
DEFAULT_UTILIZATION = 0.9        # fraction of HBM the engine may use (vLLM's gpu_memory_utilization default)
DEFAULT_PREFILL_CHUNK = 8192     # tokens per prefill pass (chunked prefill), assumed engine setting


@dataclass(frozen=True)
class MemoryPlan:
    weights_bytes: float
    kv_cache_bytes: float
    activation_bytes: float
    workspace_bytes: float
    capacity_bytes: float
    utilization: float
    kv_bytes_per_token: float      # per GPU, all of its layers, averaged over the planned sequence
    tiers: dict[str, float] = field(default_factory=dict)
    shared_kv_bytes: float = 0.0   # a shared prefix's KV, stored once for the whole batch
    # Bytes of KV one sequence of n tokens adds (beyond the shared prefix); techniques make it non-linear.
    sequence_kv: Callable[[int], float] | None = field(default=None, compare=False, repr=False)

    def sequence_kv_bytes(self, tokens: int) -> float:
        if self.sequence_kv is None:
            return self.kv_bytes_per_token * tokens
        return self.sequence_kv(tokens)

    @property
    def total_bytes(self) -> float:
        return self.weights_bytes + self.kv_cache_bytes + self.activation_bytes + self.workspace_bytes

    @property
    def usable_bytes(self) -> float:
        return self.capacity_bytes * self.utilization

    @property
    def fits(self) -> bool:
        return self.total_bytes <= self.usable_bytes

    @property
    def free_for_kv(self) -> float:
        return self.usable_bytes - self.weights_bytes - self.activation_bytes - self.workspace_bytes

    def max_sequences(self, tokens_per_sequence: int) -> int:
        """Most sequences of this length whose KV fits beside weights and activations."""
        per_seq = self.sequence_kv_bytes(tokens_per_sequence)
        free = self.free_for_kv - self.shared_kv_bytes
        return max(0, int(free // per_seq)) if per_seq > 0 and free > 0 else 0

    def max_context(self, batch: int) -> int:
        """Longest sequence (prompt + output tokens) for which `batch` sequences fit."""
        free = self.free_for_kv - self.shared_kv_bytes
        if free <= 0:
            return 0
        lo, hi = 0, CONTEXT_SEARCH_LIMIT      # sequence KV never shrinks as the sequence grows
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if batch * self.sequence_kv_bytes(mid) <= free:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def to_dict(self) -> dict:
        return {"weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "activation_bytes": self.activation_bytes, "workspace_bytes": self.workspace_bytes,
                "total_bytes": self.total_bytes, "capacity_bytes": self.capacity_bytes,
                "usable_bytes": self.usable_bytes, "utilization": self.utilization,
                "kv_bytes_per_token": self.kv_bytes_per_token, "shared_kv_bytes": self.shared_kv_bytes,
                "fits": self.fits,
                "tiers": dict(self.tiers)}


def stage_weight_bytes(model: ModelSpec, par: Parallelism, prec: Precision, stage: int) -> float:
    """Weights one GPU of `stage` holds: its layers split over TP (or EP), plus embeddings/head."""
    layers = stage_layers(model, par.pp, stage)
    norms = model.norm_params() * (1 if model.parallel_block else 2)
    linear = sum(model.layer_params(i) - norms for i in layers)
    total = linear / par.tp * prec.weight_bytes + norms * len(layers) * prec.embedding_bytes
    vocab_slice = model.hidden_size * -(-model.vocab_size // par.tp) * prec.embedding_bytes
    if stage == 0:
        total += vocab_slice + (model.embedding_params() - model.vocab_size * model.hidden_size) * prec.embedding_bytes
    if stage == par.pp - 1:
        total += model.hidden_size * prec.embedding_bytes    # final norm
        if not model.tie_word_embeddings or par.pp > 1:      # a tied head on another stage is a copy
            total += vocab_slice
    return total


def stored_kv_bytes(model: ModelSpec, par: Parallelism, prec: Precision, techs: TechniqueSet, tokens: float,
                    stage: int = 0) -> float:
    """KV bytes one GPU of `stage` holds for a sequence of `tokens`, after the techniques
    (tokens kept, bits per element, channels and layers stored)."""
    kv = techs.kv(base_kv_format(prec))
    layers = len(stage_layers(model, par.pp, stage)) * kv.layer_share
    return layers * kv.token_bytes(techs.stored(tokens), kv_width_per_gpu(model, par.tp))


def activation_bytes(model: ModelSpec, tokens: int, sequences: int, par: Parallelism, prec: Precision) -> float:
    """Peak transient memory of one forward pass of `tokens` tokens (the largest layer buffers)."""
    a, d, t = prec.act_bytes, model.hidden_size, par.tp
    hidden = 3 * tokens * d * a                                    # residual, normed input, block output
    qkv = tokens * (model.q_dim // t + 2 * max(1, model.num_kv_heads // t) * model.head_dim) * a
    inter = model.intermediate_size
    if model.moe is not None:
        m = model.moe
        # routed tokens each carry k experts' intermediates
        inter = max(inter if m.first_dense_layers else 0, m.expert_intermediate_size * m.experts_per_token)
    mlp = tokens * 3 * (inter // t) * a                            # gate+up output and activation
    logits = sequences * model.vocab_size * 4.0                    # fp32 logits, gathered
    return hidden + max(qkv, mlp) + logits


def plan_memory(model: ModelSpec, par: Parallelism, prec: Precision, capacity: float,
                batch: int, tokens_per_sequence: int, pass_tokens: int,
                utilization: float = DEFAULT_UTILIZATION, techs: TechniqueSet = NONE,
                shared_prefix: int = 0) -> MemoryPlan:
    """Per-GPU plan of the heaviest pipeline stage for `batch` sequences of the given length.

    With a technique that shares the prefix, its KV is stored once and each sequence adds the rest."""
    stages = range(par.pp)
    weights = max(stage_weight_bytes(model, par, prec, s) for s in stages)
    heavy = max(stages, key=lambda s: stored_kv_bytes(model, par, prec, techs, tokens_per_sequence, s))
    shared_tokens = shared_prefix if techs.shares_prefix else 0
    shared = stored_kv_bytes(model, par, prec, techs, shared_tokens, heavy) if shared_tokens else 0.0

    def sequence_kv(tokens: int) -> float:
        return max(0.0, stored_kv_bytes(model, par, prec, techs, tokens, heavy) - shared)

    act = activation_bytes(model, pass_tokens, min(batch, pass_tokens), par, prec)
    kv = shared + batch * sequence_kv(tokens_per_sequence)
    per_token = stored_kv_bytes(model, par, prec, techs, tokens_per_sequence, heavy) / tokens_per_sequence
    return MemoryPlan(weights, kv, act, RUNTIME_RESERVED_BYTES, capacity, utilization, per_token,
                      {"hbm": weights + kv + act + RUNTIME_RESERVED_BYTES}, shared, sequence_kv)
