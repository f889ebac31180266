"""Family A: weight quantization, compression and pruning: fewer weight bytes per step, maybe
low-precision tensor cores, plus the cost of turning stored weights back into GEMM operands.

Every technique here owns the "weight format" slot (one storage format at a time) except structured
pruning, which changes the model's shape and composes with any format. Formats that no dtype names
(2-bit codebooks, entropy-coded BF16, 2:4 values plus indices) carry their exact bits per weight in
`StoredWeights`, so the memory plan and the GEMMs read the same bytes.

Long because: family A's 13 weight formats sit side by side over one set of GEMM-rewriting helpers
that only they use (the weight-format slot); a split would scatter one catalogue family. Shared cost
pieces live in kit.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

from ...specs.dtypes import BYTES, check_dtype
from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..config import Precision
from ..dequant import DEQUANT_OPS, DEQUANT_TILE_M
from ..ops import GemmShape, Op, OpClass, OpRole, gemm, graph_role, is_weight_gemm, streaming, weights_of
from ..context import PassContext
from .base import Technique, param, register

# GEMMs whose weights no weight format touches: the LM head stays 16-bit (as AWQ/GPTQ/FP8 keep it)
# and the MoE router is a tiny 16-bit matrix.

ACT_QUANT_FLOPS = 4.0        # per activation element: absmax reduction, scale, round, convert; assumed
SPARSE_INDEX_BITS = 2.0      # 2:4 metadata: a 2-bit position per kept value (NVIDIA sparse tensor core format)
BINARY_K_PER_INT4 = 4.0      # a binary (1-bit) MMA covers 4x the K of an INT4 MMA in the same time on Ampere
                             # (A100 whitepaper: 4992 binary vs 1248 INT4 TOPS dense)
BITPLANE_RECOVERY_OPS = 2.0  # shift and add per output element per (weight plane, activation plane) pair; assumed
VQ_OPS_PER_CODEBOOK = 2.0    # per weight per codebook: a shared-memory lookup and an add; assumed
DF11_DECODE_OPS = 8.0        # per weight: bit extraction, compact-LUT lookups, sign/exponent/mantissa merge and
                             # the write-position prefix sum of the two-phase kernel; assumed
BITSTACK_SIGN_OPS = 2.0      # per weight per residual block: apply the sign bit, accumulate; assumed
LUT_GROUP = 8                # activations per lookup table in the LUT-GEMM kernels ShiftAddLLM runs on (2^8 keys)
LUT_OPS_PER_LOOKUP = 2.0     # a shared-memory lookup plus an add, counted as two CUDA-core ops; assumed
MASK_BITS = 1.0              # unstructured pruning: a bitmap bit per original weight marks the kept ones; assumed
SCATTER_OPS = 2.0            # per original weight: read its mask bit, place the value or a zero; assumed
PRUNE_ROUND = 64             # pruned widths are rounded to multiples of 64, as GEMM kernels prefer; assumed


@dataclass(frozen=True)
class StoredWeights(Precision):
    """Precision whose linear-layer weights take `stored_bits` bits each in memory, scales, codebooks,
    indices and codes included. `weight` still names the dtype the GEMM path treats them as (int2:
    dequantized in the kernel to the activation dtype). Embeddings, norms and the LM head stay 16-bit."""

    stored_bits: float = 16.0
    gemm_input: str = ""     # the dtype a W8A8 format quantizes each GEMM's input to ('' : the activations')

    def __post_init__(self):
        check_dtype(self.weight, "weight format", tuple(BYTES))
        Precision("bf16", self.activation, self.kv, self.weight_group_size)   # checks the other fields
        if not self.stored_bits > 0:
            raise WhatifError(f"weight format: {self.stored_bits} bits per weight must be positive")

    @property
    def weight_bytes(self) -> float:
        return self.stored_bits / 8.0

    @property
    def embedding_bytes(self) -> float:
        return 2.0

    @property
    def gemm_activation(self) -> str:
        return self.gemm_input or self.activation


def stored_weights(prec: Precision, weight: str, bits: float, gemm_input: str = "") -> StoredWeights:
    return StoredWeights(weight, prec.activation, prec.kv, prec.weight_group_size, stored_bits=bits,
                         gemm_input=gemm_input)


def int_label(bits: float) -> str:
    """The smallest integer dtype holding `bits` value bits (what outputs show as the weight dtype)."""
    return next(d for d, b in (("int1", 1), ("int2", 2), ("int3", 3), ("int4", 4), ("int8", 8)) if bits <= b)


def sixteen_bit(prec: Precision) -> str:
    """The 16-bit dtype weights are decoded to: the activations' when 16-bit, else bf16."""
    return prec.activation if prec.activation in ("bf16", "fp16") else "bf16"


# ---------------------------------------------------------------- op helpers

def row_tiles(op: Op) -> int:
    """Row tiles each weight tile is decoded for (fused kernels decode once per DEQUANT_TILE_M rows)."""
    rows = op.shape.m / max(op.shape.groups, 1e-9)
    return max(1, math.ceil(rows / DEQUANT_TILE_M - 1e-9))


def fused_decode_alu(op: Op, ops_per_weight: float) -> float:
    """CUDA-core work of a GEMM that decodes its weights in-kernel, once per row tile."""
    return weights_of(op) * row_tiles(op) * ops_per_weight


def adjust(op: Op, ctx: PassContext, *, weight_bytes: float | None = None, act_bytes: float | None = None,
           dtype: str | None = None, alu: float | None = None, note: str = "") -> Op:
    """A weight GEMM reading `weight_bytes` per weight and `act_bytes` per input element instead of
    what the graph charged (ctx.prec's), on tensor-core `dtype`, with `alu` CUDA-core ops beside it."""
    hbm = op.hbm_bytes
    if weight_bytes is not None:
        hbm += weights_of(op) * (weight_bytes - ctx.prec.weight_bytes)
    if act_bytes is not None:
        hbm += op.shape.m * op.shape.k * (act_bytes - ctx.prec.act_bytes)
    return replace(op, bytes={**op.bytes, "hbm": hbm}, dtype=dtype or op.dtype,
                   alu_ops=op.alu_ops if alu is None else alu,
                   formula=op.formula + (f"; {note}" if note else ""))


def rewrite_weight_gemms(ops: list[Op], build) -> list[Op]:
    """`ops` with each weight GEMM replaced by `build(op)` (an Op or a list of ops)."""
    out: list[Op] = []
    for op in ops:
        if is_weight_gemm(op):
            new = build(op)
            out.extend(new if isinstance(new, list) else [new])
        else:
            out.append(op)
    return out


def decode_kernel(name: str, ctx: PassContext, weights: float, stored_bytes: float, ops_per_weight: float,
                  count: int, part_of: OpRole | None = None) -> Op:
    """A separate kernel that reads `weights` stored weights and writes them 16-bit for a GEMM to read."""
    out = BYTES[sixteen_bit(ctx.prec)]
    op = streaming(name, OpClass.ELEMENTWISE, weights, 0, 1, ops_per_weight, out, sixteen_bit(ctx.prec), count,
                   extra_bytes=weights * stored_bytes)
    return replace(op, part_of=part_of)


def act_quantize(op: Op, ctx: PassContext, out_bytes: float, flops_per_element: float = ACT_QUANT_FLOPS) -> Op:
    """Per-token dynamic quantization of a GEMM's input: read 16-bit, write `out_bytes` plus a scale per row."""
    m, k = op.shape.m, op.shape.k
    quant = streaming(f"{op.name}_act_quant", OpClass.ELEMENTWISE, m * k, 1, 0, flops_per_element, ctx.prec.act_bytes,
                      ctx.prec.activation, op.count, extra_bytes=m * k * out_bytes + m * 4.0)
    return replace(quant, part_of=graph_role(op))


# ---------------------------------------------------------------- weight-only integers

@dataclass(frozen=True)
class _WeightOnlyInt(Technique):
    dtype: ClassVar[str] = ""
    slots = ("weight format",)
    group_size: int = param(128, "weights sharing one 16-bit scale")
    fused: bool = param(True, "dequantize inside the GEMM (Marlin/FineQuant-style kernel); false: a separate "
                              "kernel writes 16-bit weights that a 16-bit GEMM then reads (no kernel support)")

    def check_params(self) -> None:
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def transform_precision(self, prec: Precision) -> Precision:
        return replace(prec, weight=self.dtype, weight_group_size=self.group_size)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if self.fused:   # the graph charges dense GEMMs already; MoE expert GEMMs get the same dequant work
            return rewrite_weight_gemms(ops, lambda op: adjust(op, ctx, alu=fused_decode_alu(op, DEQUANT_OPS)))
        a = BYTES[sixteen_bit(ctx.prec)]

        def unfused(op: Op) -> list[Op]:
            dq = decode_kernel(f"{op.name}_dequant", ctx, weights_of(op), ctx.prec.weight_bytes, DEQUANT_OPS,
                               op.count, graph_role(op))
            return [dq, adjust(op, ctx, weight_bytes=a, alu=0.0, note="reads the dequantized 16-bit weights")]
        return rewrite_weight_gemms(ops, unfused)


@register
@dataclass(frozen=True)
class Int4WeightOnly(_WeightOnlyInt):
    """W4A16: weights stored as 4-bit integers with one 16-bit scale per `group_size` weights, so a
    decode step reads 4 + 16/group_size bits per weight instead of 16. The fused GEMM dequantizes
    each weight on the CUDA cores once per 64-row tile: free while the GEMM waits on memory, a
    cost once it is compute-bound. GEMMs still run on the 16-bit tensor cores; embeddings and the
    LM head stay 16-bit. Unfused (fused=false, no kernel support): a separate kernel reads the
    4-bit weights and writes them 16-bit, and a 16-bit GEMM reads them again: 4.125 + 32 bits of
    traffic per weight instead of 16, so memory-bound decode gets slower than BF16."""

    name = "int4"
    family = "A"
    paper = "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration (W4A16, group 128)"
    dtype = "int4"


@register
@dataclass(frozen=True)
class Int8WeightOnly(_WeightOnlyInt):
    """W8A16: weights stored as 8-bit integers with one 16-bit scale per `group_size` weights (8 +
    16/group_size bits instead of 16), dequantized inside the GEMM on the CUDA cores once per 64-row
    tile, multiplied on the 16-bit tensor cores. Halves the weight bytes a memory-bound decode step
    reads and frees half the weight memory for KV; no compute gain. fused=false adds a separate
    dequantization kernel and a 16-bit weight read, as for int4."""

    name = "int8"
    family = "A"
    paper = "FineQuant: Unlocking Efficiency with Fine-Grained Weight-Only Quantization for LLMs"
    dtype = "int8"


# ---------------------------------------------------------------- weights and activations in 8 bits

@dataclass(frozen=True)
class _W8A8(Technique):
    dtype: ClassVar[str] = ""
    slots = ("weight format",)

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, self.dtype, 8.0, gemm_input=self.dtype)   # the header says W8A8

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        def w8a8(op: Op) -> list[Op]:
            return [act_quantize(op, ctx, 1.0),
                    adjust(op, ctx, act_bytes=1.0, dtype=self.dtype, alu=0.0,
                           note=f"{self.dtype} x {self.dtype} on the {self.dtype} tensor cores")]
        return rewrite_weight_gemms(ops, w8a8)


@register
@dataclass(frozen=True)
class FP8(_W8A8):
    """W8A8 FP8 (E4M3): weights stored in 8 bits (per-channel scales, negligible), and before every
    linear layer a kernel quantizes its 16-bit input per token to FP8 (read 2 B, write 1 B per
    element plus a scale), so the GEMM reads 1-byte operands and runs on the FP8 tensor cores at
    twice the 16-bit peak. Halves weight bytes (memory-bound decode) and GEMM time (compute-bound
    prefill). The residual stream, attention and KV stay 16-bit. Needs FP8 tensor cores: on a GPU
    without an fp8 peak (A100) the estimate stops with the GPU's valid dtypes."""

    name = "fp8"
    family = "A"
    paper = "FP8 Formats for Deep Learning"
    dtype = "fp8"
    needs_peak = "fp8"


@register
@dataclass(frozen=True)
class W8A8(_W8A8):
    """SmoothQuant W8A8: activation outliers are migrated into the weights offline (a per-channel
    smoothing folded into the preceding norm/linear, free at run time), so weights are stored as
    INT8 (per-channel scales, negligible) and every linear layer's input is quantized per token to
    INT8 by a kernel (read 2 B, write 1 B per element plus a scale). GEMMs run on the INT8 tensor
    cores (2x the 16-bit peak) with int32 accumulation dequantized in the epilogue. Halves weight
    bytes and GEMM time; attention and KV stay 16-bit."""

    name = "w8a8"
    family = "A"
    paper = "SmoothQuant: Accurate and Efficient Post-Training Quantization for Large Language Models"
    dtype = "int8"
    needs_peak = "int8"


# ---------------------------------------------------------------- bit-plane arbitrary precision

@register
@dataclass(frozen=True)
class BitPlane(Technique):
    """Arbitrary-precision GEMMs on binary tensor cores: weights stored with `w_bits` bits (bipolar-INT,
    one 16-bit scale per `group_size`), activations quantized per token to `a_bits` bits and split
    into bit planes by a kernel before each linear layer. W*A = sum_ij 2^(i+j) W_i A_j: w_bits x
    a_bits one-bit GEMMs, stacked as one GEMM of (a_bits*M) x (w_bits*N) on the binary MMA, which
    covers 4x the K of an INT4 MMA per cycle (Ampere). The partial products are shifted and added in
    shared memory (CUDA cores, beside the MMA). Weight bytes shrink 16/(w_bits + 16/group_size) times;
    compute grows with w_bits*a_bits. Needs binary/INT4 tensor cores (an int4 peak, e.g. A100): the
    estimate stops on GPUs without one (Hopper, Blackwell)."""

    name = "bitplane"
    family = "A"
    paper = "Efficient Arbitrary Precision Acceleration for Large Language Models on GPU Tensor Cores"
    slots = ("weight format",)
    needs_peak = "int4"
    w_bits: int = param(2, "bits per weight (the paper evaluates several low widths; 2 assumed)")
    a_bits: int = param(2, "bits per activation (the paper sweeps low-bit activations; 2 assumed)")
    group_size: int = param(128, "weights sharing one 16-bit scale (assumed)")

    def check_params(self) -> None:
        self.require(1 <= self.w_bits <= 8, "w_bits", "an integer from 1 to 8")
        self.require(1 <= self.a_bits <= 8, "a_bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.w_bits), self.w_bits + 16.0 / self.group_size)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        wb, ab, a = self.w_bits, self.a_bits, ctx.prec.act_bytes

        def planes(op: Op) -> list[Op]:
            m, n, k, g = op.shape.m, op.shape.n, op.shape.k, op.shape.groups
            mma = gemm(op.name, ab * m, wb * n, k / BINARY_K_PER_INT4, 0.0, 0.0, "int4", op.count, role=op.role)
            hbm = m * k * ab / 8 + weights_of(op) * ctx.prec.weight_bytes + m * n * a
            quant = act_quantize(op, ctx, ab / 8, ACT_QUANT_FLOPS + ab)   # + one bit extraction per plane
            return [quant, replace(mma, bytes={"hbm": hbm}, shape=replace(mma.shape, groups=g), part_of=op.part_of,
                                   alu_ops=m * n * wb * ab * BITPLANE_RECOVERY_OPS,
                                   formula=f"{wb}x{ab} one-bit planes of M={m:g} N={n:g} K={k:g} as INT4-rate "
                                           f"work (binary MMA = {BINARY_K_PER_INT4:g}x INT4 K); bytes = "
                                           f"M*K*{ab}/8 + K*N*w + M*N*a")]
        return rewrite_weight_gemms(ops, planes)


# ---------------------------------------------------------------- codebooks, entropy codes, residual blocks

@register
@dataclass(frozen=True)
class VectorQuant(Technique):
    """Additive vector quantization (AQLM codes, fine-tuned by PV-Tuning): each group of `group_dim`
    weights is the sum of `codebooks` codewords, each picked by a `code_bits`-bit index, so a weight
    costs codebooks*code_bits/group_dim bits (2 at the defaults; per-channel scales add 16/K bits,
    not counted). The GEMM decodes weights in-kernel once per 64-row tile: a shared-memory lookup and
    an add per weight per codebook on the CUDA cores, and reads each matrix's codebooks
    (codebooks x 2^code_bits x group_dim 16-bit values) once per call. Memory-bound decode reads ~8x
    fewer weight bytes; larger batches pay the lookups. Codebooks are not in the memory plan (8 KB
    per matrix at the defaults)."""

    name = "vq"
    family = "A"
    paper = "PV-Tuning: Beyond Straight-Through Estimation for Extreme LLM Compression (AQLM 2x8 codes)"
    slots = ("weight format",)
    codebooks: int = param(2, "codebooks summed per weight group (AQLM 2x8, the GPU-friendly 2-bit layout)")
    code_bits: int = param(8, "bits per codebook index (2^code_bits codewords)")
    group_dim: int = param(8, "weights encoded together by one code per codebook")

    def check_params(self) -> None:
        self.require(1 <= self.codebooks <= 8, "codebooks", "an integer from 1 to 8")
        self.require(1 <= self.code_bits <= 8, "code_bits", "an integer from 1 to 8 (the lookup model assumes "
                                                            "codebooks held in shared memory)")
        self.require(1 <= self.group_dim <= 64, "group_dim", "an integer from 1 to 64")

    @property
    def bits(self) -> float:
        return self.codebooks * self.code_bits / self.group_dim

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.bits), self.bits)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        books = self.codebooks * 2 ** self.code_bits * self.group_dim * 2.0

        def vq(op: Op) -> Op:
            new = adjust(op, ctx, alu=fused_decode_alu(op, self.codebooks * VQ_OPS_PER_CODEBOOK),
                         note=f"codebook lookups, + {books:g} B of codebooks per matrix")
            return replace(new, bytes={**new.bytes, "hbm": new.hbm_bytes + books * op.shape.groups})
        return rewrite_weight_gemms(ops, vq)


@register
@dataclass(frozen=True)
class DFloat11(Technique):
    """Lossless entropy-coded BF16: sign and mantissa kept, the low-entropy exponent Huffman-coded, so
    a weight takes `bits_per_weight` bits on average (~30% less). Before each transformer block a
    decompression kernel reads the block's coded weights, decodes them on the CUDA cores (compact
    LUTs in shared memory, two-phase write positions) and writes them BF16 into a buffer that the
    16-bit GEMMs then read: per weight, bits/8 + 2 + 2 bytes of traffic instead of 2, so it is
    slower than BF16 whenever BF16 fits, and frees memory (batch, context) where it does not.
    Embeddings and LM head stay BF16 (assumed); the one-block BF16 buffer is not in the memory plan."""

    name = "dfloat11"
    family = "A"
    paper = "70% Size, 100% Accuracy: Lossless LLM Compression for Efficient GPU Inference via Dynamic-Length Float"
    slots = ("weight format",)
    bits_per_weight: float = param(11.0, "mean coded bits per BF16 weight (~11: 'reduces LLM size by 30%')")

    def check_params(self) -> None:
        self.require(8.0 < self.bits_per_weight <= 16.0, "bits_per_weight",
                     "a number above 8 (sign and mantissa stay raw) and at most 16")

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, sixteen_bit(prec), self.bits_per_weight)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        a = BYTES[sixteen_bit(ctx.prec)]
        per_layer: dict[int, float] = {}     # one decompression per block: layers of one kind share a count
        for op in ops:
            if is_weight_gemm(op):
                per_layer[op.count] = per_layer.get(op.count, 0.0) + weights_of(op)
        out: list[Op] = []
        for op in ops:
            if not is_weight_gemm(op):
                out.append(op)
                continue
            if op.count in per_layer:
                out.append(decode_kernel("dfloat11_decompress", ctx, per_layer.pop(op.count),
                                         ctx.prec.weight_bytes, DF11_DECODE_OPS, op.count))
            out.append(adjust(op, ctx, weight_bytes=a, note="reads the decompressed BF16 block buffer"))
        return out


@register
@dataclass(frozen=True)
class BitStack(Technique):
    """Residual-block weight decomposition: each matrix is a stack of blocks, each a sign matrix (1 bit
    per weight) times a rank-`rank` approximation of the residual's magnitude (16-bit factors), loaded
    until the memory budget of `bits_per_weight` (averaged, factors included) is spent, so the block
    count per matrix is bits / (1 + 16*rank*(K+N)/(K*N)). Before each linear layer a kernel rebuilds
    the 16-bit matrix: the blocks' low-rank products on the tensor cores, sign and accumulate on the
    CUDA cores, one 16-bit write; the GEMM then reads it. Memory-driven: fewer weight bytes in memory,
    more traffic per step than BF16."""

    name = "bitstack"
    family = "A"
    paper = ("BitStack: Fine-Grained Size Control for Compressed Large Language Models in Variable Memory "
             "Environments")
    slots = ("weight format",)
    bits_per_weight: float = param(3.0, "mean stored bits per weight, factors included: the memory budget "
                                        "(the paper sweeps budgets; 3 assumed)")
    rank: int = param(16, "rank of each block's magnitude approximation (assumed)")

    def check_params(self) -> None:
        self.require(0.5 <= self.bits_per_weight <= 16.0, "bits_per_weight", "a number from 0.5 to 16")
        self.require(self.rank >= 1, "rank", "a positive integer")

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.bits_per_weight), self.bits_per_weight)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        a, r, dt = BYTES[sixteen_bit(ctx.prec)], self.rank, sixteen_bit(ctx.prec)

        def rebuild(op: Op) -> list[Op]:
            n, k, g = op.shape.n, op.shape.k, op.shape.groups
            blocks = self.bits_per_weight / (1.0 + 16.0 * r * (k + n) / (k * n))
            w = weights_of(op)
            low_rank = gemm(f"{op.name}_bitstack_rebuild", g * n, k, r * blocks, 0.0, 0.0, dt, op.count)
            rebuilt = replace(low_rank, bytes={"hbm": w * ctx.prec.weight_bytes + w * a},
                              shape=replace(low_rank.shape, groups=g), alu_ops=w * blocks * BITSTACK_SIGN_OPS,
                              part_of=graph_role(op),
                              formula=f"{blocks:.2f} blocks of rank {r} over {w:g} weights; reads the stored "
                                      f"blocks, writes 16-bit weights")
            return [rebuilt, adjust(op, ctx, weight_bytes=a, alu=0.0, note="reads the rebuilt 16-bit weights")]
        return rewrite_weight_gemms(ops, rebuild)


# ---------------------------------------------------------------- multiplication-free and low-rank corrected

@register
@dataclass(frozen=True)
class ShiftAddLLM(Technique):
    """Binary-coded weights: each matrix is `bits` binary {-1,+1} matrices, each with a power-of-two
    scale per `group_size` weights (16-bit, assumed), so bits*(1 + 16/group_size) bits per weight.
    Linear layers run multiplication-free on the CUDA cores (LUT-GEMM): per token, every group of 8
    activations gets a 256-entry table of signed sums (built once, shared by all planes and columns),
    then each output element of each binary plane costs K/8 table lookups and adds; scales are
    shifts. No tensor cores: memory-bound decode gains from ~5x fewer weight bytes, compute-bound
    batches pay K*N*bits/4 lookup-adds per token at the CUDA-core rate."""

    name = "shiftaddllm"
    family = "A"
    paper = "ShiftAddLLM: Accelerating Pretrained LLMs via Post-Training Multiplication-Less Reparameterization"
    slots = ("weight format",)
    bits: int = param(3, "binary planes per weight (the paper reports 3 and 2 bits)")
    group_size: int = param(128, "weights sharing one power-of-two scale per plane (assumed)")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.bits), self.bits * (1.0 + 16.0 / self.group_size))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        q = self.bits

        def lut_gemm(op: Op) -> Op:
            m, n, k, g = op.shape.m, op.shape.n, op.shape.k, op.shape.groups
            lookups = m * n * q * k / LUT_GROUP * LUT_OPS_PER_LOOKUP
            tables = m * k / LUT_GROUP * 2 ** LUT_GROUP                 # one add per table entry
            shifts = m * n * q * k / self.group_size
            # A CUDA-core kernel streaming the packed planes: timed like other CUDA-core kernels (fp32
            # peak, no tensor-core tiles), with the bytes the graph charged for the stored weights.
            return Op(op.name, OpClass.ELEMENTWISE, lookups + tables + shifts, dict(op.bytes), "fp32",
                      GemmShape(m, n, k, g), op.count,
                      f"LUT-GEMM on CUDA cores, {q} binary planes, M={m:g} N={n:g} K={k:g}: "
                      f"{LUT_OPS_PER_LOOKUP:g} ops per lookup-add x M*N*{q}*K/{LUT_GROUP} + tables "
                      f"M*K/{LUT_GROUP}*{2 ** LUT_GROUP} + shifts; bytes = M*K*a + K*N*w + M*N*a",
                      op.role, op.part_of)
        return rewrite_weight_gemms(ops, lut_gemm)


@register
@dataclass(frozen=True)
class Int2LoRA(Technique):
    """INT2.1: weights stored as `bits`-bit integers with a 16-bit scale per `group_size`, plus a
    16-bit LoRA error-correction adapter (A: K x r, B: r x N) beside every linear layer, sized at
    `adapter_share` of the quantized weights (the paper's '1.05 times increase in model size'), which
    sets the rank r = share * b * K*N / (16*(K+N)) per matrix. Adapters cannot be merged into integer
    weights, so each linear layer runs its fused dequantizing GEMM plus two low-rank 16-bit GEMMs
    (x@A, then @B added into the output)."""

    name = "int2_lora"
    family = "A"
    paper = ("INT2.1: Towards Fine-Tunable Quantized Large Language Models with Error Correction through "
             "Low-Rank Adaptation")
    slots = ("weight format",)
    bits: int = param(2, "bits per quantized weight (INT2; the paper also corrects INT3/4/8)")
    group_size: int = param(128, "weights sharing one 16-bit scale (assumed)")
    adapter_share: float = param(0.05, "adapter bytes as a share of the quantized weights ('a 1.05 times "
                                       "increase in model size')")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(self.group_size >= 1, "group_size", "a positive integer")
        self.require(0.0 <= self.adapter_share <= 1.0, "adapter_share", "a share from 0 to 1")

    @property
    def quant_bits(self) -> float:
        return self.bits + 16.0 / self.group_size

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.bits), self.quant_bits * (1.0 + self.adapter_share))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        a, dt, b = ctx.prec.act_bytes, sixteen_bit(ctx.prec), self.quant_bits

        def lora(op: Op) -> list[Op]:
            m, n, k, g = op.shape.m, op.shape.n, op.shape.k, op.shape.groups
            main = adjust(op, ctx, weight_bytes=b / 8, alu=fused_decode_alu(op, DEQUANT_OPS))
            if self.adapter_share == 0:
                return main
            r = self.adapter_share * b * k * n / (16.0 * (k + n))
            down = gemm(f"{op.name}_lora_a", m, r, k, a, 2.0, dt, op.count)
            up = gemm(f"{op.name}_lora_b", m, n, r, a, 2.0, dt, op.count)
            extra = [(down, (g - 1) * k * r * 2.0), (up, (g - 1) * r * n * 2.0 + m * n * a)]   # experts; + read to add
            return [main] + [replace(x, bytes={"hbm": x.hbm_bytes + more}, shape=replace(x.shape, groups=g),
                                     part_of=graph_role(op)) for x, more in extra]
        return rewrite_weight_gemms(ops, lora)


# ---------------------------------------------------------------- sparsity and pruning

@register
@dataclass(frozen=True)
class Sparse24(Technique):
    """2:4 structured sparsity: in every 4 consecutive weights along K two are zero, so a matrix is
    stored as half its 16-bit values plus a 2-bit position per kept value (9 bits per weight instead
    of 16), and the sparse tensor cores multiply only the kept half: the GEMM's K is halved at the
    dense rate, up to 2x faster when compute-bound, 16/9 fewer weight bytes when memory-bound.
    Activations are read in full."""

    name = "sparse24"
    family = "A"
    paper = "Accelerating Sparse Deep Neural Networks (NVIDIA 2:4 structured sparsity on sparse tensor cores)"
    slots = ("weight format",)

    def transform_precision(self, prec: Precision) -> Precision:
        dt = sixteen_bit(prec)
        return stored_weights(prec, dt, BYTES[dt] * 8 / 2 + SPARSE_INDEX_BITS / 2)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        def sparse(op: Op) -> Op:
            return replace(op, flops=op.flops / 2, shape=replace(op.shape, k=op.shape.k / 2),
                           formula=op.formula + "; 2:4 sparse: half of K multiplied on the sparse tensor cores, "
                                                "weights as 8 value + 1 index bits")
        return rewrite_weight_gemms(ops, sparse)


@register
@dataclass(frozen=True)
class StructuredPrune(Technique):
    """Structured pruning (Compresso, ZipLM): whole attention heads, MLP intermediate channels, hidden
    channels and layers are removed, leaving a smaller dense model that runs with the same kernels:
    every GEMM, KV entry and norm shrinks with the kept shares. Defaults keep 80% of heads and of MLP
    channels (assumed split; the paper learns per-layer masks), which takes LLaMA-7B's 6.7B parameters
    to ~5.4B. Grouped-query models keep every KV head and prune query heads within each group; widths
    are rounded to multiples of 64. Compresso's inference-time collaborative prompt is not modelled."""

    name = "prune"
    family = "A"
    paper = "Compresso: Structured Pruning with Collaborative Prompting Learns Compact Large Language Models"
    slots = ("model shape",)
    heads: float = param(0.8, "share of attention heads kept (assumed)")
    intermediate: float = param(0.8, "share of MLP intermediate channels kept (assumed)")
    hidden: float = param(1.0, "share of hidden (model width) channels kept")
    layers: float = param(1.0, "share of layers kept")

    def check_params(self) -> None:
        for key in ("heads", "intermediate", "hidden", "layers"):
            self.require(0.0 < getattr(self, key) <= 1.0, key, "a share above 0 and at most 1")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if self.hidden < 1.0 and model.mla is not None:
            raise WhatifError(f"--technique {self.name}:hidden={self.hidden}: hidden-channel pruning of the MLA "
                              f"model {model.name} is not modelled; valid: hidden=1")

    @staticmethod
    def _width(value: int, share: float) -> int:
        if share >= 1.0:
            return value
        return max(PRUNE_ROUND, round(value * share / PRUNE_ROUND) * PRUNE_ROUND)

    def transform_model(self, model: ModelSpec) -> ModelSpec:
        if model.mla is not None or model.num_kv_heads == model.num_heads:   # MHA/MLA: heads go one by one
            heads = kv = max(1, round(model.num_heads * self.heads))
        else:                                                                   # GQA: queries within groups
            kv = model.num_kv_heads
            heads = kv * max(1, round(model.num_heads // kv * self.heads))
        moe = model.moe
        if moe is not None:
            moe = replace(moe, expert_intermediate_size=self._width(moe.expert_intermediate_size, self.intermediate))
        return replace(model, name=f"{model.name}-pruned", num_heads=heads, num_kv_heads=kv,
                       intermediate_size=self._width(model.intermediate_size, self.intermediate),
                       hidden_size=self._width(model.hidden_size, self.hidden),
                       num_layers=max(1, round(model.num_layers * self.layers)), moe=moe)


@register
@dataclass(frozen=True)
class CompressThenPrompt(Technique):
    """Joint quantization and unstructured pruning: `sparsity` of the weights are zero and the rest
    are `bits`-bit integers with a 16-bit scale per `group_size`; the stored format keeps the nonzero
    values, their scales and a 1-bit mask per original weight (the paper's '8x' counts only
    16/(4 x 0.5) and no metadata). The GEMM expands and dequantizes weights in-kernel once per 64-row
    tile on the CUDA cores and multiplies densely on the 16-bit tensor cores (unstructured zeros
    cannot use the sparse tensor cores). The learned soft prompt's extra tokens are not modelled."""

    name = "compress_then_prompt"
    family = "A"
    paper = ("Compress, Then Prompt: Improving Accuracy-Efficiency Trade-off of LLM Inference with "
             "Transferable Prompt")
    slots = ("weight format",)
    bits: int = param(4, "bits per kept weight (GPTQ 4-bit)")
    sparsity: float = param(0.5, "share of weights pruned (SparseGPT 50%)")
    group_size: int = param(128, "weights sharing one 16-bit scale (assumed)")

    def check_params(self) -> None:
        self.require(1 <= self.bits <= 8, "bits", "an integer from 1 to 8")
        self.require(0.0 <= self.sparsity < 1.0, "sparsity", "a share from 0 to below 1")
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    @property
    def stored_bits(self) -> float:
        return (1.0 - self.sparsity) * self.bits + 16.0 / self.group_size + MASK_BITS

    def transform_precision(self, prec: Precision) -> Precision:
        return stored_weights(prec, int_label(self.bits), self.stored_bits)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        per_weight = SCATTER_OPS + (1.0 - self.sparsity) * DEQUANT_OPS
        return rewrite_weight_gemms(ops, lambda op: adjust(op, ctx, alu=fused_decode_alu(op, per_weight),
                                                           note="mask expansion + dequant in-kernel"))
