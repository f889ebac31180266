"""Memory plan per GPU: weights, KV cache, activation peak and runtime reservation vs capacity.

Figures are per GPU of the most loaded pipeline stage. The KV cache is sized for every sequence
at its final length (prompt + output), as a server must reserve before it can promise to finish.
With a serving engine in the setup, its memory accounting decides what the KV cache may take
(specs/engines.py EngineMemory): its fraction of the CUDA runtime's total (GPU.engine_capacity_bytes), the peak
activations of its profile run (max_num_batched_tokens), runtime, NCCL and CUDA-graph bytes.
Long because weights, KV, activations and the engine's accounting are one plan, each term beside the others.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from dataclasses import dataclass, field, replace

from ..specs.engines import EngineSpec
from ..specs.models import ModelSpec
from ..specs.module_params import layer_module_params
from .config import Parallelism, Precision
from .context import base_kv_format, kv_width_per_gpu, stage_layers
from .pass_setup import PassSetup
from .placement import STAGING_LAYERS, Placement
from .techniques.compose import TechniqueSet

CONTEXT_SEARCH_LIMIT = 1 << 40   # tokens: "unbounded" for caches that stop growing (StreamingLLM)

RUNTIME_RESERVED_BYTES = 1.0e9   # CUDA context + cuBLAS/NCCL workspaces; assumed, order of vLLM's non-torch memory
DEFAULT_UTILIZATION = 0.9        # fraction of HBM the engine may use (vLLM's gpu_memory_utilization default)
DEFAULT_PREFILL_CHUNK = 8192     # tokens per prefill pass (chunked prefill), assumed engine setting


@dataclass(frozen=True)
class TierBudget:
    """One memory tier's share of the plan: bytes that do not grow with the KV cache (`fixed`), and
    the share of the KV cache's bytes that land in it (staging buffers included)."""

    name: str
    usable_bytes: float     # capacity (the GPU's share) x utilization
    fixed_bytes: float
    kv_share: float

    def used(self, kv_bytes: float) -> float:
        return self.fixed_bytes + self.kv_share * kv_bytes


@dataclass(frozen=True)
class MemoryPlan:
    """Bytes per GPU: weights, KV cache, activations, workspace, against the capacity."""

    weights_bytes: float
    kv_cache_bytes: float
    activation_bytes: float
    workspace_bytes: float
    capacity_bytes: float
    utilization: float
    kv_bytes_per_token: float      # per GPU, all of its layers, averaged over the planned sequence
    tiers: dict[str, float] = field(default_factory=dict)   # bytes per tier (hbm first)
    shared_kv_bytes: float = 0.0   # a shared prefix's KV, stored once for the whole batch
    # Bytes of KV one sequence of n tokens adds (beyond the shared prefix); techniques make it non-linear.
    sequence_kv: Callable[[int], float] | None = field(default=None, compare=False, repr=False)
    budgets: tuple[TierBudget, ...] = ()   # one per tier in use; empty: all in HBM
    staging_bytes: float = 0.0     # HBM buffers that stream offloaded bytes in (part of tiers['hbm'])
    sequence_groups: int = 1       # DP attention: the TP group's sequences are split over this many GPUs
    kv_copy_bytes: float = 0.0     # the previous step's cache an engine still holds at a decode step's peak

    def sequence_kv_bytes(self, tokens: int) -> float:
        if self.sequence_kv is None:
            return self.kv_bytes_per_token * tokens
        return self.sequence_kv(tokens)

    @property
    def total_bytes(self) -> float:
        """Bytes in every tier (HBM plus what is offloaded), staging buffers included."""
        return self.weights_bytes + self.kv_cache_bytes + self.activation_bytes + self.workspace_bytes \
            + self.staging_bytes + self.kv_copy_bytes

    @property
    def hbm_bytes(self) -> float:
        return self.tiers.get("hbm", self.total_bytes)

    @property
    def usable_bytes(self) -> float:
        return self.capacity_bytes * self.utilization

    def _budgets(self) -> tuple[TierBudget, ...]:
        if self.budgets:
            return self.budgets
        fixed = self.weights_bytes + self.activation_bytes + self.workspace_bytes
        return (TierBudget("hbm", self.usable_bytes, fixed, 1.0),)

    def overflow(self) -> list[tuple[str, float, float]]:
        """(tier, bytes needed, bytes usable) of every tier the plan overfills."""
        kv = self.kv_cache_bytes
        return [(b.name, b.used(kv), b.usable_bytes) for b in self._budgets() if b.used(kv) > b.usable_bytes]

    @property
    def fits(self) -> bool:
        return not self.overflow()

    @property
    def free_for_kv(self) -> float:
        """KV bytes (all tiers together) that fit beside everything else: the tightest tier decides."""
        free = math.inf
        for b in self._budgets():
            room = b.usable_bytes - b.fixed_bytes
            free = min(free, room / b.kv_share if b.kv_share > 0 else (room if room < 0 else math.inf))
        return free

    def max_sequences(self, tokens_per_sequence: int) -> int:
        """Most sequences of this length whose KV fits beside weights and activations (under DP
        attention: on every GPU of the group, each holding its own)."""
        per_seq = self.sequence_kv_bytes(tokens_per_sequence)
        free = self.free_for_kv - self.shared_kv_bytes
        return self.sequence_groups * max(0, int(free // per_seq)) if per_seq > 0 and free > 0 else 0

    def max_context(self, batch: int) -> int:
        """Longest sequence (prompt + output tokens) for which `batch` sequences fit."""
        batch = -(-batch // self.sequence_groups)    # the busiest GPU's own
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
                "fits": self.fits, "hbm_bytes": self.hbm_bytes, "staging_bytes": self.staging_bytes,
                "sequence_groups": self.sequence_groups, "kv_copy_bytes": self.kv_copy_bytes,
                "tiers": dict(self.tiers),
                "tier_budgets": [{"tier": b.name, "bytes": b.used(self.kv_cache_bytes),
                                  "usable_bytes": b.usable_bytes,
                                  "kv_share": b.kv_share} for b in self._budgets()]}


@lru_cache(maxsize=256)   # pure, and asked once per memory plan: a max-batch search plans ~10 times
def layer_weight_bytes(model: ModelSpec, par: Parallelism, prec: Precision, stage: int) -> float:
    """Weights of the transformer layers one GPU of `stage` holds: the routed experts split ep x moe_tp = tp
    ways, everything else over TP, or under DP attention over one rank's attention_tp GPUs."""
    layers = stage_layers(model, par.pp, stage)
    norms = sum(model.norm_params() * model.layer_norms(i) for i in layers)
    if prec.per_module:
        return module_weight_bytes(model, par, prec, layers) + norms * prec.embedding_bytes
    linear = sum(model.layer_params(i) for i in layers) - norms
    if par.dp_attention or par.redundant_experts:
        m = model.moe
        routed = m.num_experts * model.dense_mlp_params(m.expert_intermediate_size) \
            * sum(model.is_moe_layer(i) for i in layers)
        linear = (linear - routed) * par.tp / par.attention_tp + routed * expert_replicas(model, par)
    return linear / par.tp * prec.weight_bytes + norms * prec.embedding_bytes


def replicated_mla_down_bytes(model: ModelSpec, par: Parallelism, prec: Precision, stage: int) -> float:
    """Bytes one GPU of `stage` holds beyond its TP share of MLA's down-projections (q_a: hidden -> q_lora_rank,
    kv_a_proj_with_mqa: hidden -> kv_lora_rank + rope) when the engine keeps them whole on every attention-TP rank
    (engine_profiles memory.mla_down_projections_replicated): the (1 - 1/attention_tp) layer_weight_bytes split off."""
    a = model.mla
    if a is None or par.attention_tp <= 1:
        return 0.0
    per_layer = model.hidden_size * ((a.q_lora_rank or 0) + a.kv_lora_rank + a.qk_rope_head_dim)
    layers = sum(1 for i in stage_layers(model, par.pp, stage) if model.layers[i].attention)
    width = prec.module_weight_bytes("attention") if prec.per_module else prec.weight_bytes
    return layers * per_layer * (1.0 - 1.0 / par.attention_tp) * width


def expert_replicas(model: ModelSpec, par: Parallelism) -> float:
    """Stored copies per routed expert: 1, or more with EPLB's redundant experts."""
    return (model.moe.num_experts + par.redundant_experts) / model.moe.num_experts if model.moe else 1.0


def module_weight_bytes(model: ModelSpec, par: Parallelism, prec: Precision, layers) -> float:
    """Linear weights of `layers` one GPU holds when module classes differ in precision: each class's
    parameters at its own bytes per weight (the router and whatever else a layer holds at the attention's)."""
    params = layer_module_params(model, layers)
    # routed experts split ep x moe_tp = tp ways (EPLB copies added); everything else over attention TP
    split = {"experts": par.tp / expert_replicas(model, par)}
    return sum(n / split.get(cls, par.attention_tp) * prec.module_weight_bytes(cls) for cls, n in params.items())


def stage_weight_bytes(model: ModelSpec, par: Parallelism, prec: Precision, stage: int,
                       layer_bytes: float | None = None) -> float:
    """Weights one GPU of `stage` holds: its layers (`layer_bytes` when known), plus embeddings/head."""
    total = layer_weight_bytes(model, par, prec, stage) if layer_bytes is None else layer_bytes
    vocab_slice = model.hidden_size * -(-model.vocab_size // par.attention_tp) * prec.embedding_bytes
    if stage == 0:   # a modality encoder (vision tower) sits whole beside the embedding, 16-bit (assumed)
        total += vocab_slice + (model.embedding_params() - model.vocab_size * model.hidden_size
                                + model.encoder_params()) * prec.embedding_bytes
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
    width = kv_width_per_gpu(model, par.attention_tp)
    if model.uniform_attention:
        layers = len(stage_layers(model, par.pp, stage)) * kv.layer_share
        return layers * kv.token_bytes(techs.stored(tokens), width)
    # Per layer kind: windowed layers hold their window, DSA adds its indexer keys, recurrent layers a constant
    # state split with their heads over the attention group. Techniques shape the attention layers' KV only.
    stored, total = techs.stored(tokens), 0.0
    own = kv_width_per_gpu(model.global_view, par.attention_tp)   # full layers' own width (Gemma 4), else `width`
    for i in stage_layers(model, par.pp, stage):
        if model.layers[i].attention:
            held = model.held_tokens(i, stored)
            total += kv.layer_share * kv.token_bytes(held, own if model.layers[i].mixer == "full" else width)
            total += held * model.indexer_key_bytes(i)
        else:
            total += model.state_bytes(i, prec.kv_bytes) / par.attention_tp
    return total


def activation_bytes(model: ModelSpec, tokens: int, sequences: int, par: Parallelism, prec: Precision,
                     logit_bytes: float = 4.0) -> float:
    """Peak transient memory of one forward pass of `tokens` tokens (the largest layer buffers), with `sequences`
    rows of logits at `logit_bytes` each. Under DP attention a GPU holds its own share of the tokens outside the
    experts."""
    a, d, t, dp = prec.act_bytes, model.hidden_size, par.attention_tp, par.attention_dp
    local = -(-tokens // dp)
    hidden = 3 * local * d * a                                     # residual, normed input, block output
    qkv = max(local * (m.q_dim // t + 2 * max(1, m.num_kv_heads // t) * m.head_dim) * a
              for m in (model, model.global_view))
    for mixer in (model.linear_attention, model.mamba):   # a recurrent mixer's input projection, when wider
        if mixer is not None:
            qkv = max(qkv, local * 2 * mixer.conv_channels / t * a)
    mlp = 0.0                                                      # gate+up output and activation
    if model.moe is None or model.moe.first_dense_layers:
        mlp = local * 3 * (model.intermediate_size // t) * a
    if model.moe is not None:
        mlp = max(mlp, routed_expert_buffer_bytes(model, tokens, par))
    logits = -(-sequences // dp) * model.vocab_size * logit_bytes  # fp32 logits (default), gathered
    return hidden + max(qkv, mlp) + logits


MOE_BUFFER_BYTES = 2.0   # fused-MoE buffers are allocated in hidden_states.dtype (bf16 / fp16), not the GEMM dtype


def routed_expert_buffer_bytes(model: ModelSpec, tokens: int, par: Parallelism) -> float:
    """Peak bytes of one fused-MoE call over `tokens` tokens, each routed to k experts: the gate-up output, then in the
    same buffer the experts' outputs at the hidden width, beside the activated intermediate. Every GPU sizes them for
    all tokens x k (expert parallelism skips rows, not buffer): vLLM fused_experts_impl allocates cache13 = M x topk x
    max(N, K) and cache2 = M x topk x N / 2 (N = 2 x intermediate / moe_tp, K = hidden); TensorRT-LLM's trtllm-gen
    MoE runners (thop fp8BlockScaleMoe / fp4BlockScaleMoe) gemm2_output [max padded tokens ~ M x topk, hidden] bf16
    beside gemm1_output and activation_output. So an engine's profile run at its token budget peaks there. The
    buffers take the hidden states' 16-bit dtype whatever the GEMMs'."""
    m = model.moe
    inter = m.expert_intermediate_size // max(1, par.moe_tp)
    return tokens * m.experts_per_token * (max(2 * inter, model.hidden_size) + inter) * MOE_BUFFER_BYTES


# Live bytes per score at an eager attention's peak: the 16-bit masked scores and softmax's fp32 output (then the
# 16-bit cast beside the fp32 one: the same 6 B).
EAGER_SCORE_PEAK_BYTES = 6.0


def eager_score_bytes(model: ModelSpec, par: Parallelism, sequences: int, pass_tokens: int) -> float:
    """Peak bytes of one layer's materialised attention scores in a prompt pass of `pass_tokens` tokens over
    `sequences` equal prompts (each query against every key of its prompt: the full rectangle, masked)."""
    q = pass_tokens / max(1, sequences)
    return sequences * q * q * (model.num_heads / par.attention_tp) * EAGER_SCORE_PEAK_BYTES


def plan_memory(setup: PassSetup, batch: int, tokens_per_sequence: int, pass_tokens: int,
                prompt_tokens: int | None = None) -> MemoryPlan:
    """Per-GPU plan of the heaviest pipeline stage for `batch` sequences of `tokens_per_sequence`
    tokens, with prefill passes of `pass_tokens` tokens.

    With a technique that shares the prefix, its KV is stored once and each sequence adds the rest.
    A placement moves shares of the layer weights, the KV cache and the activations into other tiers
    (up to the bytes of each this GPU may use: `setup.tier_capacity`); streaming them in needs HBM
    staging buffers. With an engine whose cache grows as needed (no pool) and `prompt_tokens` known, the
    activation term is what the peak holds beyond weights, the final cache and reserved bytes
    (grown_cache_peak_extra)."""
    model, par, prec, techs = setup.model, setup.parallel, setup.precision, setup.techniques
    engine, gpu = setup.engine_spec, setup.system.gpu
    # an engine sizes its pool from the CUDA runtime's total; without one, the plan keeps the driver's (nvidia-smi)
    capacity = gpu.hbm_capacity.value if engine is None else gpu.engine_capacity_bytes
    utilization = setup.utilization
    shared_prefix, placement = setup.shared_prefix, setup.placement
    stages = range(par.pp)
    layer_weights = weights = 0.0   # of the stage holding the most weights
    for s in stages:
        layer = layer_weight_bytes(model, par, prec, s)
        if engine is not None and engine.mla_down_replicated:
            layer += replicated_mla_down_bytes(model, par, prec, s)
        total = stage_weight_bytes(model, par, prec, s, layer)
        if total > weights:
            layer_weights, weights = layer, total
    # A drafter's weights and cache (decoders) sit beside the target's, on the heaviest GPU.
    weights += techs.extra_weight_bytes(model, par, prec)
    heavy = max(stages, key=lambda s: stored_kv_bytes(model, par, prec, techs, tokens_per_sequence, s))
    shared_tokens = shared_prefix if techs.shares_prefix else 0
    shared = stored_kv_bytes(model, par, prec, techs, shared_tokens, heavy) if shared_tokens else 0.0

    def sequence_kv(tokens: int) -> float:
        own = stored_kv_bytes(model, par, prec, techs, tokens, heavy) - shared
        return max(0.0, own) + techs.extra_kv_bytes(model, par, prec, tokens)

    if engine is None:
        act = activation_bytes(model, pass_tokens, min(batch, pass_tokens), par, prec)
        reserved = RUNTIME_RESERVED_BYTES
    else:   # the engine's profile run: its token budget (or a larger pass) over its most sequences
        profile = max(pass_tokens, engine.max_num_batched_tokens)
        act = activation_bytes(model, profile, prefill_logit_rows(engine, batch, pass_tokens, profile), par, prec,
                               prefill_logit_bytes(engine, model, prec))
        if engine.eager_attention:   # one layer's score tensors of the prompt pass, beside the rest
            act += eager_score_bytes(model, par, min(batch, pass_tokens), pass_tokens)
        reserved = engine.memory.reserved_bytes(par.gpus)
    kv = shared + -(-batch // par.attention_dp) * sequence_kv(tokens_per_sequence)   # the busiest GPU's
    per_token = (stored_kv_bytes(model, par, prec, techs, tokens_per_sequence, heavy)
                 + techs.extra_kv_bytes(model, par, prec, tokens_per_sequence)) / tokens_per_sequence
    # An engine that keeps the previous step's cache alive while a step builds the next (Hugging Face generate
    # before transformers 4.42) peaks with two caches: every KV byte costs twice at the peak.
    held = 2.0 if engine is not None and engine.holds_previous_cache else 1.0
    if engine is not None and engine.cache_grows and prompt_tokens is not None:
        act = grown_cache_peak_extra(setup, batch, prompt_tokens, sequence_kv, shared, kv, held)
    common = dict(weights_bytes=weights, kv_cache_bytes=kv, activation_bytes=act,
                  workspace_bytes=reserved, capacity_bytes=capacity, utilization=utilization,
                  kv_bytes_per_token=per_token, shared_kv_bytes=shared, sequence_kv=sequence_kv,
                  sequence_groups=par.attention_dp, kv_copy_bytes=(held - 1.0) * kv)
    if not placement:
        budgets = () if engine is None else (
            _held(engine_budget(engine, capacity, utilization, weights, act + reserved), held),)
        return MemoryPlan(**common, tiers={"hbm": weights + held * kv + act + reserved}, budgets=budgets)
    w_stage, kv_stage = staging_shares(placement, len(stage_layers(model, par.pp, heavy)))
    budgets = tuple(_held(b, held) for b in tier_budgets(placement, layer_weights, weights - layer_weights, act,
                                                          capacity, utilization, (w_stage, kv_stage),
                                                          setup.tier_capacity, reserved))
    return MemoryPlan(**common, tiers={b.name: b.used(kv) for b in budgets}, budgets=budgets,
                      staging_bytes=w_stage * layer_weights + kv_stage * kv)


def prefill_logit_rows(engine: EngineSpec, batch: int, pass_tokens: int, profile: int) -> int:
    """Rows of vocabulary logits a prompt pass of `pass_tokens` tokens over `batch` sequences holds, by the engine's
    `prefill_logits` (specs/engines.py PREFILL_LOGITS): a serving engine's profile run of `profile` tokens samples up
    to max_num_seqs sequences; a harness that applies the LM head to every hidden state holds a row per token of the
    pass (transformers' CausalLM forward before num_logits_to_keep, 4.45); one that slices the last position, a row
    per sequence."""
    if engine.prefill_logits == "every_position":
        return pass_tokens
    if engine.prefill_logits == "last_position":
        return min(batch, pass_tokens)
    return min(engine.max_num_seqs, profile)


def prefill_logit_bytes(engine: EngineSpec, model: ModelSpec, prec: Precision) -> float:
    """Bytes per logit at a harness's prompt-pass peak: the LM head's output in the activation dtype, beside its fp32
    copy where the release's forward upcasts (`logits = logits.float()`: both alive at that line); a serving engine's
    profile run keeps the plan's fp32 rule."""
    if engine.prefill_logits == "profile_run":
        return 4.0
    return prec.act_bytes + (4.0 if model.family in engine.logits_fp32_families else 0.0)


def grown_cache_peak_extra(setup: PassSetup, batch: int, prompt_tokens: int, sequence_kv: Callable[[int], float],
                           shared: float, kv: float, held: float) -> float:
    """Bytes beyond weights, reserved and `held` x the final cache `kv` at the allocated peak of an engine that
    grows its cache as it goes (Hugging Face generate: DynamicCache / legacy tuples, no pool): the prompt pass
    (the prompts' cache + the whole batch's one-pass activations and eager scores; generate runs the static batch's
    prompts as one pass) and the last decode step (the final cache, held twice where the engine keeps the previous
    step's, + one token per sequence's activations) never coexist, so the peak is the larger of the two."""
    model, par, prec, engine = setup.model, setup.parallel, setup.precision, setup.engine_spec
    pass_tokens = batch * prompt_tokens
    rows = pass_tokens if engine.prefill_logits == "every_position" else batch   # generate(): no profile run
    prefill_act = activation_bytes(model, pass_tokens, rows, par, prec, prefill_logit_bytes(engine, model, prec))
    if engine.eager_attention:
        prefill_act += eager_score_bytes(model, par, batch, pass_tokens)
    prompt_kv = shared + -(-batch // par.attention_dp) * sequence_kv(prompt_tokens)
    decode_act = activation_bytes(model, batch, batch, par, prec)
    return max(prefill_act + prompt_kv - held * kv, decode_act)


def _held(budget: TierBudget, held: float) -> TierBudget:
    """`budget` with each KV byte it holds counted `held` times (the previous step's copy alongside)."""
    return budget if held == 1.0 else replace(budget, kv_share=budget.kv_share * held)


def engine_budget(engine: EngineSpec, capacity: float, fraction: float, weights: float, other: float) -> TierBudget:
    """The HBM budget of an engine's accounting (EngineMemory), `other` being activations and reserved bytes:
    total (vLLM): fraction x capacity holds everything; static (SGLang): fraction x capacity holds weights and
    KV; free (TensorRT-LLM): KV takes fraction of what weights and `other` leave free, so each KV byte uses
    1 / fraction of the room."""
    mode = engine.memory.accounting
    if mode == "static":
        return TierBudget("hbm", capacity * fraction, weights, 1.0)
    if mode == "free":
        return TierBudget("hbm", capacity, weights + other, 1.0 / fraction)
    return TierBudget("hbm", capacity * fraction, weights + other, 1.0)


def staging_shares(p: Placement, layers: int) -> tuple[float, float]:
    """Shares of the layer weights and of the KV cache that HBM staging buffers hold: streaming
    double-buffers one layer's offloaded bytes (for the KV, the whole batch's entries of a layer).
    Weights are always streamed; KV read in place (direct) needs no buffer."""
    per_layer = STAGING_LAYERS / max(layers, 1)
    return (p.offloaded("weights") * per_layer,
            p.offloaded("kv") * per_layer if p.access == "stream" else 0.0)


def tier_budgets(p: Placement, layer_weights: float, other_weights: float, act: float, hbm: float,
                 utilization: float, staging: tuple[float, float],
                 tier_capacity: dict[str, float], reserved: float = RUNTIME_RESERVED_BYTES) -> tuple[TierBudget, ...]:
    """HBM first (what stays, plus the staging shares of weights and KV), then each tier the placement uses."""
    w_stage, kv_stage = staging
    w_off, kv_off, a_off = (p.offloaded(c) for c in ("weights", "kv", "activations"))
    hbm_fixed = other_weights + (1 - w_off + w_stage) * layer_weights + (1 - a_off) * act + reserved
    out = [TierBudget("hbm", hbm * utilization, hbm_fixed, 1 - kv_off + kv_stage)]
    for tier in p.tiers:
        share = {cls: sum(f for t, f in p.of(cls) if t == tier) for cls in ("weights", "kv", "activations")}
        out.append(TierBudget(tier, tier_capacity[tier] * utilization,
                              share["weights"] * layer_weights + share["activations"] * act, share["kv"]))
    return tuple(out)
