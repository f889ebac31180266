"""Typed op shapes: the dimensions an op's efficiency depends on, one small dataclass per op kind.

`to_dict` / `shape_from_dict` are the flat-dict form the JSON output and the measurement tables'
`op_shape` column hold (numbers, plus a collective's name)."""
from __future__ import annotations

from dataclasses import dataclass, fields

from ..errors import WhatifError


@dataclass(frozen=True)
class OpShape:
    """The shape of one kernel's work (one subclass per kernel kind)."""

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class GemmShape(OpShape):
    """C[m,n] = A[m,k] @ W[k,n]; `groups` > 1: a grouped GEMM (MoE experts touched), m split among them;
    `grid_m`: the M tiles a fused MoE's launch grid covers (every slot of the TP group, kernel_models/moe.py);
    `local_experts`: the experts this GPU holds, touched or not (one grouped-GEMM problem each: grouped_problems.py);
    `tokens`, `topk`, `experts`: the fused MoE call's tokens (the TP group's), experts a token and experts routed
    over (its grid's sizes); `block_m`: the M tile its kernel runs whatever the rows (kernel_models/triton_moe_tile.py,
    set by moe_kernels.fused_layer_ops with grid_m at it), 0: the tuned tile by rows (tile_m)."""

    m: float
    n: float
    k: float
    groups: float = 1.0
    grid_m: float = 0.0
    local_experts: float = 0.0
    tokens: float = 0.0
    topk: float = 0.0
    experts: float = 0.0
    block_m: float = 0.0
    bmm_heads: float = 0.0   # an absorbed-MLA bmm: m = tokens x these heads, each head its own (k x n) weights

    def to_dict(self) -> dict:
        d = {"m": self.m, "n": self.n, "k": self.k}
        return d if self.groups == 1.0 else {**d, "groups": self.groups}


@dataclass(frozen=True)
class AttentionShape(OpShape):
    """An attention kernel: causal (query, key) `pairs` per head, heads and head dims per GPU, the CTAs it
    launches, the longest context, the sequences, `kv_bytes` of cache tokens cached before the pass, the
    new tokens (`queries`) and the bytes per cached element.
    Selection and estimate kernels fill only the fields they have (the rest stay 0)."""

    pairs: float = 0.0
    heads: float = 0.0
    kv_heads: float = 0.0
    d_qk: float = 0.0
    d_v: float = 0.0
    ctas: float = 0.0
    max_context: float = 0.0
    sequences: float = 0.0
    kv_bytes: float = 0.0
    queries: float = 0.0            # new tokens the pass computes (all sequences)
    kv_element_bytes: float = 0.0   # bytes per cached element (the KV format's, for the kernel fits)
    parts: tuple = ()               # a mixed pass's two kernels, (prefill op, decode op); see attention.mixed_op
    gathered: bool = False          # its keys are tokens gathered by index (gathered_attention.py)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("parts", "gathered")}
        d = {**d, "gathered": True} if self.gathered else d
        return {**d, "parts": [op.shape.to_dict() for op in self.parts]} if self.parts else d


@dataclass(frozen=True)
class StreamShape(OpShape):
    """A streaming (elementwise-like) kernel over `elements` values; `kv_write_bytes`: of them, the bytes
    it appends to the KV cache (what placing the cache in a slower tier moves)."""

    elements: float
    kv_write_bytes: float = 0.0

    def to_dict(self) -> dict:
        return {"elements": self.elements, **({"kv_write_bytes": self.kv_write_bytes} if self.kv_write_bytes else {})}


@dataclass(frozen=True)
class ScoreShape(OpShape):
    """A selection kernel scoring `elements` summary values into `scores` fp32 scores."""

    elements: float
    scores: float


@dataclass(frozen=True)
class CommShape(OpShape):
    """A collective of `bytes` over `gpus` GPUs (all_reduce, all_to_all, all_gather, send_recv): global ranks
    first_rank, first_rank + stride, ... (a pipeline send: the two stages' peers, `stride` = tp apart), which
    say whether the group crosses a node of a multi-node system."""

    collective: str
    bytes: float
    gpus: int
    first_rank: int = 0
    stride: int = 1

    def to_dict(self) -> dict:
        d = {"collective": self.collective, "bytes": self.bytes, "gpus": self.gpus}
        return d if (self.first_rank, self.stride) == (0, 1) else {**d, "first_rank": self.first_rank,
                                                                   "stride": self.stride}


@dataclass(frozen=True)
class DeepEPShape(CommShape):
    """A DeepEP dispatch or combine (kernel_models/deepep.py): `tokens` this GPU routes, `hidden` elements
    each, to `topk` of `experts` experts over the `gpus` EP ranks; mode "normal" (prefill) or "ll" (decode)."""

    mode: str = "normal"
    phase: str = "dispatch"
    tokens: float = 0.0
    hidden: int = 0
    topk: int = 1
    experts: int = 1

    def to_dict(self) -> dict:
        return {**super().to_dict(), "deepep": f"{self.mode} {self.phase}", "tokens": self.tokens}


@dataclass(frozen=True)
class TransferShape(OpShape):
    """A copy over the link to a slower tier at `bandwidth` B/s, in `blocks` copies of `latency` s setup
    each; `overlap`: on a copy engine beside the kernels rather than between them. `lane`: set for a copy
    within HBM issued on a link's transfer stream (ops.device_copy): in line with that link's copies."""

    bandwidth: float
    latency: float
    overlap: bool = False
    blocks: float = 1.0
    lane: str = ""

    def to_dict(self) -> dict:
        d = {**super().to_dict(), "overlap": float(self.overlap)}
        return d if self.lane else {k: v for k, v in d.items() if k != "lane"}


def _kind(d: dict) -> type[OpShape]:
    if "collective" in d:
        return CommShape
    if "bandwidth" in d:
        return TransferShape
    if "m" in d:
        return GemmShape
    if "scores" in d:
        return ScoreShape
    if "elements" in d:
        return StreamShape
    return AttentionShape


def shape_from_dict(d: dict) -> OpShape:
    """The typed shape a `to_dict` dict describes (the keys say which kind)."""
    kind = _kind(d)
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(d) - known)
    if unknown:
        raise WhatifError(f"op_shape: {', '.join(unknown)} not valid for a {kind.__name__}; "
                          f"valid: {', '.join(sorted(known))}")
    ints = ("gpus", "first_rank", "stride")
    values = {k: (v if k == "collective" else bool(v) if k == "overlap" else int(v) if k in ints else float(v))
              for k, v in d.items()}
    try:
        return kind(**values)
    except TypeError:
        raise WhatifError(f"op_shape: {sorted(d)} is missing a field of a {kind.__name__}; "
                          f"needs: {', '.join(f.name for f in fields(kind))}") from None
