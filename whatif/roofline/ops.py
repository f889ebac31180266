"""The operator: what one kernel does (FLOPs, bytes per memory level, shape), not how long it takes."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WhatifError

from .op_shapes import (AttentionShape, CommShape, GemmShape, OpShape, ScoreShape, StreamShape, TransferShape,
                        shape_from_dict)
from ..specs.op_kinds import ATTENTION_CLASSES, FFN_ROLES, NON_LAYER_GEMM_ROLES, OpClass, OpRole

__all__ = ["ATTENTION_CLASSES", "AttentionShape", "CommShape", "GemmShape", "Op", "OpClass", "OpRole", "OpShape",
           "ScoreShape", "StreamShape", "TransferShape", "device_copy", "gemm", "graph_role", "in_ffn",
           "is_overlapped", "is_weight_gemm", "kv_read_bytes", "kv_write_bytes", "lane_of", "link_bytes",
           "op_fields_from_record",
           "shape_from_dict", "shape_record", "streaming", "transfer", "weights_of"]

OP_CLASS_VALUES = tuple(c.value for c in OpClass)
# Cost modifiers an op carries beside its shape, with the value that means "no modifier".
MODIFIER_DEFAULTS = {"alu_ops": 0.0, "bandwidth_share": 1.0, "input_quantized": False, "static_input_scale": False,
                     "collective_kernel": ""}


@dataclass(frozen=True)
class Op:
    """One kernel of a forward pass, per GPU, repeated `count` times (e.g. once per layer).

    `bytes` maps a memory level to bytes moved by one instance: 'hbm', 'l2', or 'h2d:NAME' /
    'd2h:NAME' for bytes from or to a slower tier (NAME: the link a transfer crosses, or the tier a
    kernel reads in place); L2_REREAD: the part of 'hbm' that L2 serves where the GPU's L2 bandwidth is known;
    `shape` holds the dimensions its efficiency depends on (op_shapes.py: GemmShape, AttentionShape, ...);
    `role` says what the op is in the model's graph (techniques find ops by it, not by name);
    `part_of` is, for an op a technique adds for a graph op (its dequant kernel, LoRA GEMMs, weight
    loads), that op's role, so lookups by part of the layer (the feed-forward half) still find it;
    `alu_ops` is CUDA-core work beside the tensor cores (e.g. in-kernel dequantization) and
    `bandwidth_share` the share of the HBM bandwidth the kernel can draw (e.g. too few CTAs);
    `input_quantized`: a low-precision GEMM whose input its producing kernel already wrote quantized (an
    engine's fused epilogue), so no quantization kernel runs before it (engine_kernels.py);
    `static_input_scale`: an fp8 GEMM whose input is quantized with a known (checkpoint) scale: one scaling
    kernel, no pass computing the scale (engine_kernels.py);
    `int_weights`: its weights are weight-only integers (int4/int8) dequantized in the kernel (an engine's
    integer weight-only MoE kernel prices it: expert_fits.moe_fit_dtype);
    `fp4_weights`: 4-bit float weights (MXFP4) beside 16-bit activations, dequantized in the kernel (an engine's
    MXFP4 MoE kernel prices it where its rows were measured: expert_fits.moe_fit_dtype); `weight_only_kernel`: such
    an expert GEMM run by the engine's weight-only (Marlin) MoE kernel (moe_kernels.py `marlin`);
    `block_scaled`: fp8 weights with per-block scales (DeepSeek's 128x128; dequant.block_scale_ops sets it), which
    an engine may run through another fused-MoE kernel than its per-tensor fp8 (expert_fits.expert_fit_engine);
    `expert_parallel`: an expert GEMM of a layout with ep > 1 (vLLM picks its Hopper block-FP8 MoE kernel by it);
    `collective_kernel`: a collective run by another engine's kernel than the pass's (vLLM's fused all-reduce +
    RMSNorm is FlashInfer's port of TensorRT-LLM's): that engine's fitted collective model prices it;
    `formula` says where the FLOPs and bytes came from, so every number is traceable.
    """

    name: str
    op_class: OpClass
    flops: float
    bytes: dict[str, float]
    dtype: str
    shape: OpShape
    count: int = 1
    formula: str = ""
    role: OpRole | None = None
    part_of: OpRole | None = None
    alu_ops: float = 0.0
    bandwidth_share: float = 1.0
    input_quantized: bool = False
    static_input_scale: bool = False
    int_weights: bool = False   # weight-only integer weights (int4/int8) the kernel dequantizes (dequant.py)
    block_scaled: bool = False  # fp8 weights with per-block scales (dequant.block_scale_ops)
    expert_parallel: bool = False   # an expert GEMM of an expert-parallel layout (ep > 1; moe.py), for kernel choice
    fp4_weights: bool = False   # MXFP4 weights beside 16-bit activations, dequantized in the kernel (dequant.py)
    weight_only_kernel: bool = False   # ... run by the engine's weight-only MoE kernel (moe_kernels: marlin)
    collective_kernel: str = ""  # the engine whose collective fit prices it ("": the pass's engine)
    bmm_fit: bool = False   # an absorbed-MLA bmm priced by its engine's mla_bmm fit (engine_kernels.absorb_bf16)

    def __post_init__(self):
        if type(self.op_class) is not OpClass:   # (built from a class member, as the graph does: nothing to convert)
            if self.op_class not in OP_CLASS_VALUES:
                raise WhatifError(f"op_class: '{self.op_class}' is not valid; valid: {', '.join(OP_CLASS_VALUES)}")
            object.__setattr__(self, "op_class", OpClass(self.op_class))
        for name in ("role", "part_of"):
            value = getattr(self, name)
            if value is not None and type(value) is not OpRole:
                object.__setattr__(self, name, OpRole(value))
        if not isinstance(self.shape, OpShape):
            raise TypeError(f"Op {self.name}: shape must be an OpShape (op_shapes.py), not {type(self.shape).__name__}")

    @property
    def hbm_bytes(self) -> float:
        return self.bytes.get("hbm", 0.0)

    @property
    def intensity(self) -> float:
        """Arithmetic intensity against HBM, FLOP/B."""
        return self.flops / self.hbm_bytes if self.hbm_bytes else float("inf")


def shape_record(op: Op) -> dict:
    """The op's shape and non-default cost modifiers as one flat dict (JSON output, measurement tables);
    `shape_from_dict` reads it back."""
    d = op.shape.to_dict()
    for name, default in MODIFIER_DEFAULTS.items():
        if getattr(op, name) != default:
            d[name] = getattr(op, name)
    return d


def op_fields_from_record(record: dict) -> dict:
    """`shape` and the cost modifiers' (MODIFIER_DEFAULTS) keyword arguments of an Op from a `shape_record` dict."""
    values = dict(record)
    mods = {name: type(default)(values.pop(name)) for name, default in MODIFIER_DEFAULTS.items() if name in values}
    return {"shape": shape_from_dict(values), **mods}


def gemm(name: str, m: float, n: float, k: float, act_bytes: float, weight_bytes: float,
         dtype: str, count: int = 1, out_bytes: float | None = None, role: OpRole | None = None) -> Op:
    """C[m,n] = A[m,k] @ W[k,n]: 2mnk FLOPs; A and C in activation dtype, W in weight dtype."""
    out_bytes = act_bytes if out_bytes is None else out_bytes
    hbm = m * k * act_bytes + k * n * weight_bytes + m * n * out_bytes
    return Op(name, OpClass.GEMM, 2.0 * m * n * k, {"hbm": hbm}, dtype, GemmShape(m, n, k), count,
              f"2*M*N*K with M={m:g} N={n:g} K={k:g}; bytes = M*K*a + K*N*w + M*N*a", role)


def streaming(name: str, op_class: OpClass, elements: float, reads: float, writes: float,
              flops_per_element: float, elem_bytes: float, dtype: str, count: int = 1,
              extra_bytes: float = 0.0, role: OpRole | None = None) -> Op:
    """An elementwise-like kernel that streams `elements` values `reads` times in, `writes` out."""
    hbm = elements * (reads + writes) * elem_bytes + extra_bytes
    return Op(name, op_class, flops_per_element * elements, {"hbm": hbm}, dtype, StreamShape(elements), count,
              f"{elements:g} elements x ({reads:g} reads + {writes:g} writes) x {elem_bytes:g} B"
              + (f" + {extra_bytes:g} B" if extra_bytes else ""), role)


def graph_role(op: Op) -> OpRole | None:
    """The role of `op` in the graph, or of the graph op a technique added it for."""
    return op.role or op.part_of


def in_ffn(op: Op) -> bool:
    """An op of a layer's feed-forward half (dense MLP or MoE, and what techniques add for them)."""
    return graph_role(op) in FFN_ROLES


def is_weight_gemm(op: Op) -> bool:
    """A GEMM against a layer's weights (what weight formats change and placements stream): every GEMM
    but the LM head (embedding-sized, kept 16-bit and in HBM) and the MoE router (activation-sized)."""
    return op.op_class == OpClass.GEMM and op.role not in NON_LAYER_GEMM_ROLES


def weights_of(op: Op) -> float:
    """Weights one instance of a weight GEMM reads (MoE: only the touched experts')."""
    return op.shape.groups * op.shape.k * op.shape.n


def transfer(name: str, nbytes: float, path, count: int = 1, overlap: bool = False, direction: str = "h2d",
             blocks: float = 1.0) -> Op:
    """Bytes crossing the link to a slower tier (`path`: a HostPath), as `blocks` separate copies.

    `direction` is h2d (tier to GPU) or d2h; `overlap`: on a copy engine beside the kernels. The
    bytes are keyed by direction and GPU-side link, so streams sharing a link add up."""
    bw = path.rate(direction)
    return Op(name, OpClass.TRANSFER, 0.0, {f"{direction}:{path.link_key}": nbytes}, "-",
              TransferShape(bw, path.latency, bool(overlap), blocks), count,
              f"{nbytes:g} B {direction} over {path.name} at {bw:g} B/s"
              + (f" in {blocks:g} blocks" if blocks > 1 else "") + (" (overlapped)" if overlap else ""))


def device_copy(name: str, nbytes: float, path, count: int = 1, overlap: bool = False) -> Op:
    """`nbytes` copied within HBM (read once, written once) by a kernel issued on the stream that carries
    `path`'s host-to-GPU copies: in line with them (their lane), beside the compute kernels when `overlap`."""
    lane = f"h2d:{path.link_key}"
    return Op(name, OpClass.TRANSFER, 0.0, {"hbm": 2.0 * nbytes}, "-",
              TransferShape(0.0, 0.0, bool(overlap), 1.0, lane), count,
              f"{nbytes:g} B copied within HBM ({2 * nbytes:g} B read + written) in line with {lane}"
              + (" (overlapped with the kernels)" if overlap else ""))


def lane_of(op: Op) -> str:
    """The copy stream an overlapped transfer runs on: its link and direction (or the lane it was issued on)."""
    return op.shape.lane or next(iter(op.bytes), "")


def is_overlapped(op: Op) -> bool:
    """A transfer on a copy engine, running beside the kernels rather than between them."""
    return isinstance(op.shape, TransferShape) and op.shape.overlap


def kv_read_bytes(op: Op) -> float:
    """Bytes of KV cache an attention op reads for tokens cached before its pass (0 for other ops)."""
    return op.shape.kv_bytes if op.op_class in ATTENTION_CLASSES and isinstance(op.shape, AttentionShape) else 0.0


def kv_write_bytes(op: Op) -> float:
    """Bytes an op appends to the KV cache (the cache write; 0 for other ops)."""
    return op.shape.kv_write_bytes if isinstance(op.shape, StreamShape) else 0.0


# Re-reads counted in an op's 'hbm' bytes that co-scheduled blocks find in L2 (engine_kernels.unshared_gqa_decode):
# kernel_timing takes them off HBM and times every read through L2 where the GPU profile gives its L2 bandwidth.
L2_REREAD = "l2_reread"


def link_bytes(op: Op) -> float:
    """Bytes an op moves to or from a slower tier ('h2d:...' / 'd2h:...' levels) rather than HBM."""
    return sum(v for k, v in op.bytes.items() if k[:4] in ("h2d:", "d2h:"))
