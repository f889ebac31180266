"""Whole-module prices where a fitted module model beats the sum of its kernels' models: the MLA attention
module of a decode pass (DeepSeek-V3 / R1, Kimi-K2: projections, latent cache write, absorbed attention).

Its kernels are timed one by one (timing.py) and then scaled together to the time of the module fit
(kernel_models/mla_modules.py, family mla_module_decode of data/modern_fit.yaml, the GPU architecture's own fit
where one was measured, else the pooled one), so the op table keeps every kernel and their shares while the
module costs what the fit says. Why: on aiconfigurator's MLA generation-module tables the fit's
leave-one-GPU-out error is 28.9% MAPE (median 20.6%) against 148.9% (34.7%) for the kernels summed
(docs/accuracy.md, benchmarks/accuracy_modern.py --vs-kernels). Left to the kernels: prefill and mixed passes,
speculative verify passes, DSA (an indexer), weight formats the fit has no data for, engines without kernel fits.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from functools import cache

from ..specs.op_kinds import OpRole
from .config import ForwardBatch
from .ops import graph_role

MLA_MODULE_ROLES = frozenset({OpRole.Q_PROJ, OpRole.KV_A_PROJ, OpRole.KV_WRITE, OpRole.ROPE, OpRole.Q_ABSORB,
                              OpRole.MLA_ATTENTION, OpRole.V_ABSORB, OpRole.O_PROJ})
GEMM_FORMATS = {"": "bfloat16", "fp8": "fp8", "fp8-block": "fp8_block", "nvfp4": "nvfp4"}   # scheme -> fit's name
KV_FORMATS = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8"}


_KERNELS_ONLY = [False]


@contextmanager
def kernels_only():
    """Within it every module is priced as its kernels summed (the comparison column of accuracy_modern.py)."""
    _KERNELS_ONLY[0] = True
    try:
        yield
    finally:
        _KERNELS_ONLY[0] = False


def mla_decode_shape(batch: ForwardBatch, attention_dp: int) -> tuple[int, int] | None:
    """(sequences on one attention rank, their mean cached context) of a plain decode pass, else None."""
    if not batch.is_decode or any(q != 1 for q, _, _ in batch.groups):
        return None
    local = batch.split(attention_dp)
    rows = local.sequences
    return (rows, round(sum(c * n for _, c, n in local.groups) / rows)) if rows else None


def module_seconds(setup, batch: ForwardBatch) -> float | None:
    """Seconds of one layer's MLA module in this pass by the module fit, or None where it does not apply."""
    model, prec, eff, par = setup.model, setup.precision, setup.efficiency, setup.parallel
    if model.mla is None or model.indexer is not None or eff.engine is None or eff.source == "ideal" or \
            _KERNELS_ONLY[0]:
        return None
    shape = mla_decode_shape(batch, par.attention_dp)
    attn = prec.module("attention")
    gemm, kv = GEMM_FORMATS.get(attn.quantization or ""), KV_FORMATS.get(prec.kv)
    if shape is None or gemm is None or kv is None or (attn.quantization == "" and attn.weight != "bf16"):
        return None
    from .kernel_models.mla_modules import FORMATS, MlaDims, mla_module_seconds
    from .kernel_models.params import ceilings
    if not _decode_fit_shipped():
        return None
    c = ceilings(setup.system.gpu)
    if FORMATS[gemm][1] not in c.peak:
        return None
    m = model.mla
    dims = MlaDims(model.hidden_size, m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim,
                   m.v_head_dim)
    rows, context = shape
    return mla_module_seconds("decode", rows, 1, context, model.num_heads // par.attention_tp, dims, c,
                              eff.engine, gemm, kv)


@cache
def _decode_fit_shipped() -> bool:
    """Whether the shipped fit table has the MLA decode module (asked once, not on every pass)."""
    from .kernel_models.fitted_roofline import fitted_families
    return "mla_module_decode" in fitted_families()


def priced_modules(times: tuple, setup, batch: ForwardBatch) -> tuple:
    """`times` (one stage's OpTimes) with the MLA module's kernels scaled to the module fit, where it applies."""
    fit_s = module_seconds(setup, batch)
    if fit_s is None:
        return times
    mine = [t for t in times if graph_role(t.op) in MLA_MODULE_ROLES]
    per_layer: dict[int, float] = {}
    for t in mine:   # layers of the same count run the same module (one instance each)
        per_layer[t.op.count] = per_layer.get(t.op.count, 0.0) + t.time_s
    if not mine or min(per_layer.values()) <= 0:
        return times
    return tuple(_scaled(t, fit_s / per_layer[t.op.count]) if graph_role(t.op) in MLA_MODULE_ROLES else t
                 for t in times)


def _scaled(t, k: float):
    op = replace(t.op, formula=t.op.formula + f"; scaled x{k:.2f} with its MLA module to the module fit "
                                               "(module_fits.py)")
    return replace(t, op=op, time_s=t.time_s * k, compute_s=t.compute_s * k, memory_s=t.memory_s * k,
                   overhead_s=t.overhead_s * k)
