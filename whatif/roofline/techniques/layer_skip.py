"""Family H: early exit and layer skipping: a decode step runs fewer of the model's layers.

Per-layer ops (graph.layer_ops: `count` = the stage's dense or MoE layers) run an expected number
of times per step; the embedding, LM head and sampling always run. In a batch the step runs every
layer some row needs: a batch-synchronous schedule (SkipDecode, unified skipping) skips for all
rows, per-row choices (FiRST's per-sequence sets, token-level early exit, adaptive FFN skipping)
only skip what every row skips, so the gain shrinks as the batch grows.

Fractional expected layer counts: an op run 30.4 times on average is kept at count 30 and one
more instance doing 0.4 of its work (FLOPs and bytes scaled; a GEMM does 0.4 of its columns).
The step time is linear in executed layers, so this is the expectation, except that the partial
instance pays a whole kernel's launch gap and fixed overhead (at most one layer's worth). A
technique listed after these that rebuilds an op from its shape (attention kernels) would undo the
scaling of that partial instance: list family H last. Per-layer ops that other techniques add as
extra_ops are not seen here and keep every layer. With pipeline parallelism each stage runs the same
share of its layers (the stage index is not known here): the total over the stages is right, the
balance between stages is not (SkipDecode and early exit skip the front / back stages more).
Prefill always runs every layer.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields, replace

from ...errors import WhatifError
from ..mlp import weight_gemm
from ...specs.op_kinds import NON_LAYER_ROLES
from ..ops import Op, OpClass, OpRole, gemm, in_ffn, streaming
from ..context import KVFormat, PassContext, kv_heads_per_gpu
from .base import Technique, param, register

SLOT = "executed layers"
EXIT_STATE_FLOPS = 2.0   # a linear exit classifier on the hidden state: multiply-add per element (assumed)
CONFIDENCE = ("state", "softmax")
KV_FILL = ("copy", "none")


# ----------------------------------------------------------------------------- cost math

def union_share(skip: float, rows: int) -> float:
    """Expected share of layers a batch runs when each of `rows` rows skips a random `skip` share,
    independently of the others: a layer is skipped only if every row skips it."""
    return 1.0 - skip ** max(rows, 1)


def expected_max_uniform(low: float, rows: int) -> float:
    """E[max] of `rows` independent exit depths uniform on [low, 1] (shares of the layers)."""
    return 1.0 - (1.0 - low) / (max(rows, 1) + 1)


def linear_budget(position: int, start: int, length: int, high: float, low: float) -> float:
    """SkipDecode's layer share at absolute `position`: `high` up to `start`, falling linearly to
    `low` over `length` positions, `low` after."""
    done = min(max(position - start, 0), length) / length
    return high + (low - high) * done


# ----------------------------------------------------------------------------- op rewriting

def layer_counts(ops: list[Op]) -> set[int]:
    """Counts of the stage's layer groups (dense, MoE): every layer starts with its input norm."""
    return {op.count for op in ops if op.role == OpRole.INPUT_NORM}


def layer_groups(ops: list[Op]) -> list[list[Op]]:
    """The per-layer ops of each layer group (dense, MoE), in order: a group starts at an input norm."""
    counts = layer_counts(ops)
    groups: list[list[Op]] = []
    for op in ops:
        if op.role == OpRole.INPUT_NORM:
            groups.append([op])
        elif groups and is_layer_op(op, counts) and op.count == groups[-1][0].count:
            groups[-1].append(op)
    return groups


def is_layer_op(op: Op, counts: set[int]) -> bool:
    return op.role not in NON_LAYER_ROLES and op.count in counts


def partial_op(op: Op, share: float) -> Op:
    """One instance of `op` doing `share` of its work: the fractional layer of an expected count."""
    dims = {f.name for f in fields(op.shape)}
    scaled = ("n",) if op.op_class == OpClass.GEMM else ("bytes", "elements")
    scaled += ("kv_bytes", "kv_write_bytes")
    shape = replace(op.shape, **{k: getattr(op.shape, k) * share for k in scaled if k in dims})
    return replace(op, flops=op.flops * share, bytes={k: v * share for k, v in op.bytes.items()}, shape=shape,
                   alu_ops=op.alu_ops * share, count=1,
                   formula=op.formula + f"; x{share:.3g} (the fractional part of an expected layer count)")


def run_layers(ops: list[Op], runs: Callable[[Op], float]) -> list[Op]:
    """`ops` with each per-layer op run `runs(op)` times on average (0 to its count): whole runs keep
    the op at that count, the fractional rest is one partial instance after its layer group."""
    counts = layer_counts(ops)
    out: list[Op] = []
    pending: list[Op] = []
    group = None
    for op in ops:
        layer = is_layer_op(op, counts)
        if pending and (not layer or op.count != group):
            out += pending
            pending = []
        if not layer:
            out.append(op)
            continue
        group = op.count
        n = min(float(op.count), max(0.0, runs(op)))
        whole = math.floor(n + 1e-9)
        if whole:
            out.append(op if whole == op.count else replace(op, count=whole))
        if n - whole > 1e-9:
            pending.append(partial_op(op, n - whole))
    return out + pending


def ffn_op(op: Op, parallel_block: bool) -> bool:
    """An op of a layer's feed-forward half (graph.dense_mlp, moe.moe_ops, the norm and residual
    around it). In a parallel block the shared norm, residual and all-reduce also carry attention."""
    if in_ffn(op) or op.role == OpRole.MLP_ALLREDUCE:
        return not (parallel_block and op.role == OpRole.MLP_ALLREDUCE)
    return not parallel_block and op.role in (OpRole.POST_ATTN_NORM, OpRole.MLP_RESIDUAL)


def earliest_position(ctx: PassContext) -> int:
    """The earliest position a decode pass computes (the cached count of its shortest group)."""
    return min(c for _, c, _ in ctx.batch.groups)


@dataclass(frozen=True)
class LayerSkipping(Technique):
    """Shared by family H: every technique sets the share of layers a decode step runs."""

    slots = (SLOT,)

    def executed_share(self, ctx: PassContext) -> float:
        raise NotImplementedError

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops
        share = self.executed_share(ctx)
        return run_layers(ops, lambda op: op.count * share)


# ----------------------------------------------------------------------------- techniques

@register
@dataclass(frozen=True)
class SkipDecode(LayerSkipping):
    """SkipDecode: a batch-synchronous, position-wise layer budget. Every sequence of a step sits at
    the same position and runs the same top layers (the lower ones are bypassed); the budget falls
    linearly from `max_layers` of the layers at position `prompt` to `min_layers` at `prompt + length`
    and stays there. Since it never rises, the layers a token runs are a subset of those every earlier
    token ran, so each executed layer reads the whole context's KV and no KV is recomputed; a step
    costs executed layers / L of the per-layer work. The KV of bypassed layers is never written or
    stored: the cache keeps, on average over a sequence of prompt + length tokens, (prompt + length x
    (max + min) / 2) / (prompt + length) of the layers' bytes (a cache that allocates per layer is
    assumed; the average is used at every length). Positions are absolute (the pass's cached tokens),
    so the budget starts falling at the workload's prompt unless `prompt` is given. The prompt is
    prefilled with all layers."""

    name = "skip_decode"
    family = "H"
    paper = "SkipDecode: Autoregressive Skip Decoding with Batching and Caching for Efficient LLM Inference"
    max_layers: float = param(0.75, "share of the layers run at the first generated position (assumed)")
    min_layers: float = param(0.25, "share of the layers run from position prompt + length on (assumed)")
    prompt: int = param(0, "absolute position where the budget starts to fall; 0: the workload's prompt length",
                        "tokens")
    length: int = param(256, "positions over which the budget falls to min_layers: the target generation "
                             "length (assumed)", "tokens")

    def check_params(self) -> None:
        self.require(0.0 < self.min_layers <= 1.0, "min_layers", "in (0, 1]")
        self.require(self.min_layers <= self.max_layers <= 1.0, "max_layers", f"from min_layers "
                                                                              f"({self.min_layers}) to 1")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")
        self.require(self.length >= 1, "length", "an integer >= 1")

    def for_workload(self, workload) -> SkipDecode:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def budget(self, position: int) -> float:
        return linear_budget(position, self.prompt, self.length, self.max_layers, self.min_layers)

    def stored_layer_share(self) -> float:
        """Share of the layers' KV a sequence of prompt + length tokens stores, averaged over its tokens."""
        generated = self.length * (self.max_layers + self.min_layers) / 2.0
        return (self.prompt + generated) / (self.prompt + self.length)

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, layer_share=kv.layer_share * self.stored_layer_share())

    def executed_share(self, ctx: PassContext) -> float:
        # groups at different positions run the union of their (nested) layer sets: the earliest's
        return self.budget(earliest_position(ctx))


@register
@dataclass(frozen=True)
class FFNSkip(LayerSkipping):
    """FFN-SkipLLM: a share of the feed-forward blocks is skipped in decode while attention runs in
    every layer, so the KV cache stays complete (no state copying, no memory change). Each skipped
    block saves its MLP (or MoE) GEMMs, activation, norm and residual kernels. The skip is
    input-adaptive per token (per_token): a batch must run a block for every row unless all rows
    skip it, so with rows choosing independently the batch runs 1 - share^rows of the blocks and the
    gain vanishes beyond a few rows; per_token=false skips the same blocks for the whole batch."""

    name = "ffn_skip"
    family = "H"
    paper = "FFN-SkipLLM: A Hidden Gem for Autoregressive Decoding with Adaptive Feed Forward Skipping"
    share: float = param(0.25, "share of the FFN blocks a token skips (the paper: 25-30%)")
    per_token: bool = param(True, "each token picks its own blocks (input-adaptive, independent across rows: "
                                  "assumed); false: the whole batch skips the same blocks")

    def check_params(self) -> None:
        self.require(0.0 <= self.share < 1.0, "share", "in [0, 1)")

    def executed_share(self, ctx: PassContext) -> float:
        if self.per_token:
            return union_share(self.share, ctx.batch.tokens)
        return 1.0 - self.share

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops
        share = self.executed_share(ctx)
        block = ctx.model.parallel_block
        return run_layers(ops, lambda op: op.count * (share if ffn_op(op, block) else 1.0))


@register
@dataclass(frozen=True)
class LayerSkip(LayerSkipping):
    """Unified layer skipping and FiRST: each decoded token skips a fixed `share` of the layers (the
    unified strategy sets it from a target speed-up r: share = 1 - 1/r, spread over the middle
    layers). Attention in the layers a token runs reads the full context (the prompt filled every
    layer; the same layers are skipped for every generated token); a step costs executed layers / L
    of the per-layer work. With per_sequence (FiRST) each sequence's prompt picks its own layer set:
    a batch runs the union, for independent random sets of that share 1 - share^B of the layers, so
    the gain vanishes as the batch grows. The KV of skipped layers is not written; the cache is
    still reserved for every layer (paged blocks hold all layers)."""

    name = "layer_skip"
    family = "H"
    paper = "Accelerating Inference in Large Language Models with a Unified Layer Skipping Strategy"
    share: float = param(0.5, "share of the layers each decoded token skips (assumed: a 2x target speed-up)")
    per_sequence: bool = param(False, "FiRST: each sequence skips its own layers (chosen at prefill, independent "
                                      "across sequences: assumed); the batch runs their union")

    def check_params(self) -> None:
        self.require(0.0 <= self.share < 1.0, "share", "in [0, 1)")

    def executed_share(self, ctx: PassContext) -> float:
        if self.per_sequence:
            return union_share(self.share, ctx.batch.sequences)
        return 1.0 - self.share


@register
@dataclass(frozen=True)
class EarlyExit(LayerSkipping):
    """Token-level early exit (CALM): each token leaves the stack at its own depth, uniform between
    `min_exit` of the layers and all of them (assumed distribution), after a confidence check at
    every layer it runs. A batch steps together, so a step runs the deepest row's layers:
    E[max of B depths] = 1 - (1 - min_exit)/(B + 1) of them, which tends to all layers as the batch
    grows. Later tokens need K/V at the layers an earlier token skipped: kv_fill=copy propagates the
    exit hidden state and runs each skipped layer's norm, K/V projection, key rotation and cache
    write for the whole batch beyond the deepest exit (rows that exited sooner ride along in the
    batch's GEMMs); kv_fill=none leaves those entries empty (no cost, a quality risk; the reads are
    still counted in full). confidence=softmax checks with the LM head at every executed layer."""

    name = "early_exit"
    family = "H"
    paper = "Confident Adaptive Language Modeling"
    min_exit: float = param(0.25, "shallowest exit depth, as a share of the layers; depths are uniform from it "
                                  "to all layers (assumed)")
    kv_fill: str = param("copy", "K/V of the layers a token skipped: copy (project the exit state, cost counted) "
                                 "or none (left empty: no cost, quality risk)")
    confidence: str = param("state", "exit check per executed layer: state (a linear classifier on the hidden "
                                      "state) or softmax (the LM head's top-2 margin: a vocabulary GEMM per layer)")

    def check_params(self) -> None:
        self.require(0.0 < self.min_exit <= 1.0, "min_exit", "in (0, 1]")
        self.require(self.kv_fill in KV_FILL, "kv_fill", "one of " + ", ".join(KV_FILL))
        self.require(self.confidence in CONFIDENCE, "confidence", "one of " + ", ".join(CONFIDENCE))

    def executed_share(self, ctx: PassContext) -> float:
        return expected_max_uniform(self.min_exit, ctx.batch.tokens)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops
        added = []
        for group in layer_groups(ops):
            added += self.exit_check_ops(ctx, group[0].count)
            if self.kv_fill == "copy":
                added += kv_fill_ops(group, ctx)
        share = self.executed_share(ctx)

        def runs(op: Op) -> float:
            return op.count * ((1.0 - share) if op.name.startswith("kv_fill_") else share)
        return run_layers(ops + added, runs)

    def exit_check_ops(self, ctx: PassContext, count: int) -> list[Op]:
        """The confidence check after each layer a token runs."""
        tokens, d, prec = ctx.batch.tokens, ctx.model.hidden_size, ctx.prec
        if self.confidence == "softmax":
            vocab = -(-ctx.model.vocab_size // ctx.par.tp)
            return [gemm("exit_lm_head", tokens, vocab, d, prec.act_bytes, prec.embedding_bytes, prec.lm_head_dtype,
                         count, out_bytes=4.0)]
        return [streaming("exit_classifier", OpClass.ELEMENTWISE, tokens * d, 1, 0, EXIT_STATE_FLOPS, prec.act_bytes,
                          prec.activation, count)]


def kv_fill_ops(group: list[Op], ctx: PassContext) -> list[Op]:
    """One skipped layer's K/V from the propagated exit state, for the whole batch: the layer's input
    norm, its K/V projection (the K and V columns of qkv_proj; MLA: kv_a_proj), keys' rotation and
    the cache write. Built at the layer group's count; run_layers sets how many run."""
    m, prec, tokens, count = ctx.model, ctx.prec, ctx.batch.tokens, group[0].count
    # copies are the technique's own ops (no graph role), so later lookups by role do not find them
    out = [replace(op, name="kv_fill_" + op.name, role=None) for op in group
           if op.role in (OpRole.INPUT_NORM, OpRole.KV_A_PROJ, OpRole.KV_WRITE)]
    if any(op.role == OpRole.QKV_PROJ for op in group):
        kvh = kv_heads_per_gpu(m, ctx.par.tp)
        out.append(weight_gemm("kv_fill_proj", tokens, 2 * kvh * m.head_dim, m.hidden_size, prec, count))
        if m.position == "rope":
            out.append(streaming("kv_fill_rope", OpClass.ROPE, tokens * kvh * m.head_dim, 1, 1, 6, prec.act_bytes,
                                 prec.activation, count, extra_bytes=tokens * m.head_dim * 4))
    if not any(op.name.startswith("kv_fill_") and op.name != "kv_fill_input_norm" for op in out):
        raise WhatifError("--technique early_exit:kv_fill=copy: found no K/V projection in the layer's ops; "
                          "use kv_fill=none")
    return out

