"""Family F, single-model parallel decoding by hidden transfer: the drafts of the next round are made
inside this round's pass, by pseudo hidden states that run through the target's upper layers."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..config import ForwardBatch
from ..decode_round import RoundContext
from ..forward_pass import time_pass
from ..mlp import weight_gemm
from .base import param, register
from .decoding import Speculative


@register
@dataclass(frozen=True)
class HiddenTransfer(Speculative):
    """Hidden Transfer: at layer `transfer` x L of the target, the hidden states of the context are mapped by
    one linear layer per future position (`k` of them, hidden x hidden) into pseudo hidden states of the
    next k tokens, which pass through the remaining layers beside the real tokens and out through the LM
    head; their top candidates form a tree that the next pass verifies with tree attention (lossless),
    while it makes the next round's pseudo states. So a round is one target pass: the tree + 1 tokens in
    every layer, plus k pseudo rows in the layers above the transfer layer (their marginal cost: the same
    weights serve them) and k transfer GEMMs. The transfer layers' weights take HBM. Acceptance is assumed
    (the abstract gives none); `transfer` and k are assumed too."""

    name = "hidden_transfer"
    family = "F"
    paper = "Parallel Decoding via Hidden Transfer for Lossless Large Language Model Acceleration"
    k: int = param(3, "pseudo tokens (future positions) each pass predicts (assumed)", "tokens")
    transfer: float = param(0.5, "share of the layers before the transfer layer (assumed)")
    alphas: str = param("0.6/0.4/0.3", "acceptance per depth (assumed, of the order of Medusa heads')")
    tree: str = param("4x2x1", "candidate tree: top-k per pseudo token (widths per depth) or nodes (assumed)")

    def check_params(self) -> None:
        super().check_params()
        self.require(self.k >= 1, "k", "an integer >= 1")
        self.require(0.0 < self.transfer < 1.0, "transfer", "in (0, 1)")
        if len(self.depth_alphas()) > self.k:
            raise WhatifError(f"--technique hidden_transfer:tree={self.tree!r}: {len(self.depth_alphas())} levels "
                              f"deep, but only k={self.k} pseudo tokens are predicted")

    def _upper(self, m: ModelSpec) -> ModelSpec:
        below = min(m.num_layers - 1, max(1, round(m.num_layers * self.transfer)))
        return replace(m, name=f"{m.name}-above-transfer", num_layers=m.num_layers - below)

    def catch_up_tokens(self, tokens: float, reach: list[float]) -> float:
        return 1.0    # no drafter of its own: the verify pass is the only pass

    def draft_s(self, rc: RoundContext, widths: list[int], catch_up: float) -> float:
        s = rc.setup
        upper = replace(s, model=self._upper(s.model))
        rows = sum(widths) + 1
        def at(r):
            return time_pass(upper, ForwardBatch.verify_pass(rc.batch, r, rc.context), rc.cuda_graphs).time_s
        d = s.model.hidden_size
        transfer = rc.ops_time([weight_gemm("hidden_transfer_linear", rc.batch, d, d, s.precision, self.k)])
        return max(0.0, at(rows + self.k) - at(rows)) + transfer

    def extra_weight_bytes(self, model, par, prec) -> float:
        return self.k * model.hidden_size ** 2 * prec.weight_bytes
