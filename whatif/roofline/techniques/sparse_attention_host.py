"""Family D: sparse attention, decode selection with the full KV on the CPU: the GPU keeps what the
selection needs (and a staging buffer), and each step fetches or computes the selected tokens there.

Family D's common rules (where the full KV lives, which passes pay for selection) and its split into
files are in sparse_attention.py's docstring.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...specs.models import ModelSpec
from ..context import HostPath, KVFormat, PassContext
from ..ops import GemmShape, Op, OpClass, streaming, transfer
from .base import Technique, param, register
from .kit import (SOFTMAX_OPS_PER_SCORE, cached, heads, kv_heads, rebuilt_attention, replace_attention, require_host,
                  require_separate_keys, score_op, sequences, stepping)

ROPE_OPS_PER_ELEMENT = 6.0     # rotary embedding of a reconstructed key element (as graph.py's rope op); assumed


# ---------------------------------------------------------------- decode selection, full KV on the CPU
SHADOWKV_BUFFER_SLACK = 128   # extra tokens of the GPU staging buffer for generated tokens (ShadowKV code)
SVD_FLOPS_PER_ROW = 4.0       # x D^2 FLOPs per key row of a tall n x D SVD (Householder QR + thin U), fp32; assumed


@register
@dataclass(frozen=True)
class ShadowKV(Technique):
    """Low-rank keys on the GPU, values on the CPU. Prefill takes an SVD of each layer's pre-RoPE key
    matrix (n tokens x D = KV heads x head_dim, fp32 on the CUDA cores) and keeps on the GPU only the
    rank-`rank` factor U (rank elements per token), the rank x D factor, one landmark (mean post-RoPE
    key) per `chunk_size` tokens, `outlier_chunks` + `local_chunks` chunks of full KV and a staging
    buffer of `budget` tokens; the values are copied to CPU memory (an overlapped transfer) and the
    full KV lives there. Each decode step and layer scores the query against all landmarks, keeps the
    top budget / chunk_size chunks, rebuilds their keys (a batched GEMM U[selected] x factor, plus
    RoPE) and fetches their values over the host link; `reuse` of the selected tokens are still in
    the buffer from the previous step (temporal locality), so only the rest are rebuilt and fetched.
    The fetch overlaps only that layer's key rebuild, which is far shorter, so it is charged in line.
    Attention then reads budget + outlier + local tokens at full precision. The values in host memory
    (n x D elements per layer) are not yet checked against the host tier's capacity (issue 5)."""

    name = "shadowkv"
    family = "D"
    paper = "ShadowKV: KV Cache in Shadows for High-Throughput Long-Context LLM Inference"
    slots = ("decode selection", "kv format")
    budget_param = "budget"
    budget: int = param(2048, "sparse KV budget: tokens rebuilt/fetched per KV head and layer", "tokens")
    chunk_size: int = param(8, "tokens per chunk (one landmark each)", "tokens")
    rank: int = param(160, "rank of the pre-RoPE key factor U (per token and layer)")
    outlier_chunks: int = param(48, "chunks kept as full KV on the GPU (24 per 1024 budget tokens)", "chunks")
    local_chunks: int = param(4, "newest chunks kept as full KV on the GPU", "chunks")
    reuse: float = param(0.6, "share of selected tokens still in the GPU buffer from the last step (the paper's "
                              "cache cuts rebuild and fetch by 60%)")

    def check_params(self) -> None:
        for key in ("budget", "chunk_size", "rank"):
            self.require(getattr(self, key) >= 1, key, "a positive integer")
        self.require(self.outlier_chunks >= 0, "outlier_chunks", "a non-negative integer")
        self.require(self.local_chunks >= 0, "local_chunks", "a non-negative integer")
        self.require(0 <= self.reuse < 1, "reuse", "a share from 0 to below 1")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    @property
    def static_tokens(self) -> int:
        return (self.outlier_chunks + self.local_chunks) * self.chunk_size

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        # Per layer and sequence the GPU holds: full KV for the staging buffer, outliers and local
        # chunks (+ slack), the rank x D factor (rank x D elements = rank/2 tokens of K+V), per token
        # the U row (rank elements) and per chunk one landmark key (1/chunk of the key half).
        full = self.budget + self.static_tokens + SHADOWKV_BUFFER_SLACK + self.rank // 2
        return replace(kv, element_bytes=kv.full_bytes / (2 * self.chunk_size), residual_tokens=full,
                       token_overhead_bytes=kv.token_overhead_bytes + self.rank * kv.full_bytes)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.budget + self.static_tokens)

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def _selected(self, c: float) -> float:
        """Tokens per KV head chosen from the landmarks (beyond the static outlier and local chunks)."""
        return min(self.budget, max(0.0, c - self.static_tokens))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kvh, h, d, a = kv_heads(ctx), heads(ctx), ctx.model.head_dim, ctx.prec.act_bytes
        host = require_host(self.name, ctx)
        width = kvh * d                           # key (or value) elements per token on this GPU
        if not stepping(ctx):
            tokens = ctx.batch.tokens
            svd = Op("shadowkv_key_svd", OpClass.GEMM, SVD_FLOPS_PER_ROW * tokens * width ** 2,
                     {"hbm": tokens * width * 4.0 + tokens * self.rank * a}, "fp32",
                     GemmShape(tokens, width, SVD_FLOPS_PER_ROW / 2 * width), ctx.layers,
                     f"SVD of the {width}-wide pre-RoPE keys: {SVD_FLOPS_PER_ROW:g} x D^2 fp32 FLOPs per token "
                     f"(assumed)")
            return [svd, transfer("shadowkv_value_offload", tokens * width * ctx.kv.full_bytes, host, ctx.layers,
                                  overlap=True, direction="d2h")]
        chunks = cached(ctx) / self.chunk_size
        landmarks = score_op("shadowkv_landmark_scores", ctx, chunks * width, ctx.kv.full_bytes, chunks * h,
                             ctx.layers, 2.0 * h / kvh, alu_ops=chunks * h * SOFTMAX_OPS_PER_SCORE,
                             note=f"one landmark per {self.chunk_size} tokens")
        rows = sum(n * self._selected(c) for _, c, n in ctx.batch.groups) * kvh * (1 - self.reuse)
        if rows <= 0:
            return [landmarks]
        groups = sequences(ctx) * kvh
        rebuild = Op("shadowkv_key_rebuild", OpClass.GEMM, 2.0 * rows * d * self.rank,
                     {"hbm": rows * self.rank * a + groups * self.rank * d * a + rows * d * ctx.kv.full_bytes},
                     ctx.prec.activation, GemmShape(rows, d, self.rank, groups), ctx.layers,
                     f"{rows:g} key rows rebuilt as U[selected] x factor (rank {self.rank}) plus RoPE",
                     alu_ops=rows * d * ROPE_OPS_PER_ELEMENT)
        fetch = transfer("shadowkv_value_fetch", rows * d * ctx.kv.full_bytes, host, ctx.layers)
        return [landmarks, rebuild, fetch]


A2ATS_CPU_BANDWIDTH = 300e9   # B/s the CPU attention streams KV from DRAM: 8 x DDR5-4800 channels (~307 GB/s); assumed


@register
@dataclass(frozen=True)
class A2ATS(Technique):
    """Retrieval-based KV reduction with vector-quantized keys; the full KV lives in CPU memory.
    Prefill encodes each key (after windowed RoPE) to its nearest codebook centroid (a GEMM against
    the codebook plus an argmin) and copies K and V to the CPU (an overlapped transfer); the GPU keeps
    only the codes (`code_bits` per key channel) and the newest `window` tokens' full KV. Each decode
    step and layer scores every token from its code (one query x codebook product, then a lookup per
    token and head), takes the top `topk` share of the tokens, and attends to them where the KV is:
    with `cpu_attention` (the paper's heterogeneous design) the CPU streams the selected K and V from
    DRAM at the CPU's memory bandwidth and returns a partial result merged with the GPU's window
    attention; otherwise the selected K and V cross the host link and the GPU attends. The host copy is
    not yet checked against the host tier's capacity (issue 5)."""

    name = "a2ats"
    family = "D"
    paper = ("A^2ATS: Retrieval-Based KV Cache Reduction via Windowed Rotary Position Embedding and "
             "Query-Aware Vector Quantization")
    slots = ("decode selection", "kv format")
    budget_param = "topk"
    topk: float = param(0.03, "share of cached tokens retrieved per step (the released code's default)")
    code_bits: float = param(12 / 128, "bits of VQ code per key channel on the GPU (a 12-bit, 4096-centroid code "
                                       "per 128-channel head; assumed)")
    window: int = param(256, "newest tokens kept as full KV on the GPU (assumed)", "tokens")
    cpu_attention: bool = param(True, "attend to the retrieved tokens on the CPU (else fetch them to the GPU)")
    cpu_bandwidth: float = param(A2ATS_CPU_BANDWIDTH / 1e9, "CPU memory bandwidth for CPU attention (8-channel "
                                                            "DDR5-4800; assumed)", "GB/s")

    def check_params(self) -> None:
        self.require(0 < self.topk <= 1, "topk", "a share above 0 and at most 1")
        self.require(0 < self.code_bits <= 16, "code_bits", "bits per key channel above 0 and at most 16")
        self.require(self.window >= 0, "window", "a non-negative integer")
        self.require(self.cpu_bandwidth > 0, "cpu_bandwidth", "a positive bandwidth in GB/s")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return replace(kv, element_bytes=self.code_bits / 8 / 2, residual_tokens=self.window)

    def _retrieved(self, c: float) -> float:
        return min(max(0.0, c - self.window), self.topk * c)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.window + self._retrieved(stored))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        if self.cpu_attention:   # the GPU attends only its window; the CPU attends the retrieved tokens
            return replace_attention(ops, lambda op: rebuilt_attention(
                op, ctx, lambda c: min(c, self.window), ctx.kv.full_bytes, name=op.name + "_window"))
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def _centroids(self, ctx: PassContext) -> float:
        return 2.0 ** min(24.0, self.code_bits * ctx.model.head_dim)

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        kvh, h, d, a = kv_heads(ctx), heads(ctx), ctx.model.head_dim, ctx.prec.act_bytes
        host = require_host(self.name, ctx)
        cents = self._centroids(ctx)
        if not stepping(ctx):
            tokens = ctx.batch.tokens
            encode = Op("a2ats_key_encode", OpClass.GEMM, 2.0 * tokens * kvh * cents * d,
                        {"hbm": tokens * kvh * d * a + kvh * cents * d * a + tokens * kvh * self.code_bits * d / 8},
                        ctx.prec.activation, GemmShape(tokens * kvh, cents, d), ctx.layers,
                        f"each key against {cents:g} centroids, then an argmin", alu_ops=tokens * kvh * cents)
            return [encode, transfer("a2ats_kv_offload", tokens * ctx.kv_width * ctx.kv.full_bytes, host, ctx.layers,
                                     overlap=True, direction="d2h")]
        seqs = sequences(ctx)
        codes = cached(ctx) * kvh * d                  # key elements the codes stand for
        table = seqs * h * cents * d * 2.0             # query x codebook products
        scores = score_op("a2ats_code_scores", ctx, codes, self.code_bits / 8, cached(ctx) * h, ctx.layers,
                          (table + cached(ctx) * h) / max(codes, 1.0),
                          note=f"query x {cents:g}-centroid codebook, then one lookup per token and head")
        retrieved = sum(n * self._retrieved(c) for _, c, n in ctx.batch.groups) * ctx.kv_width * ctx.kv.full_bytes
        if self.cpu_attention:
            dram = HostPath("host DRAM (attention on the CPU)", self.cpu_bandwidth * 1e9, 2 * host.latency)
            queries = sum(n * q for q, _, n in ctx.batch.groups)
            merge = streaming("a2ats_merge", OpClass.ELEMENTWISE, queries * h * d, 2, 1, 4, a, ctx.prec.activation,
                              ctx.layers, extra_bytes=queries * h * 2 * 4.0)
            return [scores, transfer("a2ats_cpu_attention", retrieved, dram, ctx.layers), merge]
        return [scores, transfer("a2ats_kv_fetch", retrieved, host, ctx.layers)]
