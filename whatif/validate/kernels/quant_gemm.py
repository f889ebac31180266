"""Weight-only quantized GEMM (AWQ/GPTQ-style W4A16 / W8A16): C[m,n] = A[m,k] @ dequant(W)[k,n], fp32 accumulation.

Layout: A is [m, k] row-major and C is [m, n] row-major, both in the activation dtype (fp16/bf16). The weights are
symmetric integers stored k-major with n contiguous (GPTQ's qweight layout):
  bits=8: int8 [k, n], values in [-127, 127];
  bits=4: uint8 [k/2, n], two weights per byte along k: k=2i in the low nibble, k=2i+1 in the high one, each
          stored as q + 8 (q in [-8, 7]; 8 is the format's fixed offset, there are no stored zero points).
Scales: [k/group, n] in the activation dtype, one per `group` consecutive k of each output column;
w[k, n] = q[k, n] * scale[k // group, n].

The kernel is the dense GEMM's tiling (gemm.py: grouped program order) with the dequantization fused into the
k loop: load the packed tile, unpack with shifts and masks, multiply by the group's scales in fp32, cast to the
activation dtype, tl.dot. Constraints: k is a multiple of `group` (so of 2 for int4), and BLOCK_K divides the
group, so every k step reads one row of scales and needs no k mask.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ...roofline.config import Precision
from ...roofline.graph import weight_gemm
from ...roofline.ops import Op
from .common import poisoned, randn, torch_dtype
from .gemm import GROUP_M, BlockConfig, grouped_tile

FAMILY = "quant_gemm"
DTYPES = ("fp16", "bf16")
USES_DOT = True
INT4_OFFSET = 8   # an int4 weight q in [-8, 7] is stored as the nibble q + 8
_INT4_OFFSET = tl.constexpr(INT4_OFFSET)   # the same, in a form a Triton kernel may read as a global

# k a multiple of the group (and so even); m and n not multiples of the blocks; every block_config regime
TEST_SHAPES = [
    {"m": 1, "n": 40, "k": 96, "bits": 4, "group": 32},     # 3 groups, BLOCK_K = group: a scale row per step
    {"m": 5, "n": 100, "k": 64, "bits": 8, "group": 16},    # 4 column programs
    {"m": 33, "n": 70, "k": 256, "bits": 4, "group": 128},  # small-m config, 2 k steps in one group
    {"m": 70, "n": 130, "k": 64, "bits": 8, "group": 64},   # mid config, n mask
]


def _sweep(bits: int) -> list[dict]:
    """Llama-3 8B/70B projection shapes, decode m 1..64 (memory-bound: the case weight-only quantization is for)
    to prefill m 4096; regimes at H100 datasheet ceilings for int4 (int8 moves the ridge to m ~ 128-256):
    int4 2 launch-bound, 4 memory, 2 ridge, 4 compute; int8 1 launch-bound, 6 memory (m=1 4096x4096 at
    5.1 us, on the launch edge), 2 ridge, 3 compute."""
    mnk = [(1, 1024, 4096), (1, 4096, 4096), (1, 28672, 4096), (8, 4096, 14336), (16, 8192, 8192),
           (32, 14336, 4096), (64, 28672, 8192), (128, 8192, 8192), (256, 14336, 4096), (512, 4096, 4096),
           (2048, 8192, 8192), (4096, 14336, 4096)]
    return [{"m": m, "n": n, "k": k, "bits": bits, "group": 128} for m, n, k in mnk]


SHAPES = _sweep(4) + _sweep(8)


def block_config(m: int, n: int, k: int, group: int) -> BlockConfig:
    """Tile sizes: decode rows (narrow tiles, n/32 programs), small batches, prefill. BLOCK_K divides the
    group; three regimes x two bit widths x two dtypes = 12 compiled kernels for the sweep."""
    if m <= 16:
        cfg = BlockConfig(16, 32, 128, 4, 4)
    elif m <= 64:
        cfg = BlockConfig(64, 64, 128, 4, 4)
    else:
        cfg = BlockConfig(128, 128, 64, 8, 3)
    return cfg._replace(block_k=min(cfg.block_k, group))


@triton.jit
def _quant_gemm_kernel(a_ptr, w_ptr, s_ptr, c_ptr, M, N, K, stride_am, stride_wk, stride_sg, stride_cm,
                       BITS: tl.constexpr, GROUP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N   # a mask, not a wrap: n is the contiguous axis of W and the scales, kept vectorizable
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (rows % M)[:, None] * stride_am + offs_k[None, :]
    # int4: rows 2i and 2i+1 of the tile read the same byte (one HBM read; the second hits L1) and keep a nibble
    PER_BYTE = 8 // BITS
    w_ptrs = w_ptr + (offs_k // PER_BYTE)[:, None] * stride_wk + cols[None, :]
    shifts = (offs_k % PER_BYTE) * BITS
    s_ptrs = s_ptr + cols
    dot_dtype = a_ptr.dtype.element_ty
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs)
        packed = tl.load(w_ptrs, mask=col_ok[None, :], other=0)
        if BITS == 4:
            q = ((packed.to(tl.int32) >> shifts[:, None]) & 0xF) - _INT4_OFFSET
        else:
            q = packed.to(tl.int32)
        scale = tl.load(s_ptrs + (k0 // GROUP) * stride_sg, mask=col_ok, other=0.0)
        w = (q.to(tl.float32) * scale.to(tl.float32)[None, :]).to(dot_dtype)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += (BLOCK_K // PER_BYTE) * stride_wk
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & col_ok[None, :])


def pack_int4(q: torch.Tensor) -> torch.Tensor:
    """[k, n] int4 values in [-8, 7] -> [k/2, n] uint8: row 2i in the low nibble, row 2i+1 in the high one."""
    nib = (q.to(torch.int16) + INT4_OFFSET).to(torch.uint8)
    return nib[0::2] | (nib[1::2] << 4)


def unpack_int4(packed: torch.Tensor) -> torch.Tensor:
    """The inverse of pack_int4: [k/2, n] uint8 -> [k, n] int8 in [-8, 7]."""
    lo, hi = packed & 0xF, packed >> 4
    nib = torch.stack((lo, hi), dim=1).reshape(2 * packed.shape[0], packed.shape[1])
    return nib.to(torch.int8) - INT4_OFFSET


def check_shape(shape: dict) -> None:
    k, group = shape["k"], shape["group"]
    if shape["bits"] not in (4, 8) or k % group or group < 16 or group & (group - 1):
        raise ValueError(f"quant_gemm: need bits 4 or 8, a power-of-2 group >= 16 dividing k; got {shape}")


def code_range(bits: int) -> tuple[int, int]:
    """The integer codes a symmetric format uses: int8 [-127, 127] (as GPTQ/AWQ/bitsandbytes), int4 [-8, 7]."""
    return (-8, 7) if bits == 4 else (-127, 127)


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    """Uniform random codes; scales of 1/qmax (within 2x), so dequantized weights are O(1) as are A's values."""
    check_shape(shape)
    m, n, k, bits, group = shape["m"], shape["n"], shape["k"], shape["bits"], shape["group"]
    lo, hi = code_range(bits)
    q = torch.randint(lo, hi + 1, (k, n), generator=gen, device=device, dtype=torch.int8)
    unit = torch.rand((k // group, n), generator=gen, device=device) + 0.5
    scales = (unit / hi).to(torch_dtype(dtype))
    return {"a": randn((m, k), dtype, device, gen), "w": pack_int4(q) if bits == 4 else q, "scales": scales,
            "out": poisoned((m, n), dtype, device)}


def dequantize(w: torch.Tensor, scales: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """The stored weights as float32 [k, n]: q * scale of its group."""
    q = unpack_int4(w) if bits == 4 else w
    return q.float() * scales.float().repeat_interleave(group, dim=0)


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    w = dequantize(inputs["w"], inputs["scales"], shape["bits"], shape["group"])
    return inputs["a"].float() @ w


def launch(inputs: dict, shape: dict) -> None:
    m, n, k, bits, group = shape["m"], shape["n"], shape["k"], shape["bits"], shape["group"]
    a, w, scales, out = inputs["a"], inputs["w"], inputs["scales"], inputs["out"]
    cfg = block_config(m, n, k, group)
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n),)
    _quant_gemm_kernel[grid](a, w, scales, out, m, n, k, a.stride(0), w.stride(0), scales.stride(0), out.stride(0),
                             BITS=bits, GROUP=group, BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n,
                             BLOCK_K=cfg.block_k, GROUP_M=GROUP_M, num_warps=cfg.num_warps,
                             num_stages=cfg.num_stages)


def whatif_op(shape: dict, dtype: str) -> Op:
    """The estimate's weight GEMM (roofline/graph.py `weight_gemm`, as every linear layer of a W4A16/W8A16 model
    is priced): roofline/ops.py `gemm` with Precision.weight_bytes = bits/8 + 2/group per weight (the packed
    weights plus one 2-byte scale per group, what this kernel reads), run at the activation dtype's tensor-core
    peak, plus roofline/dequant.py's in-kernel dequant ALU work."""
    prec = Precision(weight=f"int{shape['bits']}", activation=dtype, kv=dtype, weight_group_size=shape["group"])
    return weight_gemm("gemm", shape["m"], shape["n"], shape["k"], prec, 1)


def label(shape: dict) -> str:
    return f"m={shape['m']} n={shape['n']} k={shape['k']} int{shape['bits']} g{shape['group']}"
