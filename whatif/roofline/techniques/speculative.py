"""Family F: speculative decoding. Every drafter shares the tree, acceptance and batch policy of
decoding.Speculative; each supplies what drafting costs and what memory it adds."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..comm import comm_op
from ..config import ForwardBatch, Parallelism
from ..decode_round import RoundContext
from ..mlp import weight_gemm
from ..forward_pass import PassTime, time_pass
from ..memory import stage_weight_bytes
from ..ops import OpClass, gemm, streaming
from .base import param, register
from .decoding import Speculative, draft_for, draft_kv_bytes, draft_model_passes


@register
@dataclass(frozen=True)
class DraftModel(Speculative):
    """A separate small draft model proposes k tokens one step at a time (or a tree, level by level);
    the target verifies them in one pass of k+1 tokens per sequence, with logits at each. The draft
    runs on the target's GPUs (its weights and KV cache take HBM there) unless parallel=true puts it
    on its own GPU, where drafting the next round overlaps verifying this one (PEARL). Its first
    step takes in the tokens accepted last round; it also prefills every prompt. draft_context
    limits what the drafter reads to the last N tokens (RAPID's retrieval drafter: a short context). RSD's
    trees sampled without replacement (Gumbel-top-k, stochastic beam search) cost what tree= or
    candidates= of the same size cost: what RSD changes is the acceptance, an input here."""

    name = "speculative"
    family = "F"
    paper = ("Fast Inference from Transformers via Speculative Decoding (Leviathan et al.); PEARL; SpecDec++; "
             "SpecTr; RAPID; RSD")
    draft: str = param("auto", "draft model (profile name or config path); auto = the smallest shipped model "
                               "with the target's vocabulary")
    draft_tp: int = param(1, "GPUs the draft model is split over (tensor parallel)")
    draft_context: int = param(0, "tokens the drafter reads per sequence (RAPID: a retrieved short context); "
                                  "0 = all", "tokens")
    parallel: bool = param(False, "PEARL: the drafter runs on its own GPU, drafting beside the verify pass")

    def check_params(self) -> None:
        super().check_params()
        self.require(self.draft_tp >= 1, "draft_tp", "an integer >= 1")
        self.require(self.draft_context >= 0, "draft_context", "an integer >= 0")

    def draft_model(self, target: ModelSpec) -> ModelSpec:
        return draft_for(self.name, self.draft, target)

    def notes(self, model: ModelSpec) -> list[str]:
        chosen = [f"{self.name}:draft=auto chose {self.draft_model(model).name} (the smallest shipped model with "
                  f"{model.name}'s vocabulary)"] if self.draft == "auto" else []
        return super().notes(model) + chosen

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        draft = self.draft_model(model)
        if draft.num_heads % self.draft_tp:
            raise WhatifError(f"--technique {self.name}:draft_tp={self.draft_tp}: does not divide the "
                              f"{draft.num_heads} heads of {draft.name}")

    def _draft_context(self, context: int) -> int:
        return min(context, self.draft_context) if self.draft_context else context

    def _draft_setup(self, rc: RoundContext):
        where = f"--technique {self.name}:draft_tp={self.draft_tp}"
        gpus = rc.setup.parallel.gpus
        if not self.parallel and self.draft_tp > gpus:
            raise WhatifError(f"{where}: the drafter shares the target's {gpus} GPU(s); give draft_tp <= {gpus}, "
                              f"or parallel=true for a drafter on GPUs of its own")
        try:
            return rc.other_model(self.draft_model(rc.setup.user_model), self.draft_tp)
        except WhatifError as e:
            raise WhatifError(f"{where}: {e}") from None

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        return draft_model_passes(rc, self._draft_setup(rc), widths, catch_up, self._draft_context(rc.context))

    def overlaps(self) -> bool:
        return self.parallel

    def prefill_s(self, rc: RoundContext) -> float:
        """The drafter prefills every prompt too: after the target's prefill on shared GPUs, beside it
        (adding only what it takes longer) on GPUs of its own."""
        from ..estimate import prefill_passes
        setup = self._draft_setup(rc)
        prompt = self._draft_context(rc.prompt)
        draft = sum(time_pass(setup, fb, False).time_s * n
                    for fb, n in prefill_passes(rc.batch, prompt, rc.prefill_chunk))
        if not self.parallel:
            return draft
        target = sum(time_pass(rc.setup, fb, False).time_s * n
                     for fb, n in prefill_passes(rc.batch, rc.prompt, rc.prefill_chunk))
        return max(0.0, draft - target)

    def extra_weight_bytes(self, model, par, prec) -> float:
        if self.parallel:
            return 0.0
        return stage_weight_bytes(self.draft_model(model), Parallelism(tp=self.draft_tp), prec, 0)

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        if self.parallel:
            return 0.0
        return draft_kv_bytes(self.draft_model(model), self.draft_tp, prec, self._draft_context(tokens))


@register
@dataclass(frozen=True)
class SortedSpeculative(DraftModel):
    """S2D, sorted speculative decoding: one draft model is fine-tuned so that its first layers form nested
    sub-models (sorted fine-tuning), and one such draft serves several target models, each drafting with
    the sub-model whose depth suits it. For one target this is a draft model that runs its first
    `draft_layers` share of layers (and its LM head) per step; the whole draft's weights stay in HBM (the
    other targets' sub-models share them) and only the layers it runs keep KV. Acceptance is assumed; which
    depth S2D picks per target is not in the abstract (half the draft assumed)."""

    name = "s2d"
    family = "F"
    paper = "S2D: Sorted Speculative Decoding For More Efficient Deployment of Nested Large Language Models"
    draft_layers: float = param(0.5, "share of the draft's layers the sub-model runs (assumed)")

    def check_params(self) -> None:
        super().check_params()
        self.require(0.0 < self.draft_layers <= 1.0, "draft_layers", "in (0, 1]")

    def full_draft(self, target: ModelSpec) -> ModelSpec:
        return super().draft_model(target)

    def draft_model(self, target: ModelSpec) -> ModelSpec:
        full = self.full_draft(target)
        layers = max(1, round(full.num_layers * self.draft_layers))
        return replace(full, name=f"{full.name}-first-{layers}", num_layers=layers) if layers < full.num_layers \
            else full

    def extra_weight_bytes(self, model, par, prec) -> float:
        if self.parallel:
            return 0.0
        return stage_weight_bytes(self.full_draft(model), Parallelism(tp=self.draft_tp), prec, 0)


@register
@dataclass(frozen=True)
class Medusa(Speculative):
    """Extra decoding heads on the target's last hidden state: head i (a residual block of hidden x
    hidden and its own LM head over the vocabulary) proposes candidates for position i+1, all in one
    step after the verify pass; a tree of their top candidates is verified with tree attention in the
    next target pass (tree-size + 1 tokens per sequence). Reading the heads' weights each round is the
    draft cost; they also take HBM. Medusa-2 fine-tunes the backbone with the heads (higher alphas)."""

    name = "medusa"
    family = "F"
    paper = "Medusa: Simple LLM Inference Acceleration Framework with Multiple Decoding Heads"
    heads: int = param(4, "Medusa heads (one per drafted depth)")
    head_layers: int = param(1, "residual blocks per head")
    alphas: str = param("0.6/0.45/0.35/0.25", "top-1 acceptance per head (assumed, of the order the paper's "
                                              "head accuracies show); '/'-separated, the last repeats")
    tree: str = param("4x3x2x1", "candidate tree: top-k per head (widths per depth) or explicit nodes; "
                                 "4x3x2x1 has 64 nodes, about Medusa's 63-node default tree")

    def check_params(self) -> None:
        super().check_params()
        self.require(self.heads >= 1, "heads", "an integer >= 1")
        self.require(self.head_layers >= 0, "head_layers", "an integer >= 0")
        if len(self.depth_alphas()) > self.heads:
            raise WhatifError(f"--technique medusa:tree={self.tree!r}: {len(self.depth_alphas())} levels deep, but "
                              f"only {self.heads} heads draft (heads={self.heads})")

    def _head_ops(self, model: ModelSpec, tp: int, rows: int, prec) -> list:
        """Under TP (as vLLM shards Medusa) each GPU holds every residual block whole (a replicated
        linear: no collective) and a vocabulary slice of each LM head, whose logits are gathered."""
        d, a, w = model.hidden_size, prec.act_bytes, prec.embedding_bytes
        vocab = -(-model.vocab_size // tp)
        ops = []
        if self.head_layers:
            ops.append(gemm("medusa_resblock", rows, d, d, a, w, prec.lm_head_dtype,
                            count=self.heads * self.head_layers))
        ops.append(gemm("medusa_lm_head", rows, vocab, d, a, w, prec.lm_head_dtype, count=self.heads, out_bytes=4.0))
        if tp > 1:
            ops.append(comm_op("medusa_logits_gather", "all_gather", rows * vocab * tp * 4.0, tp, self.heads))
        ops.append(streaming("medusa_topk", OpClass.SAMPLING, rows * model.vocab_size, 1, 0, 2, 4.0, "fp32",
                             count=self.heads))
        return ops

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        s = rc.setup
        return rc.ops_time(self._head_ops(s.model, s.parallel.tp, rc.batch, s.precision))

    def extra_weight_bytes(self, model, par, prec) -> float:
        d, vocab = model.hidden_size, -(-model.vocab_size // par.tp)
        return self.heads * (self.head_layers * d * d + d * vocab) * prec.embedding_bytes


@register
@dataclass(frozen=True)
class Eagle(Speculative):
    """A feature-level draft head (EAGLE): one decoder layer of the target's shape, fed the target's
    last hidden features, drafts autoregressively through the target's own LM head; a draft tree is
    grown level by level (EAGLE-2: a context-dependent tree, here a fixed shape) and verified in one
    target pass. Each draft step costs one layer plus an LM-head GEMM over that level's nodes; the
    head's weights and its one layer of KV take HBM. FSPAD's feature sampling (token embeddings mixed into
    the features the head takes) and partial-alignment distillation change its acceptance, not these costs.
    FLASH's semi-autoregressive head (tokens_per_pass > 1) drafts that many tree levels per head pass."""

    name = "eagle"
    family = "F"
    paper = "EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty (and EAGLE-2; FSPAD)"
    alpha: float = param(0.75, "acceptance per draft token (assumed, the order EAGLE reports on Vicuna/LLaMA2-Chat)")
    tree: str = param("3x2x2x1x1", "draft tree (widths per depth or nodes); 45 nodes, 5 deep (assumed shape "
                                   "for EAGLE-2's dynamic tree)")
    tokens_per_pass: int = param(1, "tree levels drafted per head pass: 1 is EAGLE's autoregressive head; FLASH's "
                                    "semi-autoregressive head emits several consecutive tokens from one pass")

    def check_params(self) -> None:
        super().check_params()
        self.require(isinstance(self.tokens_per_pass, int) and self.tokens_per_pass >= 1, "tokens_per_pass",
                     "an integer >= 1")

    def pass_widths(self, widths: list[int]) -> list[int]:
        """The levels whose nodes feed a head pass (every tokens_per_pass-th; the last level feeds none),
        then the last: a semi-autoregressive pass drafts the next tokens_per_pass levels at once."""
        k = self.tokens_per_pass
        return widths[k - 1:-1:k] + widths[-1:]

    def head_model(self, model: ModelSpec) -> ModelSpec:
        return replace(model, name=f"{model.name}-eagle-head", num_layers=1, moe=None,
                       intermediate_size=model.intermediate_size if model.moe is None
                       else model.moe.expert_intermediate_size * max(1, model.moe.experts_per_token))

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        """Every token the round accepted: the head runs each with the target's feature at it, which
        only the verify pass computed."""
        return tokens

    def _fuse(self, rc: RoundContext, rows: float) -> float:
        """The 2h -> h fuse of [feature, token embedding] before the head's layer (replicated under TP)."""
        d = rc.setup.model.hidden_size
        return rc.ops_time([weight_gemm("eagle_fc", rows, d, 2 * d, rc.setup.precision, 1)])

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        s = rc.setup
        setup = rc.other_model(self.head_model(s.user_model), s.parallel.tp)
        widths = self.pass_widths(widths)
        rows = rc.batch * (max(1.0, catch_up) + sum(widths[:-1]))
        return draft_model_passes(rc, setup, widths, catch_up, rc.context) + self._fuse(rc, rows)

    def prefill_s(self, rc: RoundContext) -> float:
        """The head runs over every prompt token too (its one layer of KV, the first draft)."""
        from ..estimate import prefill_passes
        s = rc.setup
        setup = rc.other_model(self.head_model(s.user_model), s.parallel.tp)
        passes = prefill_passes(rc.batch, rc.prompt, rc.prefill_chunk)
        return sum(time_pass(setup, fb, False).time_s * n for fb, n in passes) + self._fuse(rc, rc.batch * rc.prompt)

    def extra_weight_bytes(self, model, par, prec) -> float:
        head = self.head_model(model)
        d = model.hidden_size
        return (head.layer_params(0) / par.tp + 2 * d * d) * prec.weight_bytes   # one layer + the feature fuse

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        return draft_kv_bytes(self.head_model(model), par.tp, prec, tokens)


@register
@dataclass(frozen=True)
class NGram(Speculative):
    """Drafts copied from text, not computed: n-gram matches in the prompt and output (prompt lookup,
    CopySpec, Aggressive Decoding), a datastore (REST), an adjacency table of past tokens (Token
    Recycling) or tri-grams (ADED, whose adaptive tri-gram matrix and exploring draft tree are a lookup and a
    tree= here). The GPU only verifies; drafting is a CPU lookup per sequence. Its acceptance depends on
    how repetitive the task is (summarisation, code edits: high)."""

    name = "ngram"
    family = "F"
    paper = "Prompt Lookup Decoding; REST; Token Recycling; CopySpec; Aggressive Decoding; ADED"
    alpha: float = param(0.5, "acceptance per drafted token (assumed; task-dependent)")
    lookup_us: float = param(10.0, "CPU time of one sequence's lookup per round (assumed)", "us")

    def check_params(self) -> None:
        super().check_params()
        self.require(self.lookup_us >= 0, "lookup_us", ">= 0")

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        return rc.batch * self.lookup_us * 1e-6


@register
@dataclass(frozen=True)
class SelfSpeculative(Speculative):
    """Self-speculation by early exit (LayerSkip, Draft & Verify, DEL, Kangaroo): the target's first
    layers and its LM head draft; the model verifies. No second model: the draft layers' KV is the
    target's own (no extra memory); drafting costs draft_layers of the layers per step. With `reuse`
    (LayerSkip, DEL) the verify pass runs only the layers after the exit on the drafts, whose
    early-layer states and KV the drafting computed (the deepest draft's one-token early layers are
    not charged); without it the full model verifies."""

    name = "self_speculative"
    family = "F"
    paper = "LayerSkip; Draft & Verify; DEL: Context-Aware Dynamic Exit Layer for Efficient Self-Speculative Decoding"
    draft_layers: float = param(0.25, "share of the target's layers the draft runs (exit layer / L)")
    alpha: float = param(0.7, "acceptance per draft token (assumed)")
    reuse: bool = param(True, "verification runs only the layers after the exit on the drafts, reusing the "
                              "draft's early-layer work and KV (LayerSkip, DEL: 'applying the remaining layers "
                              "for verification'); false: the full model verifies (Draft & Verify skips "
                              "middle layers, so nothing is shared)")

    def check_params(self) -> None:
        super().check_params()
        self.require(0.0 < self.draft_layers < 1.0, "draft_layers", "in (0, 1)")

    def _exit_layers(self, m: ModelSpec) -> int:
        return min(m.num_layers - 1, max(1, round(m.num_layers * self.draft_layers)))

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        if self.reuse:   # the early layers ran every draft but the deepest; the verify pass skipped them
            return super().catch_up_tokens(tokens, reach)
        return 1.0       # the full verify pass wrote the accepted tokens' KV in the draft layers too

    def verify_pass(self, rc: RoundContext, rows: int) -> PassTime:
        if not self.reuse:
            return super().verify_pass(rc, rows)
        m = rc.setup.model
        rest = replace(m, name=f"{m.name}-after-exit", num_layers=m.num_layers - self._exit_layers(m))
        return time_pass(replace(rc.setup, model=rest), ForwardBatch.verify_pass(rc.batch, rows, rc.context),
                         rc.cuda_graphs)

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        # The draft layers are the target's own: same weights, precision, KV cache and techniques.
        m = rc.setup.model
        exit_model = replace(m, name=f"{m.name}-exit", num_layers=self._exit_layers(m))
        return draft_model_passes(rc, replace(rc.setup, model=exit_model), widths, catch_up, rc.context)


@register
@dataclass(frozen=True)
class SparseKVSelfSpeculative(Speculative):
    """Self-speculation with a sparse KV cache (TriForce, MagicDec): the target itself drafts while
    reading only `budget` cached tokens per sequence (retrieved pages or a StreamingLLM window), then
    verifies with its full cache. It pays off where reading the KV dominates (long contexts, large
    batches): each draft step still reads all the weights. The draft's cache is a copy of the selected
    tokens. (TriForce's second level, a tiny model drafting for this draft, is not modelled.)"""

    name = "sparse_self_speculative"
    family = "F"
    paper = ("TriForce: Lossless Acceleration of Long Sequence Generation with Hierarchical Speculative Decoding; "
             "MagicDec")
    budget_param = "budget"
    budget: int = param(4096, "cached tokens the draft reads per sequence", "tokens")
    alpha: float = param(0.9, "acceptance per draft token (assumed; TriForce reports high acceptance at a 4K budget)")

    def check_params(self) -> None:
        super().check_params()
        self.require(self.budget >= 1, "budget", "an integer >= 1")

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        return 1.0   # the accepted tokens' KV comes from the verify pass

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        return draft_model_passes(rc, rc.setup, widths, catch_up, min(rc.context, self.budget))

    def extra_kv_bytes(self, model, par, prec, tokens) -> float:
        from ..memory import stored_kv_bytes
        from .compose import NONE
        return stored_kv_bytes(model, par, prec, NONE, min(tokens, self.budget))
