"""Family C: KV eviction, selection and merging: a token budget held in memory, so memory and decode
attention bytes scale with the budget instead of the context, plus the cost of choosing the tokens.

Three shapes of budget recur:
- a share of the sequence chosen by accumulated attention scores (H2O, Scissorhands; Keyformer's is a
  share of the prompt, held constant while generating): the attention kernel must also emit the
  scores, and a small kernel accumulates them per cached token;
- a split between a part that keeps everything and a part that keeps attention sinks plus a recent
  window (StreamingLLM: no full part; DuoAttention and RazorAttention: retrieval heads; LongGen:
  full-attention layers): stored tokens are the average over heads or layers, and in prefill the
  window part computes only the (query, key) pairs inside its band;
- the prompt compressed once when it has been read (SnapKV by an observation window's votes,
  GemFilter by an early layer's attention), at the price of a scoring pass.

Hooks see only a sequence's token count, not where its prompt ends, so budgets of prompt tokens
(SnapKV, GemFilter) hold the generated tokens too (see each docstring).

Long because: family C's 13 catalogue techniques sit side by side, each a short class over the
same hooks (stored_tokens, prefill_units, extra_ops) and band/pair helpers only they use; a split
would scatter one catalogue family. Shared cost pieces live in kit.py.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.dtypes import dtype_bytes
from ...specs.models import ModelSpec
from ..attention import causal_pairs
from ..config import ForwardBatch
from ...specs.op_kinds import EMBEDDING_ROLES, LAYER_ATTENTION_ROLES, LOGIT_ROLES
from ..ops import Op, OpRole
from ..context import PassContext, PrefillUnit
from .base import Technique, param, register, replace_ops
from .kit import elementwise, full_attention, score_update, vote_ops

ROPE_OPS = 6.0            # ops per key element to rotate it to a new position (2 mul, 1 add, sin/cos share), assumed
# Keyformer, per score: counter-based RNG, -log(-log u), add, 1/tau, exp, normalize, accumulate; assumed
GUMBEL_SCORE_OPS = 12.0


def heads_per_gpu(ctx: PassContext) -> int:
    return max(1, ctx.model.num_heads // ctx.par.tp)


def kv_heads_per_gpu(ctx: PassContext) -> int:
    return max(1, ctx.model.num_kv_heads // ctx.par.tp)


def band_pairs(q: float, c0: float, cap: float) -> float:
    """(query, key) pairs of q new tokens after c0 cached ones when each query sees at most `cap`
    keys (itself included): query i sees min(c0 + i + 1, cap)."""
    if q <= 0:
        return 0.0
    full = min(q, max(0.0, cap - c0))          # queries that still see every earlier token
    return full * c0 + full * (full + 1) / 2.0 + (q - full) * cap


def require_per_head_cache(t: Technique, model: ModelSpec) -> None:
    if model.mla is not None:
        raise WhatifError(f"--technique {t.name}: {model.name} uses latent attention (MLA), whose one cached "
                          f"latent is shared by all heads, so heads cannot keep different tokens; use a "
                          f"model with per-head K/V (MHA, GQA)")


@register
@dataclass(frozen=True)
class H2O(Technique):
    """Heavy-Hitter Oracle: keeps the `heavy` share of tokens with the largest accumulated attention
    plus the `recent` share of newest tokens, evicting the rest, so a sequence of n tokens caches
    (heavy + recent) x n. Costs: the attention kernel must also emit each head's attention
    probabilities for the (causal) pairs it computes so their running column sums (fp32, one per
    cached token and head) can be read, updated and written every step, and the lowest-scoring token
    is found and evicted (its slot is overwritten by the new token: no compaction)."""

    name = "h2o"
    family = "C"
    paper = "H2O: Heavy-Hitter Oracle for Efficient Generative Inference of Large Language Models"
    slots = ("kv budget",)
    evicts = True
    budget_param = "heavy"
    heavy: float = param(0.1, "share of the sequence kept as heavy hitters")
    recent: float = param(0.1, "share of the sequence kept as the recent window")

    def check_params(self) -> None:
        self.require(0 <= self.heavy <= 1, "heavy", "a share from 0 to 1")
        self.require(0 <= self.recent <= 1, "recent", "a share from 0 to 1")
        self.require(self.heavy + self.recent > 0, "heavy", "more than 0 together with recent")

    def stored_tokens(self, n: float) -> float:
        return min(n, (self.heavy + self.recent) * n)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        return [score_update("h2o_score_update", ctx, self.stored_tokens, 1.0)]


@register
@dataclass(frozen=True)
class Scissorhands(Technique):
    """Persistence of importance: the cache is held at a fixed budget of 1/`ratio` of the sequence
    (the paper's compression ratio) by dropping the tokens that were least often important over a
    history window of recent steps; the most recent `recent` tokens are never dropped. Costs: the
    attention kernel emits each head's probabilities, which a kernel compares to the importance
    threshold and counts per cached token and head (like H2O's accumulation); every time the cache
    fills, the `drop` share of the budget is dropped and the kept K/V are compacted (read and
    written once), amortized over the steps it takes to fill the freed slots again."""

    name = "scissorhands"
    family = "C"
    paper = ("Scissorhands: Exploiting the Persistence of Importance Hypothesis for LLM KV Cache Compression "
             "at Test Time")
    slots = ("kv budget",)
    evicts = True
    ratio: float = param(5.0, "sequence tokens per kept token (the paper's KV compression ratio, up to 5)")
    recent: int = param(10, "newest tokens never dropped (assumed; inside the budget)", "tokens")
    drop: float = param(0.5, "share of the budget dropped per compression (assumed)")

    def check_params(self) -> None:
        self.require(self.ratio >= 1, "ratio", "a number >= 1")
        self.require(self.recent >= 0, "recent", "a non-negative integer")
        self.require(0 < self.drop <= 1, "drop", "a share in (0, 1]")

    def stored_tokens(self, n: float) -> float:
        return min(n, max(n / self.ratio, min(n, self.recent)))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        ops = [score_update("scissorhands_importance", ctx, self.stored_tokens, 1.0)]
        if ctx.decode:
            # A compression every drop x budget steps reads and writes the kept tokens once.
            kept = sum(n * self.stored_tokens(c) for _, c, n in ctx.batch.groups)
            per_step = kept * (1 - self.drop) / max(1.0, self.drop * kept / ctx.batch.sequences)
            nbytes = 2 * ctx.kv.token_bytes(per_step, ctx.kv_width)
            ops.append(elementwise("scissorhands_compact", 0.0, nbytes, per_step, ctx.kv_layers,
                                   f"{per_step:g} kept tokens' K/V read+written per step (compaction amortized)"))
        return ops


@register
@dataclass(frozen=True)
class Keyformer(Technique):
    """Key tokens: when the prompt has been read (with full attention), each head keeps `kept` of the
    prompt's tokens, a recent window (`recent` of the budget) plus the key tokens with the highest
    accumulated score, where the score is a softmax with temperature over the attention logits
    regularized by Gumbel noise; from then on the cache holds that many tokens whatever the output
    length, each generated token evicting the lowest-scoring one (the paper: 'maintain a constant KV
    cache size with k tokens during generation'; the release, models/keyformer-lib/attention.py, sets
    req_tokens = kv_cache% of the prompt's keys once, in the prompt pass, and masks every key beyond
    it at each step). Costs: the attention kernel also writes its logits for every pair it computes;
    a kernel reads them back, draws the noise, applies the tempered softmax and accumulates per kept
    token and head (more work per score than H2O's plain sum). A chunked prompt attends its whole
    prefix (it is evicted only when the prompt ends)."""

    name = "keyformer"
    family = "C"
    paper = "Keyformer: KV Cache Reduction through Key Tokens Selection for Efficient Generative Inference"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.5, "share of the prompt's tokens kept in the cache (the paper's 50% KV cache reduction)")
    recent: float = param(0.2, "share of the budget that is the recent window (paper: 20-30%)")
    prompt: int = param(0, "prompt tokens the budget is a share of; 0: the workload's prompt", "tokens")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")
        self.require(0 <= self.recent <= 1, "recent", "a share from 0 to 1")
        self.require(self.prompt >= 0, "prompt", "an integer >= 0")

    def for_workload(self, workload) -> Keyformer:
        return self if self.prompt else replace(self, prompt=workload.prompt)

    def stored_tokens(self, n: float) -> float:
        if not self.prompt:             # unbound to a workload: a share of the sequence
            return min(n, self.kept * n)
        return min(n, max(1.0, self.kept * self.prompt))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kept = self.stored_tokens if ctx.decode else (lambda c: c)     # the prompt pass scores its whole prefix
        return [score_update("keyformer_score", ctx, kept, GUMBEL_SCORE_OPS)]


class SinkWindowSplit(Technique):
    """Shared arithmetic: a share `full_share` of the cache (heads or layers) keeps every token, the
    rest keeps `cap(n)` tokens (sinks + a recent window). Stored tokens are the average; with
    `banded_prefill` the windowed part also computes only the pairs inside its band in prefill."""

    banded_prefill = True

    def full_share(self) -> float:
        return 0.0

    def cap(self, n: float) -> float:
        raise NotImplementedError

    def stored_tokens(self, n: float) -> float:
        f = self.full_share()
        return f * n + (1 - f) * min(n, self.cap(n))

    def pair_fraction(self, q: int, c: int) -> float:
        """`c` is the cached count after eviction (an average); the original count is recovered to
        give the pairs both parts compute, as a share of the causal pairs of (q, c)."""
        if not self.banded_prefill:
            return 1.0
        f, cap = self.full_share(), self.cap(c)
        original = c if c <= cap or f == 0 else (c - (1 - f) * cap) / f
        pairs = f * causal_pairs(q, original) + (1 - f) * band_pairs(q, min(original, cap), cap)
        return pairs / causal_pairs(q, c) if q > 0 else 1.0


@register
@dataclass(frozen=True)
class StreamingLLM(SinkWindowSplit):
    """Attention sinks + sliding window: every layer and head keeps the first `sinks` tokens and the
    `window` most recent, so a sequence stores min(n, sinks + window) tokens whatever its length, a
    decode step reads that many, and each prefill query attends only to the sinks and the window
    (chunked prefill chunks attend the kept cache only): decode time stops growing with context.
    Cost: positions are assigned within the cache, so keys are cached before RoPE and the decode
    kernel rotates every key it reads (CUDA-core ops beside the memory stream)."""

    name = "streamingllm"
    family = "C"
    paper = "Efficient Streaming Language Models with Attention Sinks"
    slots = ("kv budget",)
    evicts = True
    budget_param = "window"
    sinks: int = param(4, "initial tokens kept as attention sinks", "tokens")
    window: int = param(2000, "most recent tokens kept (the reference code's recent_size)", "tokens")
    eager_shift: bool = param(False, "the release's pos-shift attention, a patch of Hugging Face's LlamaAttention: "
                              "every cached key re-rotated by eager PyTorch ops each step (set on hf-transformers "
                              "engines)")

    def check_params(self) -> None:
        self.require(self.sinks >= 0, "sinks", "a non-negative integer")
        self.require(self.window >= 1, "window", "a positive integer")

    def for_engine(self, engine: str) -> StreamingLLM:
        # mit-han-lab/streaming-llm patches transformers' LlamaAttention.forward: on Hugging Face its code runs
        return replace(self, eager_shift=True) if engine.startswith("hf-transformers") else self

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.position == "learned":
            raise WhatifError(f"--technique {self.name}: {model.name} adds learned absolute position "
                              f"embeddings to its inputs, so cached keys cannot be moved to positions within "
                              f"the cache; valid: models with RoPE or ALiBi")

    def cap(self, n: float) -> float:
        return self.sinks + self.window

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode or ctx.model.position != "rope" or self.eager_shift:
            return ops   # (eagerly: the rotation is its own kernels, extra_ops)

        def rotate(op: Op) -> Op:
            keys = op.shape.sequences * op.shape.max_context * ctx.kv.width(ctx.kv_width) / 2
            return replace(op, alu_ops=op.alu_ops + keys * ROPE_OPS,
                           formula=op.formula + f"; + {ROPE_OPS:g} ops per cached key element (RoPE at cache position)")
        return replace_ops(ops, LAYER_ATTENTION_ROLES, rotate)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        """streaming_llm/pos_shift/modify_llama.py, apply_rotary_pos_emb_single over the whole key cache each
        step: x * cos + rotate_half(x) * sin, rotate_half being a neg of one half and a cat, so the keys move
        10 times (neg E/2 in and out, cat E, two muls E, add 2E in and E out), beside the cos/sin gathers at
        the cache positions: 7 aten ops per attention layer, as 2 kernels here, since the hf-transformers
        engines' eager host cost is per whatif kernel of ~3.75 aten ops (45 per decoder layer over 12)."""
        if not (self.eager_shift and ctx.decode and ctx.model.position == "rope"):
            return []
        tokens = sum(n * self.stored_tokens(c + q) for q, c, n in ctx.batch.groups)
        keys = tokens * ctx.kv_width / 2                    # key elements of this GPU's cache, one layer
        a = dtype_bytes(ctx.prec.kv)
        table = max(q + c for q, c, _ in ctx.batch.groups) * ctx.model.head_dim * a   # one cos (or sin) gather
        return [elementwise("pos_shift_gathers", 0.0, 4 * table, 2 * table / a, ctx.kv_layers,
                            "cos and sin gathered at the cache positions (written, then read by the muls)"),
                elementwise("pos_shift_rotation", 3 * keys, 10 * keys * a, keys, ctx.kv_layers,
                            f"neg, cat, 2 mul, add over {keys:g} cached key elements: 10 passes of {a:g} B")]


@register
@dataclass(frozen=True)
class DuoAttention(SinkWindowSplit):
    """Retrieval and streaming heads: the `retrieval` share of KV heads (found offline) keeps a full
    cache; the other heads keep `sinks` + `recent` tokens. Stored tokens and decode reads are the
    average over heads, retrieval x n + (1 - retrieval) x min(n, sinks + recent); in prefill the
    streaming heads compute only the pairs inside their sink + recent band. No scoring at run time."""

    name = "duoattention"
    family = "C"
    paper = "DuoAttention: Efficient Long-Context LLM Inference with Retrieval and Streaming Heads"
    slots = ("kv budget",)
    evicts = True
    budget_param = "retrieval"
    retrieval: float = param(0.5, "share of KV heads kept full (paper: 50% for GQA models, 25% for MHA)")
    sinks: int = param(64, "attention-sink tokens of streaming heads (reference code's sink_size)", "tokens")
    recent: int = param(256, "recent tokens of streaming heads (reference code's recent_size)", "tokens")

    def check_params(self) -> None:
        self.require(0 <= self.retrieval <= 1, "retrieval", "a share from 0 to 1")
        self.require(self.sinks >= 0, "sinks", "a non-negative integer")
        self.require(self.recent >= 1, "recent", "a positive integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_per_head_cache(self, model)

    def full_share(self) -> float:
        return self.retrieval

    def cap(self, n: float) -> float:
        return self.sinks + self.recent


@register
@dataclass(frozen=True)
class LongGen(SinkWindowSplit):
    """Hybrid architecture (fine-tuned): the `full_layers` share of layers uses full attention; the
    others use attention sinks + a local window. Stored tokens and prefill pairs are the average over
    layers: full x n + (1 - full) x min(n, sinks + window), and the sparse layers compute only the
    pairs of their band in prefill."""

    name = "longgen"
    family = "C"
    paper = "A Little Goes a Long Way: Efficient Long Context Training and Inference with Partial Contexts"
    slots = ("kv budget",)
    evicts = True
    budget_param = "full_layers"
    full_layers: float = param(1 / 3, "share of layers with full attention (paper: 1/3)")
    sinks: int = param(64, "attention-sink tokens of sparse layers (assumed)", "tokens")
    window: int = param(4096, "local window of sparse layers (assumed: the 4K pre-extension context)", "tokens")

    def check_params(self) -> None:
        self.require(0 <= self.full_layers <= 1, "full_layers", "a share from 0 to 1")
        self.require(self.sinks >= 0, "sinks", "a non-negative integer")
        self.require(self.window >= 1, "window", "a positive integer")

    def full_share(self) -> float:
        return self.full_layers

    def cap(self, n: float) -> float:
        return self.sinks + self.window


@register
@dataclass(frozen=True)
class RazorAttention(SinkWindowSplit):
    """Retrieval heads keep all tokens; every other head keeps `sinks` tokens, a recent buffer of
    max(`min_buffer`, n / `ratio`) tokens and one compensation token (the mean of the K/V it dropped).
    Stored tokens are the average over heads. Prefill is full attention (FlashAttention), then the
    cache is compressed. Costs: the dropped tokens' K/V are read once to average them into the
    compensation token (at the end of prefill, then one token per step as the buffer slides)."""

    name = "razorattention"
    family = "C"
    paper = "RazorAttention: Efficient KV Cache Compression Through Retrieval Heads"
    slots = ("kv budget",)
    evicts = True
    budget_param = "retrieval"
    banded_prefill = False
    # The paper's settings (its Table 2 caption, quoted by paper notes in the search index: buffer max(4000, N/5),
    # 14% induction + 1% echo heads, 4 sink tokens, 3.125x under long input); Huawei's own release keeps the head
    # shares as defaults (msModelSlim RARopeCompressConfig, golden-stick RAConfig: 0.14 + 0.01).
    retrieval: float = param(0.15, "share of heads kept full (the paper's 14% induction + 1% echo heads)")
    ratio: float = param(5.0, "compression ratio C of non-retrieval heads' buffer n / C (the paper's 5)")
    min_buffer: int = param(4000, "smallest recent buffer S0 of non-retrieval heads (the paper's 4000)", "tokens")
    sinks: int = param(4, "attention-sink tokens of non-retrieval heads (the paper's 4)", "tokens")

    def check_params(self) -> None:
        self.require(0 <= self.retrieval <= 1, "retrieval", "a share from 0 to 1")
        self.require(self.ratio >= 1, "ratio", "a number >= 1")
        self.require(self.min_buffer >= 1, "min_buffer", "a positive integer")
        self.require(self.sinks >= 0, "sinks", "a non-negative integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_per_head_cache(self, model)

    def full_share(self) -> float:
        return self.retrieval

    def cap(self, n: float) -> float:
        return self.sinks + max(self.min_buffer, n / self.ratio) + 1

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        def dropped(n: float) -> float:
            return max(0.0, n - self.cap(n))
        share = 1 - self.retrieval
        tokens = sum(n * max(0.0, dropped(c + q) - dropped(c)) for q, c, n in ctx.batch.groups) * share
        comp = ctx.batch.sequences * share
        nbytes = ctx.kv.token_bytes(tokens, ctx.kv_width) + 2 * ctx.kv.token_bytes(comp, ctx.kv_width)
        elements = (tokens + comp) * ctx.kv.width(ctx.kv_width)
        return [elementwise("razor_compensation", 2 * elements, nbytes, elements, ctx.kv_layers,
                            f"{tokens:g} dropped tokens' K/V read once into {comp:g} compensation tokens")]


@register
@dataclass(frozen=True)
class SnapKV(Technique):
    """Prompt compressed once: when the prompt has been read (with full attention), the last `window`
    prompt queries vote for earlier tokens by their attention, the votes are max-pooled over `kernel`
    neighbours and each KV head keeps the `budget` tokens with most votes (window included). Decode
    reads the budget. Costs at the end of prefill, per layer: the window's queries against every
    prompt key (tensor-core FLOPs, keys read, fp32 scores written and read for softmax, summing and
    pooling), then the kept tokens' K/V are gathered into a new cache (read + write). Hooks do not
    see where the prompt ends, so generated tokens count within the budget (the paper adds them on
    top: an error of at most the output length per sequence)."""

    name = "snapkv"
    family = "C"
    paper = "SnapKV: LLM Knows What You are Looking for Before Generation"
    slots = ("kv budget",)
    evicts = True
    budget_param = "budget"
    budget: int = param(1024, "prompt tokens kept per KV head (paper: 1024, 2048 or 4096)", "tokens")
    window: int = param(32, "observation window: last prompt tokens whose attention votes", "tokens")
    kernel: int = param(7, "max-pooling kernel over the votes", "tokens")

    def check_params(self) -> None:
        self.require(self.budget >= 1, "budget", "a positive integer")
        self.require(self.window >= 1, "window", "a positive integer")
        self.require(self.kernel >= 1, "kernel", "a positive integer")

    def stored_tokens(self, n: float) -> float:
        return min(n, max(self.budget, self.window))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        return vote_ops("snapkv", ctx, self.window, self.budget, ctx.kv_layers)


@register
@dataclass(frozen=True)
class GemFilter(Technique):
    """Early layers as filters: the prompt runs through the first `filter_layer` layers only; that
    layer's attention from the last query picks the `keep` most relevant prompt tokens, and the
    whole model then prefills only those. Prefill = filter_layer layers over the full prompt (full
    attention) + all layers over `keep` tokens; the cache holds `keep` tokens. Costs: the last
    query's scores against every prompt key at the filter layer and a top-k. Generated tokens count
    within `keep` (hooks do not see where the prompt ends); the filter layers' transient KV for the
    full prompt is not reserved in the memory plan; the filter pass is recognized as any prefill pass
    reaching past `keep` tokens (exact while `keep` is below the prefill chunk); with pipeline stages
    each stage runs the filter share of its own layers (the true split puts them in the first stages)."""

    name = "gemfilter"
    family = "C"
    paper = "Discovering the Gems in Early Layers: Accelerating Long-Context LLMs with 1000x Input Token Reduction"
    slots = ("kv budget",)
    evicts = True
    budget_param = "keep"
    filter_layer: int = param(13, "layers run over the full prompt (paper: 13 for Llama-3.1-8B)", "layers")
    keep: int = param(1024, "prompt tokens selected (paper: 1024)", "tokens")

    def check_params(self) -> None:
        self.require(self.filter_layer >= 1, "filter_layer", "a positive integer")
        self.require(self.keep >= 1, "keep", "a positive integer")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if self.filter_layer > model.num_layers:
            raise WhatifError(f"--technique {self.name}:filter_layer={self.filter_layer}: {model.name} has "
                              f"{model.num_layers} layers; valid: 1 to {model.num_layers}")
        if model.mla is not None:
            raise WhatifError(f"--technique {self.name}: the filter pass is modelled for MHA/GQA/MQA attention; "
                              f"{model.name} uses latent attention (MLA)")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.keep)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        out: list[PrefillUnit] = []
        for new, cached, n in units:
            out.append((new, cached, n))
            if new + cached > self.keep:
                out.append((self.keep, 0, n))
        return out

    def _filter_pass(self, batch: ForwardBatch) -> bool:
        return not batch.is_decode and any(q + c > self.keep for q, c, _ in batch.groups)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not self._filter_pass(ctx.batch):
            return ops
        share = self.filter_layer / ctx.model.num_layers
        out: list[Op] = []
        for op in ops:
            if op.role in LOGIT_ROLES:
                continue                         # the filter pass stops at its layer: no logits
            if op.role in EMBEDDING_ROLES:
                out.append(op)
                continue
            count = round(op.count * share)
            if count <= 0:
                continue
            if op.role == OpRole.ATTENTION:
                out.append(full_attention(op, ctx, self.stored_tokens, count))
            else:
                out.append(replace(op, count=count))
        return out

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not self._filter_pass(ctx.batch):
            return []
        heads, kvh, d = heads_per_gpu(ctx), kv_heads_per_gpu(ctx), ctx.model.head_dim
        keys = sum(n * q for q, _, n in ctx.batch.groups)        # this pass's prompt keys (sums to the prompt)
        nbytes = keys * kvh * d * ctx.prec.kv_bytes + keys * heads * 4.0 * 2
        return [elementwise("gemfilter_select", keys * heads * (2.0 * d + 4), nbytes, keys * heads, 1,
                            f"last query x {keys:g} keys x {heads} heads at layer {self.filter_layer}; "
                            f"top-{self.keep}")]


@register
@dataclass(frozen=True)
class LazyEviction(Technique):
    """Lagged eviction for long reasoning: keeps the `kept` share of the sequence, but evicts only
    every `window` steps (the observation window), so up to `window` extra tokens sit in the cache.
    Costs: every step the attention kernel emits its scores, which a kernel compares with a threshold
    to update each kept token's last-important step and longest recurrence interval (like H2O's
    accumulators); every `window` steps the tokens with the longest intervals are dropped and the
    kept K/V compacted (read + write), amortized per step."""

    name = "lazyeviction"
    family = "C"
    paper = "LazyEviction: Lagged KV Eviction with Attention Pattern Observation for Efficient Long Reasoning"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.5, "share of the sequence kept (the paper's 50% KV cache reduction)")
    window: int = param(128, "observation window: steps between evictions (assumed)", "tokens")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")
        self.require(self.window >= 1, "window", "a positive integer")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.kept * n + self.window)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        ops = [score_update("lazyeviction_recurrence", ctx, self.stored_tokens, 3.0)]
        if ctx.decode:
            per_step = sum(n * self.stored_tokens(c) for _, c, n in ctx.batch.groups) / self.window
            ops.append(elementwise("lazyeviction_compact", 0.0, 2 * ctx.kv.token_bytes(per_step, ctx.kv_width),
                                   per_step, ctx.kv_layers, f"{per_step:g} kept tokens' K/V read+written per step "
                                   f"(compaction every {self.window} steps, amortized)"))
        return ops


@register
@dataclass(frozen=True)
class WindowKV(Technique):
    """Task-adaptive window selection: like SnapKV the prompt is compressed once after prefill by an
    observation window's attention, but whole windows of consecutive tokens are kept (the `kept`
    share of the sequence), and each group of `group` layers shares one selection, so the voting
    runs once per group. Costs: the voting pass (window queries x prompt keys, scores, top-k) on
    1/`group` of the layers, and the kept tokens' gather in every layer. Generated tokens count
    within the share (hooks do not see where the prompt ends)."""

    name = "windowkv"
    family = "C"
    paper = "WindowKV: Task-Adaptive Group-Wise KV Cache Window Selection for Efficient LLM Inference"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.12, "share of the prompt kept (the paper's 12% of the original KV cache)")
    window: int = param(32, "observation window of last prompt tokens (assumed, as SnapKV)", "tokens")
    group: int = param(4, "layers sharing one token selection (assumed)", "layers")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")
        self.require(self.window >= 1, "window", "a positive integer")
        self.require(self.group >= 1, "group", "a positive integer")

    def stored_tokens(self, n: float) -> float:
        return min(n, max(self.kept * n, self.window))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return ops
        return replace_ops(ops, {OpRole.ATTENTION}, lambda op: full_attention(op, ctx, self.stored_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if ctx.decode:
            return []
        prompt = max(q + c for q, c, _ in ctx.batch.groups)
        return vote_ops("windowkv", ctx, self.window, self.kept * prompt, -(-ctx.kv_layers // self.group))


@register
@dataclass(frozen=True)
class D2O(Technique):
    """Dynamic discriminative operations: H2O-style eviction by accumulated attention to an average
    `kept` share (shallow layers with dense attention keep more, deep layers less: the average is
    what memory and decode see), plus compensation: each evicted token's key is compared (cosine)
    with the kept keys and, above a running similarity threshold, merged into its nearest kept token.
    Costs: H2O's score accumulation, and per step and KV head the kept keys read again for the
    similarity (CUDA cores) and one merged K/V written."""

    name = "d2o"
    family = "C"
    paper = "D2O: Dynamic Discriminative Operations for Efficient Generative Inference of Large Language Models"
    slots = ("kv budget",)
    evicts = True
    budget_param = "kept"
    kept: float = param(0.2, "average share of the sequence kept over layers (assumed, as H2O's 20%)")

    def check_params(self) -> None:
        self.require(0 < self.kept <= 1, "kept", "a share in (0, 1]")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.kept * n)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        ops = [score_update("d2o_score_update", ctx, self.stored_tokens, 1.0)]
        if ctx.decode:
            kvh, d = kv_heads_per_gpu(ctx), ctx.model.head_dim
            keys = sum(n * self.stored_tokens(c) for _, c, n in ctx.batch.groups) * kvh * d
            merged = ctx.batch.sequences * kvh * d * 2          # one K and one V vector per KV head
            ops.append(elementwise("d2o_merge", 3.0 * keys + 3.0 * merged,
                                   keys * ctx.prec.kv_bytes + 3 * merged * ctx.prec.kv_bytes, keys, ctx.kv_layers,
                                   f"{keys:g} kept key elements read for cosine similarity; {merged:g} merged "
                                   f"elements read twice, written once"))
        return ops


@register
@dataclass(frozen=True)
class WindowRecompute(Technique):
    """Sliding window with re-computation (the baseline StreamingLLM compares against): no KV cache
    survives between steps; every generated token re-encodes the last `window` tokens from scratch,
    so a decode step costs a prefill pass of min(context, window) tokens per sequence (all layers,
    causal attention, logits for the last position only). The prompt is truncated to its last
    `window` tokens. Only the window's KV exists at a time."""

    name = "window_recompute"
    family = "C"
    paper = "Efficient Streaming Language Models with Attention Sinks (baseline: sliding window with re-computation)"
    slots = ("kv budget",)
    evicts = True
    budget_param = "window"
    window: int = param(2000, "tokens re-encoded for every generated token", "tokens")

    def check_params(self) -> None:
        self.require(self.window >= 1, "window", "a positive integer")

    def stored_tokens(self, n: float) -> float:
        return min(n, self.window)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return [(min(new + cached, self.window), 0, n) for new, cached, n in units]

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not ctx.decode:
            return ops
        if ctx.par.pp > 1:
            raise WhatifError(f"--technique {self.name}: modelled for one pipeline stage; use --pp 1")
        from ..graph import forward_ops     # graph imports the technique modules: import when used
        groups = tuple((min(c + q, self.window), 0, n) for q, c, n in ctx.batch.groups)
        return forward_ops(ctx.model, ForwardBatch(groups), ctx.par, ctx.prec, 0, sm_count=ctx.sm_count)
