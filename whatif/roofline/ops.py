"""The operator: what one kernel does (FLOPs, bytes per memory level, shape), not how long it takes."""
from __future__ import annotations

from dataclasses import dataclass, field

# Op classes the efficiency model distinguishes.
OP_CLASSES = ("gemm", "attention_prefill", "attention_decode", "norm", "elementwise", "activation",
              "embedding", "rope", "comm", "sampling", "router", "transfer")


@dataclass(frozen=True)
class Op:
    """One kernel of a forward pass, per GPU, repeated `count` times (e.g. once per layer).

    `bytes` maps a memory level to bytes moved by one instance: 'hbm', 'l2', or 'h2d:NAME' /
    'd2h:NAME' for bytes from or to a slower tier (NAME: the link a transfer crosses, or the tier a
    kernel reads in place);
    `shape` holds the dimensions its efficiency depends on (gemm: m, n, k) and optional cost
    modifiers: `alu_ops` (CUDA-core work beside the tensor cores, e.g. in-kernel dequantization)
    and `bandwidth_share` (share of the HBM bandwidth the kernel can draw, e.g. too few CTAs);
    `formula` says where the FLOPs and bytes came from, so every number is traceable.
    """

    name: str
    op_class: str
    flops: float
    bytes: dict[str, float]
    dtype: str
    shape: dict[str, float] = field(default_factory=dict)
    count: int = 1
    formula: str = ""

    @property
    def hbm_bytes(self) -> float:
        return self.bytes.get("hbm", 0.0)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity against HBM, FLOP/B."""
        return self.flops / self.hbm_bytes if self.hbm_bytes else float("inf")


def gemm(name: str, m: float, n: float, k: float, act_bytes: float, weight_bytes: float,
         dtype: str, count: int = 1, out_bytes: float | None = None) -> Op:
    """C[m,n] = A[m,k] @ W[k,n]: 2mnk FLOPs; A and C in activation dtype, W in weight dtype."""
    out_bytes = act_bytes if out_bytes is None else out_bytes
    hbm = m * k * act_bytes + k * n * weight_bytes + m * n * out_bytes
    return Op(name, "gemm", 2.0 * m * n * k, {"hbm": hbm}, dtype, {"m": m, "n": n, "k": k}, count,
              f"2*M*N*K with M={m:g} N={n:g} K={k:g}; bytes = M*K*a + K*N*w + M*N*a")


def streaming(name: str, op_class: str, elements: float, reads: float, writes: float,
              flops_per_element: float, elem_bytes: float, dtype: str, count: int = 1,
              extra_bytes: float = 0.0) -> Op:
    """An elementwise-like kernel that streams `elements` values `reads` times in, `writes` out."""
    hbm = elements * (reads + writes) * elem_bytes + extra_bytes
    return Op(name, op_class, flops_per_element * elements, {"hbm": hbm}, dtype,
              {"elements": elements}, count,
              f"{elements:g} elements x ({reads:g} reads + {writes:g} writes) x {elem_bytes:g} B"
              + (f" + {extra_bytes:g} B" if extra_bytes else ""))


# GEMMs that read no layer weights: the LM head (embedding-sized, kept 16-bit and in HBM) and the
# MoE router (activation-sized); every other GEMM multiplies by a layer's weight matrix.
NON_LAYER_GEMMS = ("lm_head", "router")


def is_weight_gemm(op: Op) -> bool:
    """A GEMM against a layer's weights (what weight formats change and placements stream)."""
    return op.op_class == "gemm" and op.name not in NON_LAYER_GEMMS


def weights_of(op: Op) -> float:
    """Weights one instance of a weight GEMM reads (MoE: only the touched experts')."""
    return op.shape.get("groups", 1.0) * op.shape["k"] * op.shape["n"]


def transfer(name: str, nbytes: float, path, count: int = 1, overlap: bool = False, direction: str = "h2d",
             blocks: float = 1.0) -> Op:
    """Bytes crossing the link to a slower tier (`path`: a HostPath), as `blocks` separate copies.

    `direction` is h2d (tier to GPU) or d2h; `overlap`: on a copy engine beside the kernels. The
    bytes are keyed by direction and GPU-side link, so streams sharing a link add up."""
    bw = path.rate(direction)
    return Op(name, "transfer", 0.0, {f"{direction}:{path.link_key}": nbytes}, "-",
              {"bandwidth": bw, "latency": path.latency, "overlap": float(overlap), "blocks": blocks}, count,
              f"{nbytes:g} B {direction} over {path.name} at {bw:g} B/s"
              + (f" in {blocks:g} blocks" if blocks > 1 else "") + (" (overlapped)" if overlap else ""))


def link_bytes(op: Op) -> float:
    """Bytes an op moves to or from a slower tier ('h2d:...' / 'd2h:...' levels) rather than HBM."""
    return sum(v for k, v in op.bytes.items() if k[:4] in ("h2d:", "d2h:"))
