"""Attention over tokens gathered by index (a token-level sparse selection) runs below dense attention's rate.

A technique whose attention reads a content-selected subset of tokens (`Technique.gathers`) is priced as dense
attention over those tokens (the engine's fitted FlashAttention rate) divided by these efficiencies: the sparse
kernel's rate relative to the dense one, measured on aiconfigurator's DeepSeek-V3.2 DSA modules (FlashMLA's
sparse kernels, 2,048 gathered tokens a query) against DeepSeek-V3's dense MLA modules, same engine releases
and grid, H100 and B200 (whatif/validate/gathered_attention.py; `python benchmarks/gathered_attention_fit.py`).
Prefill: the geometric mean over vLLM 0.24 and TensorRT-LLM 1.3 of the achieved FLOP rates, per GPU H100 0.448,
B200 0.526 (left out: each GPU's value predicts the other's within 17%). Decode: seconds per cached token read,
vLLM's alone (TensorRT-LLM's walks all top-k slots), H100 0.872, B200 0.917. Static patterns (windows, sinks,
strides, block-diagonal, whole pages or blocks) read contiguous tiles as dense kernels do and keep the dense rate.
"""
from __future__ import annotations

from .ops import Op, OpClass

GATHERED_PREFILL_EFF = 0.486   # pooled over H100 and B200 (validate/gathered_attention.pooled("prefill"))
GATHERED_DECODE_EFF = 0.894    # pooled over H100 and B200 (validate/gathered_attention.pooled("decode"))


def gathered_efficiency(op: Op) -> float:
    """The share of dense attention's rate an attention kernel over gathered tokens reaches (1: not gathered)."""
    if not getattr(op.shape, "gathered", False):
        return 1.0
    if op.op_class == OpClass.ATTENTION_PREFILL:
        return GATHERED_PREFILL_EFF
    if op.op_class == OpClass.ATTENTION_DECODE:
        return GATHERED_DECODE_EFF
    return 1.0
