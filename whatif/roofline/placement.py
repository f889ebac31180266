"""Placement: which share of the weights, the KV cache and the activations lives in which memory tier,
and the transfers that follow from it in each forward pass.

A share is a fraction of a tensor class on one GPU, spread evenly over the layers (an offloaded
layer's weights, every layer's oldest KV pages). Two ways to use bytes in a slower tier:
- stream (default): copy each layer's offloaded bytes into an HBM staging buffer before its kernels
  (FlexGen, ZeRO-Inference, vLLM swapping); with `overlap` the copy of layer i+1 runs on a copy
  engine while layer i computes, so a pass costs max(compute, transfer) plus one layer's fill;
- direct: kernels read the tier in place (GH200 Extended GPU Memory over NVLink-C2C, or zero-copy
  over PCIe); the tier's link then runs concurrently with the kernel's HBM traffic.
New KV entries and offloaded activations go back device-to-host, whose bandwidth may differ.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import WhatifError
from .ops import Op, device_copy, is_weight_gemm, kv_read_bytes, kv_write_bytes, transfer, weights_of
from .dequant import op_weight_bytes
from .context import HostPath, PassContext

CLASSES = ("weights", "kv", "activations")
ACCESS = ("stream", "direct")
STAGING_LAYERS = 2   # stream mode double-buffers: one layer in use, the next arriving


@dataclass(frozen=True)
class Placement:
    """Which share of each tensor class lives in which memory tier, and how it is read."""

    shares: tuple[tuple[str, str, float], ...] = ()   # (tensor class, tier name, fraction)
    access: str = "stream"
    overlap: bool = True
    fetch_copies: int = 0   # copies within HBM of each streamed weight byte, in line with its link copy

    def __post_init__(self):
        if self.access not in ACCESS:
            raise WhatifError(f"--access: {self.access!r} is not valid; valid: {', '.join(ACCESS)}")
        for cls, _, frac in self.shares:
            if cls not in CLASSES:
                raise WhatifError(f"--place: unknown tensor class '{cls}'; valid: {', '.join(CLASSES)}")
            if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1:
                raise WhatifError(f"--place {cls}: fraction {frac!r} must be in (0, 1]")
        for cls in CLASSES:
            if self.offloaded(cls) > 1 + 1e-9:
                raise WhatifError(f"--place {cls}: fractions add up to {self.offloaded(cls):g}; at most 1")

    def __bool__(self) -> bool:
        return bool(self.shares)

    def of(self, cls: str) -> list[tuple[str, float]]:
        """(tier, fraction) of a tensor class outside HBM."""
        return [(tier, f) for c, tier, f in self.shares if c == cls]

    def offloaded(self, cls: str) -> float:
        return sum(f for _, f in self.of(cls))

    @property
    def tiers(self) -> list[str]:
        return list(dict.fromkeys(tier for _, tier, _ in self.shares))

    def label(self) -> str:
        if not self.shares:
            return "all in HBM"
        parts = [f"{c}={t}:{f:g}" for c, t, f in self.shares]
        return ", ".join(parts) + f" ({self.access}{', overlapped' if self.overlap else ', not overlapped'})"

    def merged(self, other: Placement) -> Placement:
        """This placement with `other`'s shares added (a class placed twice on one tier: the later wins)."""
        keep = [s for s in self.shares if not any(s[:2] == o[:2] for o in other.shares)]
        return Placement(tuple(keep) + other.shares, other.access, other.overlap,
                         other.fetch_copies or self.fetch_copies)


NO_PLACEMENT = Placement()


def parse_place(specs, access: str = "stream", overlap: bool = True) -> Placement:
    """Placement from 'CLASS=TIER[:FRACTION]' strings (or a mapping {class: {tier: fraction}})."""
    shares = []
    if isinstance(specs, dict):
        for cls, tiers in specs.items():
            if not isinstance(tiers, dict):
                raise WhatifError(f"placement.{cls}: expected a mapping tier -> fraction, got {tiers!r}")
            shares += [(cls, str(tier), frac) for tier, frac in tiers.items()]
    else:
        for spec in specs or ():
            cls, eq, rest = str(spec).partition("=")
            if not eq or not rest:
                raise WhatifError(f"--place {spec!r}: expected CLASS=TIER[:FRACTION], e.g. kv=cxl:0.5; "
                                  f"classes: {', '.join(CLASSES)}")
            tier, colon, frac = rest.partition(":")
            try:
                value = float(frac) if colon else 1.0   # 'kv=ddr5:' (an empty fraction) is an error, not 1
                if not 0 < value <= 1:
                    raise ValueError
            except ValueError:
                raise WhatifError(f"--place {spec!r}: fraction {frac!r} is not a number in (0, 1]") from None
            shares.append((cls.strip(), tier.strip(), value))
    return Placement(tuple(shares), access, overlap)


def resolved(p: Placement, resolve, source: str = "--place") -> Placement:
    """`p` with tier names resolved to memory-profile names by `resolve(name, where)`; `source` says
    who placed the shares in error messages (the flag, or a technique)."""
    return replace(p, shares=tuple((c, resolve(t, f"{source} {c}={t}"), f) for c, t, f in p.shares))


# ---------------------------------------------------------------- ops of one pass


def _weight_bytes_read(ops: list[Op], prec) -> float:
    """Layer weight bytes a pass reads (MoE: the touched experts only), summed over layers, each at its module
    class's bytes per weight; the embedding, LM head and router stay in HBM."""
    return sum(weights_of(op) * op_weight_bytes(op, prec) * op.count for op in ops if is_weight_gemm(op))


def _move_to_tier(op: Op, key: str, nbytes: float) -> Op:
    levels = dict(op.bytes)
    levels["hbm"] = levels.get("hbm", 0.0) - nbytes
    levels[key] = levels.get(key, 0.0) + nbytes
    return replace(op, bytes=levels, formula=op.formula + f"; {nbytes:g} B of it in place over {key}")


def placement_ops(ops: list[Op], ctx: PassContext, p: Placement, paths: dict[str, HostPath]) -> list[Op]:
    """The pass's ops with the placement's transfers added (stream) or tier reads moved into the
    kernels that touch the bytes (direct)."""
    if not p:
        return ops
    layers = max(1, ctx.layers)
    out = list(ops)
    for tier, f in p.of("weights"):
        per_layer = f * _weight_bytes_read(ops, ctx.prec) / layers
        if per_layer > 0:   # weights are always streamed: a GEMM re-reads its weights once per row tile
            out.append(transfer(f"weights_fetch[{tier}]", per_layer, paths[tier], layers, p.overlap))
            for i in range(p.fetch_copies):   # e.g. ZeRO-3's gather on one rank (offload_weights.ZeroInference)
                out.append(device_copy(f"weights_gather_copy{i + 1}[{tier}]", per_layer, paths[tier], layers,
                                       p.overlap))
    for tier, f in p.of("kv"):
        out = [new for op in out for new in _kv_offload(op, tier, f, paths[tier], p)]
    for tier, f in p.of("activations"):
        hidden = f * ctx.batch.tokens * ctx.model.hidden_size * ctx.prec.act_bytes
        out.append(transfer(f"activations_out[{tier}]", hidden, paths[tier], layers, p.overlap, "d2h"))
        out.append(transfer(f"activations_in[{tier}]", hidden, paths[tier], layers, p.overlap))
    return out


def _kv_offload(op: Op, tier: str, f: float, path: HostPath, p: Placement) -> list[Op]:
    """An op touching the KV cache, with a share `f` of that KV in `tier`: read in place (direct), or
    fetched into HBM before it and new entries written back after it (stream). Only tokens cached
    before the pass are read from the tier; the pass's own new K/V are still in HBM."""
    kv_read, kv_write = kv_read_bytes(op), kv_write_bytes(op)
    if not (kv_read or kv_write):
        return [op]
    if p.access == "direct":
        if kv_read:
            op = _move_to_tier(op, f"h2d:{tier}", f * kv_read)
        return [_move_to_tier(op, f"d2h:{tier}", f * kv_write) if kv_write else op]
    if kv_read:
        return [transfer(f"kv_fetch[{tier}]", f * kv_read, path, op.count, p.overlap), op]
    return [op, transfer(f"kv_writeback[{tier}]", f * kv_write, path, op.count, p.overlap, "d2h")]
