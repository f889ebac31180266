"""The kernel models (roofline/kernel_models) fitted on measurement-table rows: a user's own `whatif validate
run` table, the corpus as a table (validate/corpus_rows.py), or both.

A row's roofline op (Row.op) is mapped onto its kernel model exactly as the prediction path maps a pass's op
(roofline/kernel_timing.py): a GEMM by its (m, n, k) and dtype; a prefill attention op by its sequences and
the causal length whose pairs equal the op's; a decode op by its sequences and longest context; the fit key
is the GEMM's dtype or the attention op's KV format (kv_fit_dtype). Rows no kernel model covers (other op
classes, grouped GEMMs, attention without head counts) are left out. The search is kernel_fit.fit's.
"""
from __future__ import annotations

import math

import numpy as np

from ..roofline.kernel_models.params import DTYPE_BYTES, ceilings, fit_dtype
from ..roofline.kernel_timing import covers, kv_fit_dtype
from ..specs.op_kinds import OpClass
from ..specs.hardware import load_component
from .kernel_fit import ceiling_columns, fit
from .table import Row

MODEL_OF_CLASS = {OpClass.GEMM: "gemm", OpClass.ATTENTION_PREFILL: "prefill_attention",
                  OpClass.ATTENTION_DECODE: "decode_attention"}
MIN_KERNEL_ROWS = 20   # fewest rows an op x dtype is fitted on: the models have 6 to 12 parameters


def model_key(op, gpu) -> tuple[str, str] | None:
    """(kernel model, fit dtype) of an op, or None when no kernel model covers it on `gpu` (grouped expert
    GEMMs are the fused-MoE model's, not the GEMM model's)."""
    model = MODEL_OF_CLASS.get(op.op_class)
    if model is None or not covers(op, gpu) or (model == "gemm" and op.shape.groups != 1.0):
        return None
    dtype = op.dtype if model == "gemm" else kv_fit_dtype(op)
    return model, fit_dtype(dtype)   # keyed as the shipped fits are


def design_from_rows(model: str, ops: list, gpus: list, measured) -> dict:
    """kernel_fit's design columns (the model's arguments, one per row, and the measured seconds)."""
    per_row = [ceilings(g) for g in gpus]
    y = np.asarray(measured, dtype=float)
    if model == "gemm":
        peak, c = ceiling_columns(per_row, [op.dtype for op in ops])
        m, n, k = (np.array([getattr(op.shape, f) for op in ops], dtype=float) for f in ("m", "n", "k"))
        return {"args": (m, n, k, np.array([DTYPE_BYTES[op.dtype] for op in ops]), peak, c), "y": y}
    # prefill computes in the op's dtype; decode's GQA term is priced at the bf16 peak, as the corpus fit
    peak, c = ceiling_columns(per_row, [op.dtype for op in ops] if model == "prefill_attention" else "bf16")
    s = [op.shape for op in ops]
    b = np.array([x.sequences for x in s], dtype=float)
    if model == "prefill_attention":
        length = np.array([(math.sqrt(1.0 + 8.0 * x.pairs / x.sequences) - 1.0) / 2.0 for x in s])
    else:
        length = np.array([max(x.max_context, 1.0) for x in s])
    heads, kv_heads, d, kv = (np.array([getattr(x, f) for x in s], dtype=float)
                              for f in ("heads", "kv_heads", "d_qk", "kv_element_bytes"))
    return {"args": (b, length, heads, kv_heads, d, kv, 0.0, peak, c), "y": y}


def fit_rows(rows: list[Row], min_rows: int = MIN_KERNEL_ROWS) -> dict[tuple[str, str], tuple[object, int, float]]:
    """(kernel model, dtype) -> (fitted params, rows, mean |log error|) over the timed rows a kernel model
    covers; an op x dtype with fewer than `min_rows` rows is not fitted."""
    gpus = {name: load_component(name, "gpu") for name in {r.gpu for r in rows}}
    groups: dict[tuple[str, str], list] = {}
    for r in rows:
        if not r.ok:
            continue
        op, gpu = r.op(), gpus[r.gpu]
        key = model_key(op, gpu)
        if key is not None:
            groups.setdefault(key, []).append((op, gpu, r.measured_s))
    out = {}
    for (model, dtype), items in sorted(groups.items()):
        if len(items) < min_rows:
            continue
        ops, gs, y = zip(*items)
        params, err = fit(model, design_from_rows(model, list(ops), list(gs), y), dtype)
        out[(model, dtype)] = (params, len(items), err)
    return out
