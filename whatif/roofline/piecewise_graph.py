"""Host calls of a piecewise CUDA-graph pass (vLLM's cudagraph_mode PIECEWISE).

vLLM splits the compiled model at its splitting ops, by default the attention ops (vllm/config/compilation.py
CompilationConfig.splitting_ops: 'If None, defaults to attention ops for piecewise cudagraphs', `_attention_ops`:
vllm::unified_attention_with_output, ...): each piece between two attention ops is replayed as one CUDA graph and each
attention op runs eagerly between them (its KV-cache write and attention kernels). FULL_AND_PIECEWISE, the V1 default,
captures a decode batch whole instead; PIECEWISE captures pieces for every batch. So the host issues one call per
piece and one per kernel of an attention op, each at the engine's `piecewise_call_s`, while the GPU runs a piece's
kernels back to back (forward_pass.launch_queue_time with these calls)."""
from __future__ import annotations

from ..specs.op_kinds import ATTENTION_CLASSES, OpRole
from .ops import OpClass, is_overlapped


def in_splitting_op(op) -> bool:
    """Whether the op runs inside vLLM's attention custom op (unified_attention_with_output writes the new tokens'
    K/V into the cache, reshape_and_cache_flash, then runs the attention kernel), outside any graph piece."""
    return op.op_class in ATTENTION_CLASSES or op.role == OpRole.KV_WRITE


def piecewise_calls(times) -> dict:
    """{id(op): host calls} of a piecewise pass over ops in layer order: 1 for each kernel of an attention op, 1 for
    the first op of each graph piece (its replay), 0 for the other ops of a piece (replayed with it)."""
    calls, piece_open = {}, False
    for t in times:
        if is_overlapped(t.op) or t.op.op_class == OpClass.TRANSFER:
            continue
        if in_splitting_op(t.op):
            calls[id(t.op)], piece_open = 1.0, False
        else:
            calls[id(t.op)], piece_open = (0.0 if piece_open else 1.0), True
    return calls
