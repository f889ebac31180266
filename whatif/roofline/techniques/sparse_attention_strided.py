"""Family D: sparse attention trained into the model with a fixed, position-based pattern (S2-Attention):
what each head stores, reads and computes follows from the pattern alone, with no selection step."""
from __future__ import annotations

from dataclasses import dataclass

from ..attention import causal_pairs
from .base import Technique, param, register


@register
@dataclass(frozen=True)
class S2Attention(Technique):
    """S2-Attention (Sparsely-Sharded attention, a trained architecture): in a sparse layer every head
    attends its `local_blocks` most recent blocks of `block` tokens and, of the older blocks, one in
    `vert_stride`; heads start at different offsets, so the union of the heads' shards is the whole
    context. Every `dense_every`-th layer attends densely (0: none). A sparse layer's KV head stores
    and reads only its shard, local + (n - local) / vert_stride tokens of n, and prefill computes only
    those pairs, so decode reads, the cache and prefill attention all shrink by about the stride at
    long context. Defaults: the pattern Phi-3-small ships (DKernel's block-sparse attention: blocks
    of 64, 16 local blocks, stride 8, every 2nd layer dense). Not expressed: query heads of one GQA
    group attending different shards (a KV head is assumed to serve one shard), and the kernel's
    efficiency on strided blocks (charged as the dense kernel's per pair)."""

    name = "s2_attention"
    family = "D"
    paper = "Efficient LLM Training and Serving with Heterogeneous Context Sharding among Attention Heads"
    slots = ("kv budget",)
    evicts = True          # a per-layer, per-head subset of the positions is cached
    budget_param = "local_blocks"
    block: int = param(64, "tokens per block of the pattern (Phi-3-small: 64)", "tokens")
    local_blocks: int = param(16, "most recent blocks every head attends (Phi-3-small: 16)", "blocks")
    vert_stride: int = param(8, "one older block in this many is in a head's shard (Phi-3-small: 8)")
    dense_every: int = param(2, "every n-th layer attends densely (Phi-3-small: 2); 0: every layer sparse")

    def check_params(self) -> None:
        self.require(self.block >= 1, "block", "a positive number of tokens")
        self.require(self.local_blocks >= 0, "local_blocks", "a non-negative number of blocks")
        self.require(self.vert_stride >= 1, "vert_stride", "an integer >= 1 (1: dense)")
        self.require(self.dense_every >= 0, "dense_every", "an integer >= 0 (0: no dense layers)")

    @property
    def local(self) -> int:
        return self.block * self.local_blocks

    def dense_share(self) -> float:
        return 1.0 / self.dense_every if self.dense_every else 0.0

    def shard(self, n: float) -> float:
        """Tokens of n a sparse layer's head attends: the local window, then one older block in vert_stride."""
        return n if n <= self.local else self.local + (n - self.local) / self.vert_stride

    def stored_tokens(self, n: float) -> float:
        f = self.dense_share()
        return f * n + (1 - f) * self.shard(n)

    def original(self, stored: float) -> float:
        """The context length whose average stored count is `stored` (stored_tokens inverted)."""
        if stored <= self.local:
            return stored
        f, s, lo = self.dense_share(), self.vert_stride, self.local
        return (stored - (1 - f) * lo * (1 - 1 / s)) / (f + (1 - f) / s)

    def _shard_pairs(self, p: float) -> float:
        """Pairs of queries 1..p with their shards (each query attends shard(position) keys, itself included)."""
        lo = self.local
        if p <= lo:
            return p * (p + 1) / 2.0
        older = p - lo
        return lo * (lo + 1) / 2.0 + older * lo + older * (older + 1) / 2.0 / self.vert_stride

    def pair_fraction(self, q: int, c: int) -> float:
        """`c` is the average cached count after the pattern; the context is recovered from it."""
        if q <= 0:
            return 1.0
        c0 = self.original(c)
        f = self.dense_share()
        pairs = f * causal_pairs(q, c0) + (1 - f) * (self._shard_pairs(c0 + q) - self._shard_pairs(c0))
        return pairs / causal_pairs(q, c)
