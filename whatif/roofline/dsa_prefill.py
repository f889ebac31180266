"""A DSA prefill's sparse MLA where the engine runs it as a decode: one query token a sequence, its own top-k rows.

SGLang's DSA backend on Blackwell with an fp8 cache (the `trtllm` prefill path: dsa_backend.py `_forward_trtllm`,
shared by prefill and decode) calls FlashInfer's `trtllm_batch_decode_with_kv_cache_mla(..., sparse_mla_top_k=
index_topk)` with the queries viewed as (tokens, 1, heads, 576): every query token is a decode row with its own page
table row of <= index_topk keys, and its CTA gathers those rows itself (no reuse across the prompt's queries inside a
CTA; docs/accuracy.md, session 60 J). The graph prices a DSA prefill's absorbed attention as a FlashAttention-style
prefill over the capped pairs with the latent read once a sequence, which leaves that gather out; here the op becomes
the decode kernel it is, over `queries` rows whose keys sum to the op's capped pairs, priced by the engine's fitted
MLA decode model (kernel_timing.is_mla_decode), so no parameter is fitted for it. Engines and GPUs that run
FlashMLA's sparse prefill kernel (Hopper, a bf16 cache, vLLM, TensorRT-LLM) keep the graph's op.
"""
from __future__ import annotations

from dataclasses import replace

from ..specs.dtypes import BYTES
from .attention import attention_op
from .module_host import sparse_path
from .ops import Op, OpClass, OpRole


def runs_prefill_as_decode(engine, arch: str) -> bool:
    """Whether `engine` runs a DSA prefill's sparse MLA as per-query decode rows on `arch` GPUs with an fp8 cache
    (kernels.dsa_prefill_as_decode: the architectures)."""
    return engine is not None and arch in engine.dsa_prefill_as_decode


def is_dsa_prefill_attention(op: Op) -> bool:
    """An absorbed (latent, one KV head) MLA attention op over prompt rows with an fp8 cache: a DSA prefill's."""
    s = op.shape
    return (op.role == OpRole.MLA_ATTENTION and op.op_class == OpClass.ATTENTION_PREFILL
            and getattr(s, "kv_heads", 0) == 1 and 0 < s.kv_element_bytes <= 1.0)


def decode_groups(op: Op) -> tuple:
    """(1, keys - 1, rows) groups of the op's kernel(s): each prompt's query token a row reading its capped keys (mean
    over the rows: bytes and FLOPs are linear in them); a mixed pass's decode rows beside them."""
    parts = getattr(op.shape, "parts", ()) or (op,)
    groups = []
    for p in parts:
        s = p.shape
        rows = s.queries if p.op_class == OpClass.ATTENTION_PREFILL else s.sequences
        if rows > 0:
            groups.append((1, s.pairs / rows - 1.0, rows))
    return tuple(groups)


def as_decode(op: Op) -> Op:
    """The DSA prefill attention op as the per-query decode kernel the engine runs (its latent width, heads, cache
    and activation bytes kept)."""
    s = op.shape
    groups = decode_groups(op)
    new = attention_op(groups, heads=s.heads, kv_heads=1, d_qk=s.d_qk, d_v=s.d_v, act_bytes=BYTES[op.dtype],
                       kv_bytes=s.kv_element_bytes, kv_width=s.d_qk, count=op.count, dtype=op.dtype, name=op.name,
                       role=op.role)
    return replace(new, formula=f"{new.formula}; the engine's DSA prefill as decode rows, one a query token "
                                f"(dsa_backend _forward_trtllm: trtllm_batch_decode_with_kv_cache_mla, sparse top-k)")


def dsa_prefill_ops(ops, engine, model, arch: str, batch) -> list:
    """The pass's ops with a DSA (`model.indexer`) prefill's sparse MLA as the engine's per-query decode kernel
    where it runs so: past index_topk keys (module_host.sparse_path; below it SGLang runs its dense MHA prefill)."""
    if model is None or not sparse_path(model, batch) or not runs_prefill_as_decode(engine, arch):
        return ops
    return [as_decode(op) if is_dsa_prefill_attention(op) else op for op in ops]
