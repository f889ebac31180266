"""Whole-module prices where a fitted module model beats the sum of its kernels' models: the MLA attention
module of a decode pass (DeepSeek-V3 / R1, Kimi-K2: projections, latent cache write, absorbed attention), the DSA
module (DeepSeek-V3.2, GLM-5: the same plus the lightning indexer and its top-k) on vLLM, and the Gated DeltaNet
recurrence and short convolution of a decode pass (Qwen3-Next, Qwen3.5: kernel families gdn_recurrent_decode and
gdn_conv1d_decode, each op set to its fit) and of a prefill pass (gdn_chunk_prefill: FLA's chunked kernels with
their serial state pass, which the forward pass's one recurrence op priced at a tenth of the tables' time;
gdn_conv1d_prefill).

Its kernels are timed one by one (timing.py) and then scaled together to the time of the module fit
(kernel_models/mla_modules.py; the family of the engine's MLA decode kernel on the GPU's architecture,
mla_decode_kernel: mla_module_decode for TensorRT-LLM, mla_module_decode_<kernel> for vLLM and SGLang, in
data/modern_fit.yaml; the architecture's own fit where one was measured, else the pooled one), so the op
table keeps every kernel and their shares while the module costs what the fit says. Why: on aiconfigurator's MLA
generation-module tables (before the split by kernel) the fit's leave-one-GPU-out error is 28.9% MAPE (median
20.6%) against 148.9% (34.7%) for the kernels summed (docs/accuracy.md, benchmarks/accuracy_modern.py
--vs-kernels; the DSA and GDN figures there too). Left to the kernels: prefill and mixed passes, speculative
verify passes, DSA on SGLang and TensorRT-LLM, weight formats the fits have no data
for, engines without kernel fits, Efficiency.module_fits False.
"""
from __future__ import annotations

from dataclasses import replace
from functools import cache

from ..specs.op_kinds import OpRole
from .config import ForwardBatch
from .ops import graph_role

MLA_MODULE_ROLES = frozenset({OpRole.Q_PROJ, OpRole.KV_A_PROJ, OpRole.KV_WRITE, OpRole.ROPE, OpRole.Q_ABSORB,
                              OpRole.MLA_ATTENTION, OpRole.V_ABSORB, OpRole.O_PROJ})
DSA_MODULE_ROLES = MLA_MODULE_ROLES | {OpRole.SPARSE_INDEXER, OpRole.INDEXER_TOPK}
GEMM_FORMATS = {"": "bfloat16", "fp8": "fp8", "fp8-block": "fp8_block", "nvfp4": "nvfp4"}   # scheme -> fit's name
KV_FORMATS = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "fp8"}


def mla_decode_shape(batch: ForwardBatch, attention_dp: int) -> tuple[int, int] | None:
    """(sequences on one attention rank, their mean cached context) of a plain decode pass, else None."""
    if not batch.is_decode or any(q != 1 for q, _, _ in batch.groups):
        return None
    local = batch.split(attention_dp)
    rows = local.sequences
    return (rows, round(sum(c * n for _, c, n in local.groups) / rows)) if rows else None


def module_seconds(setup, batch: ForwardBatch) -> float | None:
    """Seconds of one layer's MLA module (DSA: with its indexer) in this pass by the module fit, or None where it
    does not apply."""
    model, prec, eff, par = setup.model, setup.precision, setup.efficiency, setup.parallel
    if model.mla is None or not _fits_apply(eff):
        return None
    family = "dsa_module_decode" if model.indexer is not None else "mla_module_decode"
    shape = mla_decode_shape(batch, par.attention_dp)
    # each projection at its own module class's format: a checkpoint may store o_proj apart (NVIDIA's FP4-V2:
    # q_a/q_b/kv_a/kv_b 16-bit, o_proj NVFP4), the module's kernels summed back to back (mla_modules.py)
    attn, out = prec.module("attention"), prec.module("attention_out")
    gemm, kv = GEMM_FORMATS.get(attn.quantization or ""), KV_FORMATS.get(prec.kv)
    out_gemm = GEMM_FORMATS.get(out.quantization or "")
    if shape is None or gemm is None or out_gemm is None or kv is None \
            or any(p.quantization == "" and p.weight != "bf16" for p in (attn, out)):
        return None
    from .kernel_models.mla_modules import (FORMATS, MlaDims, dsa_module_seconds, mla_decode_family,
                                            mla_decode_kernel, mla_module_seconds)
    from .kernel_models.params import ceilings
    c = ceilings(setup.system.gpu)
    if model.indexer is None:   # the engine's MLA decode kernel on this architecture has its own family
        family = mla_decode_family(mla_decode_kernel(eff.engine, c.arch, kv))
    if not _module_fit_applies(family, eff.engine):
        return None
    if any(FORMATS[g][1] not in c.peak for g in (gemm, out_gemm)):
        return None
    m, ix = model.mla, model.indexer
    index = (ix.heads, ix.head_dim, ix.top_k) if ix is not None else ()
    dims = MlaDims(model.hidden_size, m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim,
                   m.v_head_dim, *index)
    rows, context = shape
    price = dsa_module_seconds if ix is not None else mla_module_seconds
    return price("decode", rows, 1, context, model.num_heads // par.attention_tp, dims, c, eff.engine, gemm, kv,
                 out_gemm if out_gemm != gemm else None)


def _fits_apply(eff) -> bool:
    """Module fits price engines' kernels: not the per-class model, not ideal ceilings, not when turned off."""
    return eff.module_fits and eff.engine is not None and eff.source != "ideal"


# The module fits that price a decode pass, by the engines whose fit beats its kernels summed leave-one-GPU-out
# on the same rows (benchmarks/accuracy_modern.py --vs-kernels, docs/accuracy.md); DSA: vLLM's and TensorRT-LLM's
# (SGLang's kernels summed are closer than its module fit).
# None: every engine (one without its own fit takes another engine's, fitted_roofline.family_params).
MODULE_FAMILIES = {"mla_module_decode": None, "dsa_module_decode": ("vllm", "trtllm")}


def _module_fit_applies(family: str, engine: str) -> bool:
    kind = "mla_module_decode" if family.startswith("mla_module_decode") else family   # any MLA decode kernel's
    engines = MODULE_FAMILIES.get(kind, ())
    return family in _shipped_families() and (engines is None or engine in engines)


@cache
def _shipped_families() -> frozenset:
    """The families of the shipped fit table (asked once, not on every pass)."""
    from .kernel_models.fitted_roofline import fitted_families
    return frozenset(fitted_families())


def gdn_decode_seconds(setup, batch: ForwardBatch) -> dict | None:
    """{role: seconds of one layer's op} of a plain decode pass's Gated DeltaNet recurrence and short convolution
    by their kernel fits (gdn_recurrent_decode, gdn_conv1d_decode), or None where they do not apply. Both fits'
    leave-one-GPU-out errors beat the forward pass's kernels on the same rows (docs/accuracy.md)."""
    model, eff, par = setup.model, setup.efficiency, setup.parallel
    la = model.linear_attention
    # the tables' state is fp32; they time GDN's kernels, not KDA's (fused_recurrent_kda / chunk_kda): not mapped
    if la is None or model.mamba is not None or la.state_dtype != "fp32" or la.gate != "head" or not _fits_apply(eff):
        return None
    shape = mla_decode_shape(batch, par.attention_dp)
    if shape is None:
        return None
    from .kernel_models.linear_attention import gdn_seconds
    t = par.attention_tp
    args = (shape[0], 1, la.key_heads / t, la.value_heads / t, setup.system.gpu, eff.engine, la.key_head_dim,
            la.value_head_dim, la.conv_kernel)
    return {OpRole.LINEAR_ATTENTION: gdn_seconds("recurrent_decode", *args),
            OpRole.SHORT_CONV: gdn_seconds("conv1d_decode", *args)}


def gdn_prefill_seconds(setup, batch: ForwardBatch) -> dict | None:
    """{role: seconds of one layer's op} of a prefill pass's (no decode rows) Gated DeltaNet chunked kernel and
    causal conv by their fits (gdn_chunk_prefill, gdn_conv1d_prefill), or None where they do not apply. The
    sequences of one attention rank run as one varlen launch: priced as tokens / longest sequences of the longest
    one (its chunks set the serial state pass; the tokens the parallel work)."""
    model, eff, par = setup.model, setup.efficiency, setup.parallel
    la = model.linear_attention
    if la is None or model.mamba is not None or la.state_dtype != "fp32" or la.gate != "head" \
            or not _fits_apply(eff) or batch.verify or any(q < 2 for q, _, _ in batch.groups):
        return None
    local = batch.split(par.attention_dp)
    longest, tokens = max(q for q, _, _ in local.groups), local.tokens
    from .kernel_models.linear_attention import gdn_seconds
    t = par.attention_tp
    args = (la.key_heads / t, la.value_heads / t, setup.system.gpu, eff.engine, la.key_head_dim, la.value_head_dim,
            la.conv_kernel)
    return {OpRole.LINEAR_ATTENTION: gdn_seconds("chunk_prefill", tokens / longest, longest, *args),
            OpRole.SHORT_CONV: gdn_seconds("conv1d_prefill", local.sequences, tokens / local.sequences, *args)}


# The engines whose encoder-attention fit (kernel family encoder_attention) prices a vision tower's attention: its
# leave-one-GPU-out error beats the prefill-attention kernel model on the same table rows (docs/accuracy.md,
# session 53: TRT-LLM 22.6 vs 29.2%, vLLM 22.3 vs 30.2%; SGLang's 27.1 loses to 22.7% on B200 + H100).
ENCODER_FIT_ENGINES = ("vllm", "trtllm")
FITTED_ATTENTION = "vision_attention_fitted"   # the vision-attention op name (visual_tokens.py) the encoder fit prices


def vision_attention_seconds(setup, op) -> float | None:
    """Seconds of one layer's vision-tower attention (techniques/visual_tokens.py with attention_fit on: its images
    as sequences of max_context patches) by the encoder attention fit, or None where it does not apply. Off by
    default (vision_encoder:attention_fit=true): no serving row checks a vision tower."""
    eff = setup.efficiency
    if op.name != FITTED_ATTENTION or not _fits_apply(eff) or eff.engine not in ENCODER_FIT_ENGINES:
        return None
    s = op.shape
    if s.sequences <= 0 or s.max_context <= 0 or s.d_qk != int(s.d_qk):
        return None
    from .kernel_models.encoder_attention import encoder_attention_seconds
    return encoder_attention_seconds(s.sequences, int(s.max_context), s.heads, int(s.d_qk), setup.system.gpu,
                                     eff.engine)


def priced_modules(times: tuple, setup, batch: ForwardBatch) -> tuple[tuple, dict[int, float]]:
    """(`times` (one stage's OpTimes) with the MLA module's kernels scaled to the module fit, a decode pass's
    Gated DeltaNet kernels set to their fits and a vision tower's attention to its encoder fit, where they apply
    (none when the efficiency turns module fits off); {id(op): inter-kernel gaps per kernel} for the ops whose
    time a module fit set (module_gap_shares), {} elsewhere: every other kernel pays one gap)."""
    if not setup.efficiency.module_fits:
        return times, {}
    if any(t.op.name.startswith("vision_attention") for t in times):
        fitted = [vision_attention_seconds(setup, t.op) for t in times]
        times = tuple(_scaled(t, f / t.time_s, "to its encoder attention fit") if f and t.time_s > 0 else t
                      for t, f in zip(times, fitted))
    gdn = gdn_decode_seconds(setup, batch) or gdn_prefill_seconds(setup, batch)
    if gdn is not None:
        times = tuple(_scaled(t, gdn[graph_role(t.op)] / t.time_s, "its GDN kernel fit")
                      if graph_role(t.op) in gdn and t.time_s > 0 else t for t in times)
    fit_s = module_seconds(setup, batch)
    if fit_s is None:
        return times, {}
    roles = DSA_MODULE_ROLES if setup.model.indexer is not None else MLA_MODULE_ROLES
    mine = [t for t in times if _in_module(t.op, roles)]
    per_layer: dict[int, float] = {}
    for t in mine:   # layers of the same count run the same module (one instance each)
        per_layer[t.op.count] = per_layer.get(t.op.count, 0.0) + t.time_s
    if not mine or min(per_layer.values()) <= 0:
        return times, {}
    scale = {c: fit_s / s for c, s in per_layer.items()}
    if setup.model.indexer is not None and setup.model.indexer.topk_freq > 1:
        scale = _index_share_scales(mine, scale)
        if not scale:
            return times, {}
    times = tuple(_scaled(t, scale[t.op.count], "with its attention module to the module fit")
                  if _in_module(t.op, roles) else t for t in times)
    return times, module_gap_shares([t for t in times if _in_module(t.op, roles)])


def _in_module(op, roles) -> bool:
    """An op of the MLA / DSA module: its role, and not a recurrent layer's (Kimi-Linear's KDA layers sit between its
    MLA layers; their output projection shares o_proj's role but runs no MLA module: recurrent.recurrent_block)."""
    return graph_role(op) in roles and not op.name.startswith("mixer_")


def _index_share_scales(mine: list, scale: dict[int, float]) -> dict[int, float]:
    """{count: factor} under GLM-5.2's IndexShare: the DSA module fit times a module with its indexer, so the layer
    groups that run one (a sparse_indexer op of their count) take the fit, and a group reusing their top-k takes the
    fit less that indexer's kernels as whatif prices them (assumed: no table times the module without its indexer;
    its own kernels summed where that leaves less). {} where two groups share a count (their ops indistinguishable
    here) or no group runs an indexer."""
    attention = [t.op.count for t in mine if graph_role(t.op) == OpRole.MLA_ATTENTION]
    owners = {t.op.count for t in mine if graph_role(t.op) == OpRole.SPARSE_INDEXER}
    if len(set(attention)) < len(attention) or not owners:
        return {}
    owner = min(owners)
    fit_s = scale[owner] * sum(t.time_s for t in mine if t.op.count == owner)
    indexer_s = sum(t.time_s for t in mine if t.op.count == owner and t.op.name.startswith("indexer_"))
    out = {}
    for c, k in scale.items():
        if c in owners:
            out[c] = k
            continue
        summed = sum(t.time_s for t in mine if t.op.count == c)
        out[c] = max(fit_s - indexer_s, summed) / summed
    return out


def module_gap_shares(module: list) -> dict[int, float]:
    """{id(op): gaps per kernel} of a module priced whole by its fit: one gap per module instance (between it and
    the next op), shared by its kernels, as its fit's time already holds the gaps between them. Why: aiconfigurator
    timed each MLA / DSA decode module as a CUDA graph of one module call replayed back to back, CUDA events around
    the replays (collector/helper.py benchmark_with_power, called by collector/{trtllm,vllm}/collect_mla_module.py
    and collector/sglang/collect_wideep_attn.py), so the table's time is the module's kernels and their gaps."""
    kernels: dict[int, int] = {}
    for t in module:   # layers of the same count run the same module: its kernels are its ops of that count
        kernels[t.op.count] = kernels.get(t.op.count, 0) + 1
    return {id(t.op): 1.0 / kernels[t.op.count] for t in module}


def _scaled(t, k: float, why: str):
    op = replace(t.op, formula=t.op.formula + f"; scaled x{k:.2f} {why} (module_fits.py)")
    return replace(t, op=op, time_s=t.time_s * k, compute_s=t.compute_s * k, memory_s=t.memory_s * k,
                   overhead_s=t.overhead_s * k)
