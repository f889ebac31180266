"""Dense GEMM: C[m,n] = A[m,k] @ W[n,k]^T with fp32 accumulation, the linear layers' kernel.

Layout: A is [m, k] row-major (the activations); W is [n, k] row-major, an nn.Linear weight, so both operands
are K-major (what Hopper's fp8 tensor cores need, and Triton's tutorial does by transposing B); C is [m, n]
row-major. bf16/fp16: A, W and C in that dtype. fp8: A and W in float8_e4m3fn with a per-tensor scale of 1
(values drawn at unit scale are representable), C in bf16.

The kernel is Triton's 03-matrix-multiplication tutorial: one program per BLOCK_M x BLOCK_N tile of C, launched in
grouped order (GROUP_M row-tiles side by side) so the tiles running together share W and A in L2. Block sizes
come from `block_config`, a pure function of the shape (no autotuning: compiles must fit the runner's budget).
"""
from __future__ import annotations

from typing import NamedTuple

import torch
import triton
import triton.language as tl

from ...roofline.ops import Op, gemm
from .common import ELEMENT_BYTES, poisoned, randn

FAMILY = "gemm"
DTYPES = ("bf16", "fp16", "fp8")
USES_DOT = True
GROUP_M = 8   # row-tiles per launch group: 8 x BLOCK_M rows of A stay in L2 while W streams past them

# m, n, k not multiples of the blocks; every block_config regime; several programs per axis and a partial group
TEST_SHAPES = [
    {"m": 1, "n": 40, "k": 72},         # decode row, n mask, k tail
    {"m": 5, "n": 100, "k": 300},       # 4 column programs, 2 k steps (BLOCK_K 256) with a tail
    {"m": 33, "n": 70, "k": 136},       # small-m config, 2 column programs
    {"m": 150, "n": 130, "k": 72},      # mid config: 2 x 2 tiles
    {"m": 1100, "n": 300, "k": 24},     # large config: 9 row-tiles > GROUP_M, so a partial last group
]

# Llama-3 8B/70B projection shapes (n, k in 1024/4096/8192/14336/28672), decode m 1..64 to prefill 8192.
# Regimes at H100 datasheet ceilings (bf16): 2 launch-bound, 7 memory-bound, 3 ridge, 4 compute-bound.
SHAPES = [
    {"m": 1, "n": 1024, "k": 4096},      # launch-bound: k/v projection of one decode token
    {"m": 32, "n": 1024, "k": 4096},
    {"m": 1, "n": 4096, "k": 4096},      # memory-bound: the weights stream once
    {"m": 1, "n": 28672, "k": 4096},
    {"m": 8, "n": 4096, "k": 14336},
    {"m": 16, "n": 8192, "k": 8192},
    {"m": 32, "n": 14336, "k": 4096},
    {"m": 64, "n": 28672, "k": 8192},
    {"m": 128, "n": 8192, "k": 8192},
    {"m": 256, "n": 4096, "k": 4096},    # ridge: intensity ~ m FLOP/B against a ~295 FLOP/B ridge
    {"m": 256, "n": 14336, "k": 4096},
    {"m": 512, "n": 8192, "k": 8192},
    {"m": 1024, "n": 4096, "k": 14336},  # compute-bound prefill
    {"m": 2048, "n": 8192, "k": 8192},
    {"m": 4096, "n": 14336, "k": 4096},
    {"m": 8192, "n": 8192, "k": 8192},
]
# fp8 on a subset (the runner takes a dtype's list from here when present): one or two shapes per regime at
# fp8's ceilings (1979 TFLOP/s, ridge ~590 FLOP/B): 1 launch-bound, 3 memory-bound, 2 ridge, 2 compute-bound.
SHAPES_BY_DTYPE = {"fp8": [SHAPES[i] for i in (0, 3, 5, 7, 10, 11, 13, 15)]}


class BlockConfig(NamedTuple):
    block_m: int
    block_n: int
    block_k: int
    num_warps: int
    num_stages: int


def block_config(m: int, n: int, k: int, elem_bytes: int) -> BlockConfig:
    """Tile sizes for an m x n x k GEMM; fp8 doubles BLOCK_K (same bytes per stage). Four regimes, so a dtype
    compiles at most four kernels: decode rows (narrow tiles: n/32 programs fill the SMs while W streams),
    small batches, mid-size prefill (128 x 128: m/128 x n/128 programs still fill the SMs) and large prefill."""
    widen = 2 // elem_bytes
    if m <= 16:
        return BlockConfig(16, 32, 256 * widen, 4, 4)
    if m <= 64:
        return BlockConfig(64, 64, 128 * widen, 4, 4)
    if m < 1024:
        return BlockConfig(128, 128, 64 * widen, 4, 4)
    return BlockConfig(128, 256, 64 * widen, 8, 3)


@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """The (row-tile, column-tile) program `pid` computes, numbered GROUP_M row-tiles at a time (L2 reuse)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows
    return pid_m, pid_n


@triton.jit
def _gemm_kernel(a_ptr, w_ptr, c_ptr, M, N, K, stride_am, stride_wn, stride_cm,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rows = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Out-of-range rows/columns wrap onto valid ones (no load mask); the store drops them.
    a_ptrs = a_ptr + (rows % M)[:, None] * stride_am + offs_k[None, :]
    w_ptrs = w_ptr + (cols % N)[None, :] * stride_wn + offs_k[:, None]   # a [BLOCK_K, BLOCK_N] view of W^T
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)
        w = tl.load(w_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)
        acc = tl.dot(a, w, acc)
        a_ptrs += BLOCK_K
        w_ptrs += BLOCK_K
    c_ptrs = c_ptr + rows[:, None] * stride_cm + cols[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(rows[:, None] < M) & (cols[None, :] < N))


def out_dtype(dtype: str) -> str:
    """C's dtype: the inputs' for 16-bit GEMMs, bf16 for fp8 (fp8 cannot hold the NaN poison nor the sums)."""
    return "bf16" if dtype == "fp8" else dtype


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    m, n, k = shape["m"], shape["n"], shape["k"]
    return {"a": randn((m, k), dtype, device, gen), "w": randn((n, k), dtype, device, gen),
            "out": poisoned((m, n), out_dtype(dtype), device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    return inputs["a"].float() @ inputs["w"].float().T


def launch(inputs: dict, shape: dict) -> None:
    m, n, k = shape["m"], shape["n"], shape["k"]
    a, w, out = inputs["a"], inputs["w"], inputs["out"]
    cfg = block_config(m, n, k, a.element_size())
    grid = (triton.cdiv(m, cfg.block_m) * triton.cdiv(n, cfg.block_n),)
    _gemm_kernel[grid](a, w, out, m, n, k, a.stride(0), w.stride(0), out.stride(0),
                       BLOCK_M=cfg.block_m, BLOCK_N=cfg.block_n, BLOCK_K=cfg.block_k, GROUP_M=GROUP_M,
                       num_warps=cfg.num_warps, num_stages=cfg.num_stages)


def whatif_op(shape: dict, dtype: str) -> Op:
    """The estimate's GEMM op (roofline/ops.py `gemm`): 2mnk FLOPs, A and W read once, C written once; fp8
    operands are 1 byte with a 2-byte (bf16) output."""
    e = ELEMENT_BYTES[dtype]
    return gemm("gemm", shape["m"], shape["n"], shape["k"], e, e, dtype, out_bytes=ELEMENT_BYTES[out_dtype(dtype)])


def label(shape: dict) -> str:
    return f"m={shape['m']} n={shape['n']} k={shape['k']}"
