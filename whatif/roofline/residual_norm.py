"""The residual add and the RMSNorm after it as one kernel, where the engine's RMSNorm takes the residual.

whatif's decoder layer (graph.layer_ops) adds each half's output to the residual stream in a kernel of its own
(`residual_add`, `residual_add_2`: two 16-bit reads and a write an element) and normalizes the sum in another
(`post_attn_norm`, the next layer's `input_norm`: a read and a write). An engine whose decoder layers call their
RMSNorm module with the residual runs both as one kernel (kernels.fused_add_rmsnorm): TensorRT-LLM's PyTorch flow,
tensorrt_llm/_torch/modules/rms_norm.py RMSNorm.forward, `flashinfer_fused_add_rmsnorm(hidden_states, residual,
weight, eps)` whenever FlashInfer imports (flashinfer_utils.IS_FLASHINFER_AVAILABLE), in place: it reads the hidden
state and the residual, writes the sum to the residual and the normed sum over the hidden state; SGLang's
layers/layernorm.py RMSNorm.forward_cuda likewise runs sgl_kernel's fused_add_rmsnorm. That kernel is
priced here as one norm op of two reads and two writes an element (and the weight row), one launch; the residual
op is dropped. The kernel's time is the per-class NORM model's (no measured table of it; at prompt sizes that
prices it above the add + norm pair it replaces, docs/accuracy.md session 73 K).

Pairs: a layer's attention residual with its post-attention norm; its MLP residual with the next layer's input norm,
i.e. the input norm of the same layer-op group (a group's ops stand for each of its layers): the first layer's input
norm (no residual before it) and the final norm (which takes the last residual) trade places, one kernel each, as
engine_kernels.allreduce_fused counts them. Where a TP all-reduce already adds and norms (allreduce_fused) no
residual op is left to pair. RMSNorm models only (the fused kernels are RMSNorm's)."""
from __future__ import annotations

from dataclasses import replace

from .ops import Op, OpClass, OpRole

# Each residual add's role and the role of the norm that takes its sum (1: the norm follows it, -1: the layer
# group's input norm, which stands for the next layer's).
NORM_AFTER_RESIDUAL = {OpRole.ATTN_RESIDUAL: (OpRole.POST_ATTN_NORM, 1), OpRole.MLP_RESIDUAL: (OpRole.INPUT_NORM, -1)}


def residual_norm_fused(ops, model) -> list[Op]:
    """The ops with each residual add folded into the RMSNorm that takes its sum (fused_add_norm); `model`'s norm
    must be RMSNorm, else the ops as they are."""
    if model is None or getattr(model, "norm", "rmsnorm") != "rmsnorm":
        return ops
    fused: dict[int, Op] = {}   # index of a norm op: its fused op
    dropped: set[int] = set()   # indexes of the residual adds folded in
    for i, op in enumerate(ops):
        pair = NORM_AFTER_RESIDUAL.get(op.role)
        if pair is None or op.op_class != OpClass.ELEMENTWISE:
            continue
        j = partner_norm(ops, i, *pair)
        if j is not None and j not in fused:
            fused[j] = fused_add_norm(op, ops[j])
            dropped.add(i)
    if not fused:
        return ops
    return [fused.get(i, op) for i, op in enumerate(ops) if i not in dropped]


def partner_norm(ops, i: int, role: OpRole, step: int) -> int | None:
    """The index of the nearest op of `role` from ops[i] in direction `step`, if it is a norm over the same
    elements, as many times (the same layer group); else None."""
    add = ops[i]
    j = i + step
    while 0 <= j < len(ops):
        op = ops[j]
        if op.role == role:
            same = (op.op_class == OpClass.NORM and op.count == add.count
                    and op.shape.elements == add.shape.elements)
            return j if same else None
        j += step
    return None


def fused_add_norm(add: Op, norm: Op) -> Op:
    """One kernel for `add` (reads the half's output and the residual, writes their sum) and `norm` (reads the
    sum, writes the normed output): it reads both inputs and writes both outputs, so the sum's re-read goes."""
    e = norm.shape.elements
    extra = 2.0 * e * add.hbm_bytes / (3.0 * e)   # (the add streams two inputs and one output of e elements)
    return replace(norm, flops=norm.flops + add.flops, bytes={**norm.bytes, "hbm": norm.hbm_bytes + extra},
                   formula=f"{norm.formula}; with the residual add before it in one kernel (fused_add_rmsnorm: "
                           f"+ the residual read and the sum written, {extra:g} B)")
