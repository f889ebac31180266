"""Decoders: techniques that replace the one-token decode step by a round yielding several tokens.

A Decoder times one round for a batch at a context (decode_round.py): the target's pass, drafting
and other per-round work, and the tokens each sequence gains. Speculative decoders share the
acceptance model of speculation.py: a draft tree (a chain of k, a product tree, SpecTr's candidate
drafts, or explicit nodes), acceptance per depth, and how a batch advances when its sequences
accept different counts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from typing import ClassVar

from ...specs import models
from ...errors import WhatifError
from ...specs.models import ModelSpec
from .. import speculation as spec
from ..config import ForwardBatch, Parallelism
from ..decode_round import Round, RoundContext
from ..forward_pass import PassTime, time_pass
from ..memory import stored_kv_bytes
from ..ops import OpClass, streaming
from .base import Technique, param

BATCH_POLICIES = ("ragged", "min", "realign")


@dataclass(frozen=True)
class Decoder(Technique):
    slots: ClassVar[tuple[str, ...]] = ("decoding",)
    decodes: ClassVar[bool] = True
    first_token_from_prefill: ClassVar[bool] = True   # False: the rounds emit the first token too (diffusion)

    def round(self, rc: RoundContext) -> Round:
        raise NotImplementedError

    def prefill_s(self, rc: RoundContext) -> float:
        """Time the technique adds to the prefill (a draft model prefilling the prompt too)."""
        return 0.0

    def first_visible_tokens(self, rc: RoundContext) -> int:
        """Tokens that become final together with the first one (a diffusion block); 1 otherwise."""
        return 1


def load_other_model(name: str, where: str) -> ModelSpec:
    try:
        return models.load_model(name)
    except WhatifError as e:
        raise WhatifError(f"{where}: {str(e).partition(': ')[2]}") from None


@dataclass(frozen=True)
class Speculative(Decoder):
    """Shared by every drafter: the tree, acceptance and batch policy (the drafter supplies its cost)."""

    k: int = param(4, "drafted tokens per round (chain length; ignored when `tree` is given)", "tokens")
    alpha: float = param(0.8, "acceptance rate of each draft token given its parent (assumed: measure it for "
                              "your drafter and data)")
    alphas: str = param("", "acceptance per depth, '0.9/0.8/0.7' (the last repeats); overrides alpha")
    tree: str = param("", "draft tree: widths per depth '4x2x1', or nodes '0/0.0/1' (sibling ranks, '.'-joined); "
                          "'' = a chain of k")
    siblings: str = param("", "acceptance of a rank-r sibling after the higher ranks missed, relative to the top "
                              "draft's, per rank '1/0.45/0.3' (the last repeats); '' = measured (Medusa's top-k "
                              "accuracy, speculation.RANK_FALLOFF); '1' = each sibling a fresh chance")
    candidates: int = param(1, "independent draft sequences per round (SpecTr); a root-branching tree")
    batch_policy: str = param("ragged", "how a batch advances: ragged (each sequence by its own acceptance, paged "
                                        "KV), min (all by the least), realign (own acceptance, padded KV "
                                        "re-aligned each round: BSD's EXSPEC)")
    adaptive: bool = param(False, "SpecDec++: stop drafting once the predicted probability that any drafted token "
                                  "is rejected exceeds `stop`")
    stop: float = param(0.7, "adaptive: threshold on P(at least one drafted token rejected) that ends the round")
    spread: float = param(4.0, "adaptive: concentration of per-token acceptance, Beta(alpha*s, (1-alpha)*s) "
                               "(assumed)")
    head_weight: float = param(6.0, "adaptive: loss weight on rejected tokens the acceptance head was trained with "
                                    "(SpecDec++ README recipe: 6), so it predicts p / (p + w (1 - p)); 1 = exact")

    def check_params(self) -> None:
        self.require(self.k >= 1, "k", "an integer >= 1")
        self.require(0.0 <= self.alpha <= 1.0, "alpha", "in [0, 1]")
        self.require(self.candidates >= 1, "candidates", "an integer >= 1")
        self.require(self.batch_policy in BATCH_POLICIES, "batch_policy", "one of " + ", ".join(BATCH_POLICIES))
        self.require(0.0 < self.stop < 1.0, "stop", "in (0, 1)")
        self.require(self.spread > 0, "spread", "> 0")
        self.require(self.head_weight > 0, "head_weight", "> 0")
        tree = self.draft_tree()
        spec.parse_alphas(self.alphas, self.alpha, spec.depth(tree), f"--technique {self.name}:alphas")
        spec.parse_falloff(self.siblings, f"--technique {self.name}:siblings")
        if self.adaptive and (self.tree or self.candidates > 1):
            raise WhatifError(f"--technique {self.name}:adaptive=true: adaptive draft length applies to a chain; "
                              f"drop tree= and candidates=")
        if self.tree and self.candidates > 1:
            raise WhatifError(f"--technique {self.name}: give tree= or candidates=, not both")

    # ---- acceptance
    def draft_tree(self) -> spec.Tree:
        if self.tree:
            return spec.parse_tree(self.tree, f"--technique {self.name}:tree")
        return spec.candidates_tree(self.candidates, self.k)

    def depth_alphas(self) -> tuple[float, ...]:
        tree = self.draft_tree()
        return spec.parse_alphas(self.alphas, self.alpha, spec.depth(tree), f"--technique {self.name}:alphas")

    def acceptance(self, batch: int) -> tuple[float, list[float], float]:
        """(tokens each sequence gains per round, P(reach depth d), drafted tokens per sequence the
        verify pass checks: the deepest row's, as a batch verifies a rectangle)."""
        tree = self.draft_tree()
        if self.adaptive:
            reach, survival = spec.adaptive_chain(self.depth_alphas()[0], self.spread, self.stop, self.k,
                                                 head_weight=self.head_weight)
            drafted = spec.expected_max_count(survival, batch)
        else:
            falloff = spec.parse_falloff(self.siblings, f"--technique {self.name}:siblings")
            reach = spec.reach_probabilities(tree, self.depth_alphas(), falloff)
            drafted = float(len(tree))
        tokens = spec.expected_min_tokens(reach, batch) if self.batch_policy == "min" else 1.0 + sum(reach)
        return tokens, reach, drafted

    def draft_widths(self, drafted: float) -> list[int]:
        """Tokens per sequence the drafter proposes at each of its sequential steps."""
        if self.adaptive:
            return [1] * max(1, math.ceil(drafted - 1e-9))
        return spec.nodes_per_depth(self.draft_tree())

    # ---- cost
    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        """Seconds of drafting per round (GPU passes or CPU lookups); `catch_up`: tokens the drafter's
        first step takes in (catch_up_tokens)."""
        raise NotImplementedError

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        """Tokens (expected) the drafter has not yet run when a round starts. A drafter with its own
        cache ran every draft but the deepest itself: it takes in the verify pass's new token, and
        the deepest draft too when all were accepted. Drafters fed the target's features override."""
        return 1.0 + (reach[-1] if reach else 0.0)

    def round(self, rc: RoundContext) -> Round:
        rc = as_engine_runs(rc)
        tokens, reach, drafted = self.acceptance(rc.batch)
        width = max(1, math.ceil(drafted - 1e-9))
        verify = self.verify_pass(rc, width + 1)
        widths = self.draft_widths(drafted)
        overhead = self.realign_s(rc) if self.batch_policy == "realign" else 0.0   # every round, batch 1 too
        overhead += state_commit_s(rc)
        detail = {"drafted_per_sequence": drafted, "verified_per_sequence": width + 1,
                  "acceptance_by_depth": reach, "draft_steps": len(widths)}
        catch_up = self.catch_up_tokens(tokens, reach)
        draft = self.draft_s(rc, widths, catch_up)
        if self.adaptive:
            draft = self._expected_draft_s(rc, drafted, draft, catch_up)
        return Round(tokens, verify, draft, overhead, self.overlaps(), tuple(reach), detail)

    def _expected_draft_s(self, rc: RoundContext, drafted: float, at_ceiling: float, catch_up: float) -> float:
        """An adaptive round drafts a random number of tokens, each a drafter step of equal cost, so the round's
        expected drafting is linear in the expected count (SpecDec++ section 3: time = draft steps x t_draft +
        target calls x t_target): between the whole step counts around `drafted`, not the ceiling's. The verify
        pass keeps the ceiling's rows (one row more or less barely moves a memory-bound pass)."""
        below = math.floor(drafted + 1e-9)
        if below < 1 or drafted - below < 1e-9:
            return at_ceiling
        at_floor = self.draft_s(rc, [1] * below, catch_up)
        return at_floor + (drafted - below) * (at_ceiling - at_floor)

    def overlaps(self) -> bool:
        return False

    def verify_pass(self, rc: RoundContext, rows: int) -> PassTime:
        """The target's pass over `rows` tokens per sequence (the drafts and the last accepted token)."""
        return rc.target(ForwardBatch.verify_pass(rc.batch, rows, rc.context))

    def realign_s(self, rc: RoundContext) -> float:
        """EXSPEC/EQSPEC: sequences of a padded batch accept different counts, so every round rewrites
        the batch's KV to re-align them. As the released code does it (eBay/spec_dec,
        src/custom/verification.py realign_kv_cache; cross_batch_speculative.py's fallback the same):
        per layer, a zeroed key and value tensor for the batch, then a slice copy per sequence into
        it, each its own kernel launched from Python, so the launches grow with the batch. The released loop
        runs every round whatever the batch (batch_speculative.py calls it unconditionally, batch 1 too), and
        per layer it also recomputes the source and destination ends (three elementwise ops each on the
        device-side length tensors) and, per sequence, reads four bounds back with `.item()` (a device-to-host
        copy and a sync, each priced as one eager op); the final lengths, their max and its `.item()` once a round."""
        s = rc.setup
        per_seq = stored_kv_bytes(s.model, s.parallel, s.precision, s.techniques, rc.context)
        layers = s.model.num_layers
        tensors = 2 * layers                               # a key and a value tensor per layer
        alloc = streaming("kv_realign_zero", OpClass.ELEMENTWISE, rc.batch * per_seq / tensors, 0, 1, 0, 1.0,
                          s.precision.kv, count=tensors)
        copy = streaming("kv_realign_copy", OpClass.ELEMENTWISE, per_seq / tensors, 1, 1, 0, 1.0, s.precision.kv,
                         count=tensors * rc.batch)
        # source/dest ends per layer; once a round the final lengths, their max and its read
        bounds = streaming("kv_realign_bounds", OpClass.ELEMENTWISE, rc.batch, 2, 1, 1, 8.0, "int64",
                           count=6 * layers + 3)
        reads = streaming("kv_realign_item", OpClass.ELEMENTWISE, 1, 1, 0, 0, 8.0, "int64",
                          count=4 * layers * rc.batch)  # source start/end, dest start/end per sequence and layer
        return rc.ops_time([alloc, copy, bounds, reads])


def state_commit_s(rc: RoundContext) -> float:
    """SGLang's commit of a hybrid model's recurrent states after a verify pass: the accepted step's state, read
    from the verify's intermediate buffer and written into each sequence's slot, every recurrent layer (one fused
    gather-scatter: update_mamba_state_after_mtp_verify, layers/attention/hybrid_linear_attn_backend.py). vLLM
    keeps a slot a verified token instead and reads the accepted one on the next pass: nothing to copy."""
    s = rc.setup
    engine = s.engine_spec
    if engine is None or engine.base_engine != "sglang":
        return 0.0
    model = s.model
    per_seq = sum(model.state_bytes(i, s.precision.kv_bytes) for i in range(model.num_layers)
                  if not model.layers[i].attention) / (s.parallel.attention_tp * s.parallel.pp)
    if per_seq <= 0:
        return 0.0
    seqs = -(-rc.batch // s.parallel.attention_dp)
    copy = streaming("recurrent_state_commit", OpClass.ELEMENTWISE, seqs * per_seq, 1, 1, 0, 1.0,
                     s.precision.activation)
    return rc.ops_time([copy])


def as_engine_runs(rc: RoundContext) -> RoundContext:
    """The round's kernels run in CUDA graphs only where the engine captures graphs at this batch
    (engine.graph_batch, as a plain decode step's): an eager engine (Hugging Face generate()) launches
    every verify, draft and bookkeeping kernel from Python, and pays its host time per kernel."""
    engine = rc.setup.engine_spec
    if rc.cuda_graphs and engine is not None and engine.graph_batch(rc.batch) is None:
        return replace(rc, cuda_graphs=False)
    return rc


def draft_model_passes(rc: RoundContext, setup, widths: list[int], catch_up: float, context: int) -> float:
    """A draft model's sequential steps: the first takes in the `catch_up` tokens it has not run yet
    (an expected count: its time is interpolated between the whole counts around it), each later
    one the nodes of the previous depth; every step needs logits at all its tokens."""
    def step(q: int, depth: int) -> float:
        return time_pass(setup, ForwardBatch.verify_pass(rc.batch, q, context + depth), rc.cuda_graphs).time_s

    whole = max(1, math.floor(catch_up))
    part = min(1.0, max(0.0, catch_up - whole))
    first = step(whole, 0) + (part * (step(whole + 1, 0) - step(whole, 0)) if part > 1e-9 else 0.0)
    return first + draft_later_steps(rc, setup, widths, context)


def draft_later_steps(rc: RoundContext, setup, widths: list[int], context: int) -> float:
    """A drafter's steps after its first: depth d takes in the nodes of depth d (widths[d - 1]) a sequence, at
    context + d, with logits at each."""
    return sum(time_pass(setup, ForwardBatch.verify_pass(rc.batch, q, context + depth), rc.cuda_graphs).time_s
               for depth, q in enumerate(widths[:-1], start=1))


def draft_kv_bytes(draft: ModelSpec, tp: int, prec, tokens: float) -> float:
    from .compose import NONE
    return stored_kv_bytes(draft, Parallelism(tp=tp), prec, NONE, tokens)


def check_draft_vocab(name: str, key: str, draft: ModelSpec, target: ModelSpec) -> None:
    if draft.vocab_size != target.vocab_size:
        raise WhatifError(f"--technique {name}:{key}={draft.name}: its vocabulary ({draft.vocab_size} tokens) "
                          f"differs from {target.name}'s ({target.vocab_size}); a drafter must share the "
                          f"target's tokenizer")


def _size(m: ModelSpec) -> int:
    return m.num_layers * m.hidden_size ** 2


@cache
def _smallest_with_vocab(vocab: int, below: int) -> ModelSpec | None:
    shipped = (models.load_model(n) for n in models.list_models())
    fits = [m for m in shipped if m.vocab_size == vocab and _size(m) < below]
    return min(fits, key=_size, default=None)


def smallest_with_vocab(target: ModelSpec) -> ModelSpec | None:
    """The smallest shipped model profile sharing the target's vocabulary (a drafter must share its tokenizer)."""
    return _smallest_with_vocab(target.vocab_size, _size(target))


def draft_for(technique: str, draft: str, target: ModelSpec) -> ModelSpec:
    """A technique's `draft` parameter resolved: a named profile sharing the target's vocabulary, or (auto) the
    smallest shipped one that does."""
    where = f"--technique {technique}:draft"
    if draft == "auto":
        found = smallest_with_vocab(target)
        if found is None:
            raise WhatifError(f"{where}=auto: no shipped model shares {target.name}'s vocabulary "
                              f"({target.vocab_size} tokens); name one with draft=MODEL")
        return found
    model = load_other_model(draft, where)
    check_draft_vocab(technique, "draft", model, target)
    return model
