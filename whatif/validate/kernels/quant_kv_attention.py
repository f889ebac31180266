"""Decode attention over a quantized KV cache, dequantized in the kernel (int8, or KIVI 4/2-bit).

One query token per sequence, GQA (query head h reads KV head h // (heads // kv_heads)), scale 1/sqrt(head_dim),
online softmax in fp32, split-K flash decoding: kernel 1 runs one program per (sequence, KV head, chunk of
tokens) for all query heads of the group at once (padded to 16 rows for tl.dot), dequantizes each tile of K and
V in registers, and writes the chunk's unnormalized output with its running max and sum (fp32); kernel 2 merges
the chunks of each query head. Q and out are [batch, heads, head_dim] in the 16-bit dtype.

Cache layout (head-major, contiguous: one block per sequence and KV head, tokens in order):
- bits 8: per-token symmetric int8. k, v int8 [batch, kv_heads, context, head_dim]; k_scale, v_scale fp16
  [batch, kv_heads, context]: value = code * scale. (`group` is ignored: the group is the head, head_dim channels.)
- bits 4 and 2 (KIVI): asymmetric min-max groups, value = code * scale + zero, scales and zeros fp16.
  Keys per CHANNEL over `group` consecutive tokens, packed along tokens: k uint8 [batch, kv_heads,
  context * bits / 8, head_dim] (byte p of a channel holds tokens p*per_byte + j at bits j*bits..);
  k_scale, k_zero [batch, kv_heads, context / group, head_dim].
  Values per TOKEN over `group` consecutive channels, packed along channels: v uint8 [batch, kv_heads, context,
  head_dim * bits / 8] (byte c of a token holds channels c*per_byte + j at bits j*bits..); v_scale, v_zero
  [batch, kv_heads, context, head_dim / group]. context must be a multiple of group, group a power of two.

The split-K partition (`split`), its workspace and the merge kernel (`combine`) and the float32 attention of the
reference (`attention`) are shared with sparse_attention.py.
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from ...roofline.attention import attention_op
from ...roofline.config import ForwardBatch
from ...roofline.ops import Op
from ...roofline.context import KVFormat
from ...roofline.techniques.kv_compression import KIVI, SCALE_BYTES, with_dequant
from .common import ELEMENT_BYTES, next_pow2, poisoned, randn

FAMILY = "quant_kv_attention"
DTYPES = ("bf16", "fp16")
USES_DOT = True

LOG2E = 1.4426950408889634
TARGET_PROGRAMS = 512     # split the context until about 4 programs per SM of an H100 (132 SMs) are in flight
MIN_CHUNK_TILES = 2       # but let every program loop over at least 2 tiles where the context allows
COMBINE_CHUNKS = 16       # chunks the merge kernel reads per step

TEST_SHAPES = [
    # int8, context not a multiple of the tile, GQA 2, several chunks per sequence
    {"batch": 2, "heads": 4, "kv_heads": 2, "context": 100, "head_dim": 32, "bits": 8, "group": 32},
    # KIVI 4-bit: 2 channel groups per token, 6 key groups of 16 tokens, 3 chunks
    {"batch": 2, "heads": 4, "kv_heads": 2, "context": 96, "head_dim": 32, "bits": 4, "group": 16},
    # KIVI 2-bit: a half-filled last tile and a chunk of one partial tile
    {"batch": 1, "heads": 4, "kv_heads": 2, "context": 40, "head_dim": 16, "bits": 2, "group": 8},
    {"batch": 2, "heads": 4, "kv_heads": 1, "context": 72, "head_dim": 16, "bits": 4, "group": 8},
]


def _sweep() -> list[dict]:
    """Llama-3-8B-like attention (32 heads, 8 KV heads, head_dim 128), KIVI groups of 32 tokens/channels. Per bits:
    launch-bound (under ~17 MB of cache), then memory-bound up to an input set under 2 GB (8-bit: 0.5M cached
    tokens, 4-bit 1M, 2-bit 2M); 2-bit with groups of 32 lands at the ridge label (dequant ops at fp32 peak)."""
    sizes = {8: [(1, 1024), (1, 4096), (4, 2048), (1, 32768), (16, 4096), (128, 1024), (64, 8192), (16, 32768)],
             4: [(1, 1024), (1, 8192), (8, 2048), (1, 32768), (32, 4096), (128, 2048), (128, 8192), (32, 32768)],
             2: [(1, 2048), (4, 4096), (16, 1024), (2, 32768), (64, 4096), (128, 4096), (128, 16384), (64, 32768)]}
    shapes = []
    for i in range(8):   # interleave the bits, rotating, so the held-out shapes (every third) take each in turn
        for bits in ((8, 4, 2) * 2)[i % 3:i % 3 + 3]:
            batch, context = sizes[bits][i]
            shapes.append({"batch": batch, "heads": 32, "kv_heads": 8, "context": context, "head_dim": 128,
                           "bits": bits, "group": 128 if bits == 8 else 32})
    return shapes


SHAPES = _sweep()


# ----------------------------------------------------------------------------- split-K (shared with sparse)

def block_n(tokens: int, minimum: int = 16) -> int:
    """Tokens per tile: 64 on real lengths, 16 on the tiny test contexts (so they split into several tiles)."""
    return max(minimum, 16 if tokens < 512 else 64)


def split(sequences: int, tokens: int, tile: int) -> tuple[int, int]:
    """(chunk length, chunks): cut `tokens` into whole tiles so sequences x chunks programs fill the GPU."""
    tiles = triton.cdiv(tokens, tile)
    chunks = max(1, min(triton.cdiv(TARGET_PROGRAMS, sequences), triton.cdiv(tiles, MIN_CHUNK_TILES)))
    chunk = triton.cdiv(tiles, chunks) * tile
    return chunk, triton.cdiv(tokens, chunk)


def workspace(batch: int, heads: int, head_dim: int, chunks: int, device: str) -> dict:
    """fp32 partial outputs, maxima and sums of every (query head, chunk); every entry is written by kernel 1."""
    rows = batch * heads * chunks
    return {"part_acc": torch.empty((rows, head_dim), dtype=torch.float32, device=device),
            "part_max": torch.empty((rows,), dtype=torch.float32, device=device),
            "part_sum": torch.empty((rows,), dtype=torch.float32, device=device)}


@triton.jit(do_not_specialize=["chunks"])
def _combine_kernel(acc_ptr, max_ptr, sum_ptr, out_ptr, chunks, HEAD_DIM: tl.constexpr, BLOCK_C: tl.constexpr):
    """out[row] = sum_c 2^(m_c - m) acc_c / sum_c 2^(m_c - m) l_c over the chunks c of one query head."""
    row = tl.program_id(0).to(tl.int64)
    c = tl.arange(0, BLOCK_C)
    d = tl.arange(0, HEAD_DIM)
    run_max = tl.full([BLOCK_C], float("-inf"), tl.float32)
    for c0 in range(0, chunks, BLOCK_C):
        part = tl.load(max_ptr + row * chunks + c0 + c, mask=c0 + c < chunks, other=float("-inf"))
        run_max = tl.maximum(run_max, part)
    m = tl.max(run_max, 0)
    total = tl.zeros([BLOCK_C], tl.float32)
    acc = tl.zeros([HEAD_DIM], tl.float32)
    for c0 in range(0, chunks, BLOCK_C):
        mask = c0 + c < chunks
        idx = row * chunks + c0 + c
        w = tl.exp2(tl.load(max_ptr + idx, mask=mask, other=float("-inf")) - m)
        total += tl.load(sum_ptr + idx, mask=mask, other=0.0) * w
        part = tl.load(acc_ptr + idx[:, None] * HEAD_DIM + d[None, :], mask=mask[:, None], other=0.0)
        acc += tl.sum(part * w[:, None], 0)
    tl.store(out_ptr + row * HEAD_DIM + d, (acc / tl.sum(total, 0)).to(out_ptr.dtype.element_ty))


def combine(inputs: dict, rows: int, head_dim: int, chunks: int) -> None:
    """Kernel 2: merge the chunks of each of the `rows` query heads into inputs['out']."""
    _combine_kernel[(rows,)](inputs["part_acc"], inputs["part_max"], inputs["part_sum"], inputs["out"], chunks,
                             HEAD_DIM=head_dim, BLOCK_C=COMBINE_CHUNKS)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """float32 decode attention of one sequence: q [heads, d], k and v [kv_heads, tokens, d] -> [heads, d]."""
    kv_heads, _, d = k.shape
    qg = q.float().view(kv_heads, -1, d)
    scores = torch.einsum("kgd,ktd->kgt", qg, k.float()) / math.sqrt(d)
    return torch.einsum("kgt,ktd->kgd", torch.softmax(scores, -1), v.float()).reshape(-1, d)


# ----------------------------------------------------------------------------- quantization in torch

def per_byte(bits: int) -> int:
    return 8 // bits


def quantize_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Symmetric per-token int8 of x [..., d]: codes int8 and one fp16 scale per row (amax / 127)."""
    scale = (x.abs().amax(-1) / 127.0).clamp_min(1e-6).half()
    codes = torch.round(x / scale.float()[..., None]).clamp(-127, 127).to(torch.int8)
    return codes, scale


def quantize_asymmetric(x: torch.Tensor, bits: int, dim: int) -> tuple[torch.Tensor, ...]:
    """Min-max quantization of x over its group axis `dim`: codes 0..2^bits-1, fp16 scale and zero per group."""
    lo, hi = x.amin(dim, keepdim=True), x.amax(dim, keepdim=True)
    scale = ((hi - lo) / (2 ** bits - 1)).clamp_min(1e-6).half()
    zero = lo.half()
    codes = torch.round((x - zero.float()) / scale.float()).clamp(0, 2 ** bits - 1).to(torch.int32)
    return codes, scale.squeeze(dim), zero.squeeze(dim)


def pack(codes: torch.Tensor, bits: int, dim: int) -> torch.Tensor:
    """uint8 bytes of `codes` whose axis `dim` has 8 // bits fields: field j goes to bits j*bits.. of the byte."""
    shape = [1] * codes.dim()
    shape[dim] = per_byte(bits)
    shifts = (torch.arange(per_byte(bits), device=codes.device) * bits).view(shape)
    return (codes << shifts).sum(dim).to(torch.uint8)


def unpack(packed: torch.Tensor, bits: int, dim: int) -> torch.Tensor:
    """The codes of `packed` with axis `dim` widened 8 // bits times (inverse of pack along that axis)."""
    shape = [1] * (packed.dim() + 1)
    shape[dim + 1] = per_byte(bits)
    shifts = (torch.arange(per_byte(bits), device=packed.device) * bits).view(shape)
    codes = (packed.to(torch.int32).unsqueeze(dim + 1) >> shifts) & (2 ** bits - 1)
    return codes.flatten(dim, dim + 1)


def quantize_keys(x: torch.Tensor, bits: int, group: int) -> dict:
    """KIVI keys of one sequence x [kv_heads, tokens, d]: per channel over `group` tokens, packed along tokens."""
    h, t, d = x.shape
    codes, scale, zero = quantize_asymmetric(x.view(h, t // group, group, d), bits, 2)
    packed = pack(codes.view(h, t // per_byte(bits), per_byte(bits), d), bits, 2)
    return {"k": packed, "k_scale": scale, "k_zero": zero}


def quantize_values(x: torch.Tensor, bits: int, group: int) -> dict:
    """KIVI values of one sequence x [kv_heads, tokens, d]: per token over `group` channels, packed along channels."""
    h, t, d = x.shape
    codes, scale, zero = quantize_asymmetric(x.view(h, t, d // group, group), bits, 3)
    packed = pack(codes.view(h, t, d // per_byte(bits), per_byte(bits)), bits, 3)
    return {"v": packed, "v_scale": scale, "v_zero": zero}


def quantize(k: torch.Tensor, v: torch.Tensor, bits: int, group: int) -> dict:
    """The cache tensors of one sequence's float K and V [kv_heads, tokens, d] in the format of `bits`."""
    if bits == 8:
        (kc, ks), (vc, vs) = quantize_int8(k), quantize_int8(v)
        return {"k": kc, "k_scale": ks, "v": vc, "v_scale": vs}
    return {**quantize_keys(k, bits, group), **quantize_values(v, bits, group)}


def dequantize(cache: dict, bits: int, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    """float32 K and V [kv_heads, tokens, d] of one sequence's cache tensors (the kernel's arithmetic)."""
    if bits == 8:
        return (cache["k"].float() * cache["k_scale"].float()[..., None],
                cache["v"].float() * cache["v_scale"].float()[..., None])
    kc = unpack(cache["k"], bits, 1)                                  # [h, t, d]
    h, t, d = kc.shape
    k = kc.view(h, t // group, group, d) * cache["k_scale"].float()[:, :, None] + cache["k_zero"].float()[:, :, None]
    vc = unpack(cache["v"], bits, 2).view(h, t, d // group, group)
    v = vc * cache["v_scale"].float()[..., None] + cache["v_zero"].float()[..., None]
    return k.view(h, t, d), v.view(h, t, d)


def sequence_cache(inputs: dict, b: int) -> dict:
    """The cache tensors of sequence b (views)."""
    return {name: inputs[name][b] for name in ("k", "v", "k_scale", "v_scale", "k_zero", "v_zero") if name in inputs}


# ----------------------------------------------------------------------------- kernel 1: partials per chunk

@triton.jit
def _unpack_fields(packed, BITS: tl.constexpr):
    """uint8 bytes [r, c] -> codes [r, c, 8 // BITS]: field j is bits j*BITS .. j*BITS + BITS - 1."""
    shifts = tl.arange(0, 8 // BITS) * BITS
    return (packed.to(tl.int32)[:, :, None] >> shifts[None, None, :]) & ((1 << BITS) - 1)


@triton.jit
def _keys_t(k_ptr, ks_ptr, kz_ptr, seq, n0, end, context,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, BITS: tl.constexpr, GROUP: tl.constexpr):
    """Dequantized keys of tokens n0 .. n0 + BLOCK_N of sequence-head `seq`, transposed: fp32 [HEAD_DIM, BLOCK_N]
    (zero past `end`)."""
    d = tl.arange(0, HEAD_DIM)
    if BITS == 8:
        n = n0 + tl.arange(0, BLOCK_N)
        mask = n < end
        row = seq * context + n
        codes = tl.load(k_ptr + row[None, :] * HEAD_DIM + d[:, None], mask=mask[None, :], other=0)
        kt = codes.to(tl.float32) * tl.load(ks_ptr + row, mask=mask, other=0.0).to(tl.float32)[None, :]
    else:
        p = n0 // (8 // BITS) + tl.arange(0, BLOCK_N // (8 // BITS))   # packed rows: 8 // BITS tokens each
        packed = tl.load(k_ptr + (seq * (context // (8 // BITS)) + p)[None, :] * HEAD_DIM + d[:, None],
                         mask=(p * (8 // BITS) < end)[None, :], other=0)
        codes = tl.reshape(_unpack_fields(packed, BITS), (HEAD_DIM, BLOCK_N // GROUP, GROUP))
        g = n0 // GROUP + tl.arange(0, BLOCK_N // GROUP)                # token groups: one scale per channel each
        at = (seq * (context // GROUP) + g)[None, :] * HEAD_DIM + d[:, None]
        gmask = (g * GROUP < end)[None, :]
        scale = tl.load(ks_ptr + at, mask=gmask, other=0.0).to(tl.float32)
        zero = tl.load(kz_ptr + at, mask=gmask, other=0.0).to(tl.float32)
        kt = tl.reshape(codes.to(tl.float32) * scale[:, :, None] + zero[:, :, None], (HEAD_DIM, BLOCK_N))
    return kt


@triton.jit
def _values(v_ptr, vs_ptr, vz_ptr, seq, n0, end, context,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, BITS: tl.constexpr, GROUP: tl.constexpr):
    """Dequantized values of tokens n0 .. n0 + BLOCK_N of sequence-head `seq`: fp32 [BLOCK_N, HEAD_DIM]
    (zero past `end`)."""
    n = n0 + tl.arange(0, BLOCK_N)
    mask = (n < end)[:, None]
    row = (seq * context + n)[:, None]
    if BITS == 8:
        codes = tl.load(v_ptr + row * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :], mask=mask, other=0)
        v = codes.to(tl.float32) * tl.load(vs_ptr + row, mask=mask, other=0.0).to(tl.float32)
    else:
        c = tl.arange(0, HEAD_DIM // (8 // BITS))                       # packed columns: 8 // BITS channels each
        packed = tl.load(v_ptr + row * (HEAD_DIM // (8 // BITS)) + c[None, :], mask=mask, other=0)
        codes = tl.reshape(_unpack_fields(packed, BITS), (BLOCK_N, HEAD_DIM // GROUP, GROUP))
        at = row * (HEAD_DIM // GROUP) + tl.arange(0, HEAD_DIM // GROUP)[None, :]
        scale = tl.load(vs_ptr + at, mask=mask, other=0.0).to(tl.float32)
        zero = tl.load(vz_ptr + at, mask=mask, other=0.0).to(tl.float32)
        v = tl.reshape(codes.to(tl.float32) * scale[:, :, None] + zero[:, :, None], (BLOCK_N, HEAD_DIM))
    return v


@triton.jit(do_not_specialize=["context", "chunk"])
def _partial_kernel(q_ptr, k_ptr, v_ptr, ks_ptr, kz_ptr, vs_ptr, vz_ptr, acc_ptr, max_ptr, sum_ptr,
                    context, chunk, qk_scale, GROUP_Q: tl.constexpr, BLOCK_H: tl.constexpr,
                    HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, BITS: tl.constexpr, GROUP: tl.constexpr):
    """One (sequence x KV head, chunk): online softmax of the GROUP_Q query heads over the chunk's tokens."""
    seq = tl.program_id(0).to(tl.int64)          # batch index * kv_heads + KV head
    c = tl.program_id(1)
    h = tl.arange(0, BLOCK_H)
    d = tl.arange(0, HEAD_DIM)
    hmask = h < GROUP_Q
    qrow = seq * GROUP_Q + h                     # query heads kv_head * GROUP_Q + h of the sequence
    q = tl.load(q_ptr + qrow[:, None] * HEAD_DIM + d[None, :], mask=hmask[:, None], other=0.0)
    start = c * chunk
    end = tl.minimum(start + chunk, context)
    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, HEAD_DIM], tl.float32)
    for n0 in range(start, end, BLOCK_N):
        kt = _keys_t(k_ptr, ks_ptr, kz_ptr, seq, n0, end, context, HEAD_DIM, BLOCK_N, BITS, GROUP)
        s = tl.dot(q, kt.to(q.dtype)) * qk_scale   # log2 domain: exp2 below
        s = tl.where((n0 + tl.arange(0, BLOCK_N) < end)[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = _values(v_ptr, vs_ptr, vz_ptr, seq, n0, end, context, HEAD_DIM, BLOCK_N, BITS, GROUP)
        acc = acc * alpha[:, None] + tl.dot(p.to(q.dtype), v.to(q.dtype))
        m_i = m_new
    part = qrow * tl.num_programs(1) + c
    tl.store(acc_ptr + part[:, None] * HEAD_DIM + d[None, :], acc, mask=hmask[:, None])
    tl.store(max_ptr + part, m_i, mask=hmask)
    tl.store(sum_ptr + part, l_i, mask=hmask)


# ----------------------------------------------------------------------------- the family interface

def require(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


def check(shape: dict) -> None:
    bits, group, d = shape["bits"], shape["group"], shape["head_dim"]
    require(bits in (8, 4, 2), "bits: 8, 4 or 2")
    require(shape["heads"] % shape["kv_heads"] == 0, "heads must be a multiple of kv_heads")
    if bits < 8:
        require(group == next_pow2(group) and per_byte(bits) <= group <= d, "group: a power of two, 8/bits..head_dim")
        require(shape["context"] % group == 0, "context must be a multiple of group (key groups span tokens)")


def tile(shape: dict) -> int:
    return block_n(shape["context"], shape["group"] if shape["bits"] < 8 else 16)


def chunking(shape: dict) -> tuple[int, int]:
    return split(shape["batch"] * shape["kv_heads"], shape["context"], tile(shape))


def warps(bits: int) -> int:
    """int8 tiles need ~180 registers a thread with 4 warps (2 CTAs per SM) but ~100 with 8; the unpacked 4/2-bit
    tiles ~100 with 4 warps (ptxas for sm_90 on the 64-token tiles; not timed on a GPU here)."""
    return 8 if bits == 8 else 4


def make_inputs(shape: dict, dtype: str, device: str, gen: torch.Generator) -> dict:
    """Random float K and V quantized sequence by sequence in torch (bounded temporaries on gigabyte caches)."""
    check(shape)
    b, h, kvh, t, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["context"], shape["head_dim"]
    seqs = [quantize(randn((kvh, t, d), "fp32", device, gen), randn((kvh, t, d), "fp32", device, gen),
                     shape["bits"], shape["group"]) for _ in range(b)]
    cache = {name: torch.stack([s[name] for s in seqs]) for name in seqs[0]}
    return {"q": randn((b, h, d), dtype, device, gen), **cache,
            **workspace(b, h, d, chunking(shape)[1], device), "out": poisoned((b, h, d), dtype, device)}


def reference(inputs: dict, shape: dict) -> torch.Tensor:
    """Dequantize each sequence's cache in torch, then float32 attention."""
    rows = [attention(inputs["q"][b], *dequantize(sequence_cache(inputs, b), shape["bits"], shape["group"]))
            for b in range(shape["batch"])]
    return torch.stack(rows)


def launch(inputs: dict, shape: dict) -> None:
    b, h, kvh, d = shape["batch"], shape["heads"], shape["kv_heads"], shape["head_dim"]
    chunk, chunks = chunking(shape)
    n = tile(shape)
    k_zero, v_zero = inputs.get("k_zero", inputs["k_scale"]), inputs.get("v_zero", inputs["v_scale"])
    _partial_kernel[(b * kvh, chunks)](
        inputs["q"], inputs["k"], inputs["v"], inputs["k_scale"], k_zero, inputs["v_scale"], v_zero,
        inputs["part_acc"], inputs["part_max"], inputs["part_sum"], shape["context"], chunk,
        LOG2E / math.sqrt(d), GROUP_Q=h // kvh, BLOCK_H=max(16, next_pow2(h // kvh)), HEAD_DIM=d, BLOCK_N=n,
        BITS=shape["bits"], GROUP=shape["group"], num_warps=warps(shape["bits"]))
    combine(inputs, b * h, d, chunks)


def kv_format(shape: dict) -> KVFormat:
    """The cache format whatif prices: KIVI's for bits 4/2 (no 16-bit residual), symmetric int8 with one fp16
    scale per token and head (1 + SCALE_BYTES / head_dim bytes per element) for bits 8."""
    if shape["bits"] == 8:
        return KVFormat(1.0 + SCALE_BYTES / shape["head_dim"], 2.0)
    return KIVI(bits=shape["bits"], group_size=shape["group"], residual=0).transform_kv(KVFormat(2.0, 2.0))


def whatif_op(shape: dict, dtype: str) -> Op:
    """The decode attention op of graph.py (roofline/attention.py attention_op over ForwardBatch.decode(batch,
    context), so context + 1 tokens by whatif's convention of the new token) with the cache read at the quantized
    format's bytes (kv_format: KVFormat.token_bytes as kv_read), plus KIVI's in-kernel dequantization
    (kv_compression.with_dequant, DEQUANT_OPS_PER_ELEMENT CUDA-core ops per cached K/V element)."""
    b, kvh, d, t = shape["batch"], shape["kv_heads"], shape["head_dim"], shape["context"]
    width = 2 * kvh * d
    fmt = kv_format(shape)
    op = attention_op(ForwardBatch.decode(b, t).groups, shape["heads"], kvh, d, d, ELEMENT_BYTES[dtype],
                      fmt.element_bytes, width, 1, dtype, kv_read=lambda tokens: fmt.token_bytes(tokens, width))
    return with_dequant(op, b * t * width)


def label(shape: dict) -> str:
    group = "" if shape["bits"] == 8 else f" g={shape['group']}"
    return (f"b={shape['batch']} ctx={shape['context']} h={shape['heads']}/{shape['kv_heads']} d={shape['head_dim']} "
            f"int{shape['bits']}{group}")
