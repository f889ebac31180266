"""Fit the fused-MoE model (roofline/kernel_models/moe.py) to the corpus's moe table, per engine.

A GPU's prediction is its datasheet peak (dtype) and HBM bandwidth times dimensionless efficiencies,
plus a floor in seconds, so leave-one-GPU-out (each corpus GPU is its own architecture) fits one
pooled parameter set on the other GPUs and predicts the one left out. Rows: one engine's fused-MoE rows
of one dtype (FITS: which corpus dtype stands for each whatif dtype), the kernel with the most rows per
GPU. Each engine's blocks are fitted on its own kernels only; an engine without rows of a dtype on an
architecture has no block there (kernel_models/moe.moe_params says what prices it instead).
Least squares on log(predicted / measured) with collective_fit's numpy Levenberg-Marquardt.
Long because: the rows' routing, alignment and regime plumbing sit with the fit that reads them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..roofline.expert_fits import aligned, fit_alignment
from ..roofline.kernel_models.fitted_roofline import RooflineParams
from ..roofline.kernel_models import linear_attention
from ..roofline.kernel_models.sglang_moe_configs import sglang_fit_row_tile
from ..roofline.kernel_models.triton_moe_tile import fit_rows_block_m
from ..roofline.kernel_models.moe import (FINALIZE_FITS, SMALL_M, TILE_M_CAP, TILE_N, UNCAPPED, finalize_seconds,
                                          launched_tiles, moe_gemm_ideal_times, moe_ideal_times, moe_time,
                                          routing_stats, split_moe_time)
from ..specs import precompiled
from .collective_fit import _eff, _logit, levenberg_marquardt
from .corpus import corpus_gpu

# corpus dtype -> (weight bytes, activation bytes, whatif dtype = the tensor-core dtype it runs at): NVFP4 is 4 bits
# plus an fp8 scale per 16 elements; fp8_block a 4-byte scale per 128x128 weights and per 128 activations;
# w4a8_mxfp4_mxfp8 MXFP4 weights (an E8M0 scale per 32) on fp8 tensor cores with MXFP8 activations.
DTYPE_BYTES = {"bfloat16": (2.0, 2.0, "bf16"), "fp8": (1.0, 1.0, "fp8"), "nvfp4": (0.5625, 0.5625, "fp4"),
               "fp8_block": (1.0 + 4.0 / (128 * 128), 1.0 + 4.0 / 128, "fp8"),
               "w4a8_mxfp4_mxfp8": (0.53125, 1.03125, "fp8"),
               "int4_wo": (0.5 + 2.0 / 32, 2.0, "w4a16"),   # INT4 weights, a 16-bit scale per group of 32
               "w4a16_mxfp4": (0.5 + 1.0 / 32, 2.0, "mxfp4")}   # MXFP4 weights (an E8M0 scale per 32), 16-bit math
# whatif dtype -> the tensor-core peak it runs at, where they differ (weight-only: 16-bit math over dequantized weights)
PEAK_DTYPE = {"w4a16": "bf16", "mxfp4": "bf16"}
# (engine, whatif dtype) -> (corpus dtypes, first present per GPU wins; the GPUs fitted, None: all).
# vLLM's quantized blocks are Blackwell's only: its H100 fp8 rows are ModelOpt's FlashInfer-CUTLASS path, 2.5-3x
# slower than bf16 at every shape, and L40S's are Triton's; deployments of the block-FP8 checkpoints run other
# kernels there (assumed), so those rows would teach a fit the wrong kernel (leave-one-GPU-out: 64-222%).
# SGLang and TensorRT-LLM fp8 on B200: their block-FP8 kernel where measured (the MoE checkpoints of the serving
# set, DeepSeek/GLM FP8, are 128x128 block-scaled); TensorRT-LLM's only B200 rows are its MXFP4 x MXFP8 kernel, the
# fp8-tensor-core MoE it runs there, at two shapes only: too narrow to price other models' shapes and formats, so
# TensorRT-LLM's quantized experts on B200 stay per-class (a fit on them took its DeepSeek/gpt-oss TPOT 17.8 -> 22.4%).
# Their Hopper/Ada fp8 rows are not fitted either:
# SGLang's and TensorRT-LLM's own Hopper block-FP8 fits moved Qwen3-235B fp8-block on H100 (TensorRT-LLM) 9.3% ->
# 17.9% / 27.7% TPOT and reversed MTP's gain ordering on DeepSeek-V3 (H200): quantized experts there stay per-class.
# vLLM's w4a16: its Marlin MoE rows (compressed-tensors WNA16, INT4 group 32: the kernel vLLM runs INT4 and, on
# Hopper, MXFP4 experts with), one shape only (Kimi-K2.5's 7168 x 2048, 384 experts, top 8) on every GPU, so other
# models' weight-only experts are priced by a fit of that shape (expert_fits.moe_fit_dtype).
# mxfp4 (session 53): TensorRT-LLM's w4a16_mxfp4 rows, the MXFP4 MoE it runs gpt-oss's checkpoint with on H100 (one
# GPU: no leave-one-out figure; gpt-oss-120b's and -20b's 2880 x 2880 shapes, 128 / 32 experts, top 4, moe_tp 1),
# priced at the bf16 peak over the 4.25-bit weights (expert_fits.moe_fit_dtype). vLLM's and SGLang's MXFP4 rows
# (OAI Triton / FlashInfer TRTLLM-Gen / Marlin) are not fitted: one small-M floor over their EP and TP rows prices
# the TP-sharded decode rows ~1.5x high (TP8, 4 tokens: 64 us against 43 measured) and took the gpt-oss vLLM H100
# serving rows' TPOT 15.9% -> 27.7%; their MXFP4 experts keep the 16-bit fit.
# flashinfer_cutlass (session 54): the CUTLASS fused MoE (TensorRT-LLM's, which FlashInfer ports as cutlass_fused_moe)
# that vLLM runs 128x128 block-FP8 experts with on Hopper under expert parallelism (oracle/fp8.py: "On Hopper for Block
# Fp8, prefer Triton for TP and FI CUTLASS for EP", vllm#34249), fitted on TensorRT-LLM's H100 fp8_block rows of
# that kernel (moe_torch_flow_cutlass; one GPU: no leave-one-out figure). Its own block: TensorRT-LLM's Hopper fp8
# experts stay per-class (above); only expert_fits.BLOCK_FP8_MOE_ENGINE's vLLM Hopper EP experts take it.
FITS = {("vllm", "bf16"): (("bfloat16",), None), ("vllm", "fp8"): (("fp8",), ("b200_sxm",)),
        ("vllm", "fp4"): (("nvfp4",), ("b200_sxm",)),
        ("vllm", "w4a16"): (("int4_wo",), None),
        ("trtllm", "mxfp4"): (("w4a16_mxfp4",), None),
        ("sglang", "bf16"): (("bfloat16",), None), ("sglang", "fp8"): (("fp8_block",), ("b200_sxm",)),
        ("sglang", "fp4"): (("nvfp4",), ("b200_sxm",)),
        ("trtllm", "bf16"): (("bfloat16",), None),
        ("flashinfer_cutlass", "fp8"): (("fp8_block",), ("h100_sxm",)),
        ("trtllm_gen_mxfp8", "fp4"): (("w4a8_mxfp4_mxfp8",), ("b200_sxm",)),
        ("fused_moe_triton", "fp8"): (("fp8_block",), ("h100_sxm", "b200_sxm"))}
# trtllm_gen_mxfp8 (session 61): the TRTLLM-Gen MoE over MXFP4 weights x MXFP8 activations (moe_kernels
# trtllm-gen-mxfp8, gpt-oss's B200 experts), fitted on SGLang's B200 rows of it (sglang_flashinfer_trtllm_moe
# w4a8_mxfp4_mxfp8: gpt-oss-120b/-20b's 2880 x 2880 and a 3584 x 3072, 896-expert shape; the only GPU measured, so no
# leave-one-out figure), at the fp8 peak; keyed fp4 because the experts it prices are the rule's nvfp4 stand-in.
# fused_moe_triton (session 72 B2): the Triton fused-MoE kernel over 128x128 block-FP8 weights (fused_moe_kernel with
# block scales: vLLM's TritonExperts, which SGLang's fused_moe_triton adapts), the experts vLLM runs where its fp8 MoE
# oracle is left no other backend (moe_kernels `triton`), fitted on SGLang 0.5.14's sglang_fused_moe_triton fp8_block
# rows, H100 and B200 (vLLM's corpus rows time no Triton block-FP8 MoE: its L40S Triton rows are per-tensor fp8), so
# leave-one-GPU-out scores each GPU on the other's fit. Its own block: no engine's default experts take it.
# fit name -> the corpus framework whose rows measured its kernel (default: the fit's own name)
ROWS_FRAMEWORK = {"flashinfer_cutlass": "trtllm", "trtllm_gen_mxfp8": "sglang", "fused_moe_triton": "sglang"}
# fit name -> the kernel_source its rows are, where not the framework's most-measured kernel on each GPU (on B200
# SGLang's fp8_block rows are mostly FlashInfer's TRTLLM-Gen MoE)
ROWS_KERNEL = {"fused_moe_triton": "sglang_fused_moe_triton"}


def fit_rows(frame, engine: str, dtype: str):
    """The rows FITS names for (engine, whatif dtype): per GPU, the first corpus dtype it has."""
    import pandas as pd
    corpus_dtypes, gpus = FITS[(engine, dtype)]
    mine = frame[(frame["framework"] == ROWS_FRAMEWORK.get(engine, engine)) & frame["moe_dtype"].isin(corpus_dtypes)]
    parts = []
    for gpu in sorted(set(mine["gpu"]) if gpus is None else set(gpus) & set(mine["gpu"])):
        have = set(mine.loc[mine["gpu"] == gpu, "moe_dtype"])
        parts.append(moe_rows(frame, next(d for d in corpus_dtypes if d in have), engine, (gpu,)))
    return pd.concat(parts, ignore_index=True) if parts else moe_rows(frame, corpus_dtypes[0], engine, ())


# (hidden, experts, topk) -> (n_group, topk_group) of the model a corpus shape is (its config.json): DeepSeek-V3/R1's
# noaux_tc routing. The collectors of SGLang 0.5.14 and vLLM 0.24.0 route their synthetic logits through the model's
# grouped top-k (SGLang's collect_moe.py for 0.5.14: TopK(use_grouped_topk=..., num_expert_group, topk_group)): their
# DeepSeek rows do not move from EP 1 to EP 2 (B200 and H100). TensorRT-LLM's, SGLang 0.5.10's and vLLM 0.14's
# route plain top-k (their DeepSeek power-law rows halve). kernel_models/moe.grouped_selections.
COLLECTOR_GROUPS = {(7168, 256, 8): (8, 4)}
GROUPED_COLLECTORS = (("sglang", "0.5.14"), ("vllm", "0.24.0"))


def collector_groups(framework: str, version: str, hidden: int, experts: int,
                     topk: int) -> tuple[int, int] | None:
    """The grouped top-k a corpus row's collector routed through (None: plain top-k)."""
    if (framework, str(version)) not in GROUPED_COLLECTORS:
        return None
    return COLLECTOR_GROUPS.get((int(hidden), int(experts), int(topk)))


# The tables an older collector drew (session 64 N): its power law neither capped an expert at T tokens nor spread
# the rounding's shortfall over the EP ranks, so at T*topk <= E every assignment sat on experts 0.. of rank 0
# (helper.py before _round_robin_adjust_per_rank). Their EP scan says so: at 1 token and E/ep >= 2*topk their power-law
# rows take the EP-1 time (median x1.02 / x1.01); every other table's fall with EP (x0.13-0.77 by kernel).
UNCAPPED_COLLECTORS = (("vllm", "0.14.0"), ("trtllm", "1.0.0"))


def collector_distribution(framework: str, version: str, distribution: str) -> str:
    """A corpus row's routing as its collector drew it: power_law_<alpha>_uncapped for UNCAPPED_COLLECTORS."""
    plain = distribution.startswith("power_law_") and not distribution.endswith(("_eplb", UNCAPPED))
    return distribution + UNCAPPED if plain and (framework, str(version)) in UNCAPPED_COLLECTORS else distribution


SMOOTH_MAX = 20.0       # bound on the fitted ridge exponent (as the modern op fits')
MIN_REGIME_ROWS = 200   # fewest rows a regime is fitted on alone (5 parameters)


def moe_rows(frame, dtype: str = "bfloat16", engine: str = "vllm", gpus=None):
    """One engine's rows of one corpus dtype (on `gpus`, None: all), the most-measured kernel per GPU, with
    ideal times attached."""
    rows = frame[(frame["framework"] == ROWS_FRAMEWORK.get(engine, engine)) & (frame["moe_dtype"] == dtype)]
    if engine in ROWS_KERNEL:
        rows = rows[rows["kernel_source"] == ROWS_KERNEL[engine]]
    if gpus is not None:
        rows = rows[rows["gpu"].isin(gpus)]
    rows = rows.assign(distribution=[collector_distribution(f, v, d) for f, v, d in
                                     zip(rows["framework"], rows["version"], rows["distribution"])])
    main = rows.groupby(["gpu", "kernel_source"]).size().reset_index().sort_values(0).groupby("gpu").tail(1)
    rows = rows.merge(main[["gpu", "kernel_source"]], on=["gpu", "kernel_source"])
    w_bytes, a_bytes, peak_key = DTYPE_BYTES[dtype]
    align = fit_alignment(engine, peak_key)   # (expert_fits: the TRTLLM-Gen MXFP4 layout's 256, session 62)
    t_c, t_m, t_l2, tiles, gemms, fin = [], [], [], [], [], []
    split = (engine, peak_key) in FINALIZE_FITS
    for gpu, group in rows.groupby("gpu", sort=False):
        g = corpus_gpu(gpu)
        peak, hbm, l2 = g.peak_flops(PEAK_DTYPE.get(peak_key, peak_key)), g.hbm_bandwidth.value, g.l2_size.value
        rate = sm_l2_rate(g) if (engine, peak_key) in SM_RATE_L2_FITS else None
        for r in group.itertuples():
            # the kernel's own shape: hidden and per-GPU intermediate sizes padded as its weights are laid out
            hidden, inter_l = aligned(r.hidden_size, align), aligned(r.inter_size / r.moe_tp_size, align)
            tile, tile_n = fit_row_tile(r, gpu, dtype)   # the tiles the row's kernel ran (0: tile_m's)
            grid = launched_tiles(r.num_tokens, r.topk, r.num_experts, hidden, inter_l, tile=tile, tile_n=tile_n)
            tiles.append(grid / g.sm_count.value if grid_launched(r.kernel_source, dtype) else 0.0)
            c, m, cached = moe_ideal_times(r.num_tokens, hidden, inter_l * r.moe_tp_size, r.topk, r.num_experts,
                                           r.moe_tp_size, r.moe_ep_size, r.distribution, peak, hbm,
                                           w_bytes, a_bytes, l2, _groups(r), rate, tile)
            t_c.append(c)
            t_m.append(m)
            t_l2.append(cached)
            if split:   # the serving form: each grouped GEMM its own ridge, the finalize pass (large-M regime only)
                gemms.append(moe_gemm_ideal_times(r.num_tokens, hidden, inter_l * r.moe_tp_size, r.topk,
                                                  r.num_experts, r.moe_tp_size, r.moe_ep_size, r.distribution, peak,
                                                  hbm, w_bytes, a_bytes, l2, _groups(r), rate, tile))
                local = routing_stats(int(r.num_tokens), int(r.topk), int(r.num_experts), int(r.moe_ep_size),
                                      r.distribution, _groups(r))[2]
                fin.append(finalize_seconds(local, hidden, hbm, engine, peak_key)
                           if _rows_per_expert(r) > SMALL_M else 0.0)
    order = np.concatenate([g.index.to_numpy() for _, g in rows.groupby("gpu", sort=False)])
    out = rows.loc[order].reset_index(drop=True)
    out["t_c"], out["t_m"], out["t_l2"], out["tiles_per_sm"] = t_c, t_m, t_l2, tiles
    out["touched"] = [routing_stats(int(r.num_tokens), int(r.topk), int(r.num_experts), int(r.moe_ep_size),
                                    r.distribution, _groups(r))[0] for r in out.itertuples()]
    out["rows_per_expert"] = [_rows_per_expert(r) for r in out.itertuples()]
    if split:
        for g, name in enumerate(("up", "down")):
            for i, part in enumerate(("t_c", "t_m", "t_l2")):
                out[f"{part}_{name}"] = [row[g][i] for row in gemms]
        out["t_fin"] = fin
    return out


# Fits whose L2-resident rows are read at the SMs' own L2 rate (SMs x clock x linear_attention.L2_BYTES_PER_SM_CLOCK,
# the fit's l2_speedup a multiple of it), not at a multiple of HBM: the rate follows the GPU where an HBM multiple does
# not (L40S: GDDR6 at 864 GB/s under a 96 MB L2; the GDN fits' precedent). Session 64 G: L40S read x1.5-1.6 high
# left out (a pooled HBM multiple from HBM GPUs); fits with rows on several GPUs, where leave-one-GPU-out shows it.
SM_RATE_L2_FITS = frozenset({("vllm", "bf16"), ("sglang", "bf16")})


def sm_l2_rate(g) -> float:
    """A corpus GPU's L2 rate at efficiency 1 (linear_attention.sm_l2_rate: SMs x clock x 4 B)."""
    return linear_attention.sm_l2_rate(g.sm_count.value, g.boost_clock.value)



def fit_row_tile(r, gpu: str, dtype: str) -> tuple[int, int]:
    """(M tile, N tile) a corpus row's kernel ran: for a kernel with a fixed default tile (triton_moe_tile.
    FIT_ROWS_BLOCK_M), SGLang's shipped tuned config where one names the row's shape, else that default
    (sglang_moe_configs.py, session 73 E); other kernels (0, TILE_N): tile_m's M tile."""
    if not fit_rows_block_m(r.kernel_source, dtype):
        return 0, TILE_N
    return sglang_fit_row_tile(gpu, r.num_experts // r.moe_ep_size, r.inter_size // r.moe_tp_size, r.num_tokens)


def _groups(r) -> tuple[int, int] | None:
    return collector_groups(r.framework, r.version, r.hidden_size, r.num_experts, r.topk)


def _rows_per_expert(r) -> float:
    touched, _, assigned = routing_stats(int(r.num_tokens), int(r.topk), int(r.num_experts), int(r.moe_ep_size),
                                         r.distribution, _groups(r))
    return assigned / max(touched, 1.0)


def grid_launched(kernel_source: str, dtype: str = "") -> bool:
    """Whether the kernel's work walks a grid over every routed slot, padded per expert (kernel_models/
    moe.launched_tiles), so a cost per tile is fitted: trtllm-gen's fused MoE (FlashInfer's / TensorRT-LLM's runner:
    getMaxNumCtasInBatchDim M tiles over every slot) and vLLM's Marlin MoE (fused_marlin_moe.py aligns the slots with
    moe_align_block_size, each expert's padded to the M block, and moe_wna16_marlin_gemm walks all
    num_tokens_post_padded of them; fitting the tile cost took its small-M rows from 30% to 18% MAPE in-sample on
    B200 and H100). The Triton fused_moe kernel grids over the padded slots too (moe_align_block_size, then a grid of
    cdiv(EM, BLOCK_SIZE_M) x cdiv(N, BLOCK_SIZE_N)); its block-FP8 rows (GRID_TILE_ROWS, session 72 B2) are fitted with
    the tile cost: in-sample MAPE by token band (two regimes) 13-33% -> 10-30% (B200), 11-31% -> 8-29% (H100). Its
    bf16 rows, under the sglang/vllm bf16 blocks, fit none, as before."""
    return "trtllm" in kernel_source or "marlin" in kernel_source or (kernel_source, dtype) in GRID_TILE_ROWS


GRID_TILE_ROWS = frozenset({("sglang_fused_moe_triton", "fp8_block")})   # (kernel_source, corpus dtype)


def to_params(v) -> RooflineParams:
    # the ridge exponent is capped (a regime where one term never binds sends it to infinity); no v[5]: no tile cost;
    # no v[6]: no cost per touched expert
    return RooflineParams(float(np.exp(v[0])), float(_eff(v[1])), float(_eff(v[2])),
                          float(min(1.0 + np.exp(min(v[3], 50.0)), SMOOTH_MAX)),
                          item_s=float(np.exp(min(v[5], 0.0))) if len(v) > 5 else 0.0,
                          l2_speedup=float(1.0 + np.exp(min(v[4], 50.0))),
                          expert_s=float(np.exp(min(v[6], 0.0))) if len(v) > 6 else 0.0)


# Kernels (kernel_source, corpus dtype) whose small-M regime is fitted with a cost per touched expert whatever its
# slice (session 69 N): the TRTLLM-Gen MXFP4 x MXFP8 MoE's decode rows cost ~0.2-0.3 us an expert above the bytes its
# slice streams (gpt-oss's shape, 32 tokens balanced, 128 experts touched: 2.24 / 1.21 / 0.71 / 0.57 / 0.44 us an
# expert at moe_tp 1 / 2 / 4 / 8 / 16 against 15.0 / 7.5 / 3.8 / 2.5 / 1.3 MB of padded weights); without it the fit
# read the moe_tp 1-2 cells x1.10-1.13 and the moe_tp 16-32 ones x0.82. Adopted where the small-M regime's in-sample
# and out-of-sample MAPE both fell (12.8 -> 11.2%, 18.8 -> 17.8% leave-one-shape-out). Session 70 A: the same
# TRTLLM-Gen MoE over NVFP4 (FlashInfer's trtllm_fp4_block_scale_moe, as vLLM and SGLang call it) passes the same test
# (`accuracy_moe.py --expert-cost`): vllm/fp4 12.4 -> 10.1% in, 12.7 -> 10.6% leave-one-shape-out; sglang/fp4 15.7 ->
# 13.5%, 16.4 -> 14.6%. vLLM's Marlin MoE (int4_wo) passed it too (leave-one-GPU-out B200 / H100 / L40S 32.8 / 26.8 /
# 29.7 -> 30.7 / 22.1 / 28.9%) but is not listed: its one shape cannot tell a cost per expert from one per byte, the
# refit read the moe_tp-8 cells x1.00-1.05 -> x1.06-1.07, and the serving rows it prices got worse (Kimi-K2.5 B200 TP8
# TPOT 6.28 -> 7.19%, gpt-oss-120b H100 14.15 -> 15.10%).
EXPERT_COST_KERNELS = frozenset({
    ("sglang_flashinfer_trtllm_moe", "w4a8_mxfp4_mxfp8"),
    ("vllm_compressedtensorsw4a4nvfp4moe_flashinfer_trtllm_trtllmnvfp4expertsmonolithic", "nvfp4"),
    ("sglang_flashinfer_trtllm_moe", "nvfp4")})


def expert_cost_scores(rows) -> list[dict]:
    """Per GPU of one fit's rows: its small-M rows' MAPE % fitted without and with the cost per touched expert,
    in-sample and out of sample (leave-one-GPU-out where the fit has rows on two GPUs or more, else each expert shape
    predicted by the same GPU's other shapes): the test a kernel passes to enter EXPERT_COST_KERNELS (`accuracy_moe.py
    --expert-cost`)."""
    rows = rows[small_m(rows)].reset_index(drop=True)
    gpus = sorted(set(rows["gpu"]))

    def mape(pred, sel):
        ok = ~np.isnan(pred)
        return float((np.abs(pred[ok] / sel["latency_s"].to_numpy()[ok] - 1) * 100).mean())
    scores = []
    for gpu in gpus:
        mine = rows[rows["gpu"] == gpu].reset_index(drop=True)
        row = {"gpu": gpu, "small": len(mine), "out_of_sample": "gpu" if len(gpus) > 1 else "shape"}
        for name, cost in (("without", False), ("with", True)):
            row[f"in_{name}"] = mape(_times(mine, fit_moe(mine, cost)), mine)
            if len(gpus) > 1:
                pred = _times(mine, fit_moe(rows[rows["gpu"] != gpu], cost))
            else:
                shape = mine[SHAPE].astype(str).agg("/".join, axis=1)
                pred = np.full(len(mine), np.nan)
                for held in sorted(set(shape)):
                    m = (shape == held).to_numpy()
                    if (~m).sum() >= MIN_REGIME_ROWS:
                        pred[m] = _times(mine[m], fit_moe(mine[~m], cost))
            row[f"out_{name}"] = mape(np.asarray(pred, dtype=float), mine)
        scores.append(row)
    return scores


def expert_cost_fitted(rows) -> bool:
    """Whether `rows` (one block's) are of a kernel fitted with the cost per touched expert (EXPERT_COST_KERNELS)."""
    return len(rows) > 0 and (str(rows["kernel_source"].iloc[0]), str(rows["moe_dtype"].iloc[0])) in EXPERT_COST_KERNELS


def _times(rows, params: RooflineParams):
    touched = rows["touched"].to_numpy() if "touched" in rows else 0.0   # (only expert_s reads it)
    if "t_fin" in rows:   # a FINALIZE_FITS fit: the serving form (kernel_models/moe.split_moe_time)
        gemms = [tuple(rows[f"{part}_{name}"].to_numpy() for part in ("t_c", "t_m", "t_l2")) for name in ("up", "down")]
        return split_moe_time(gemms, params, rows["tiles_per_sm"].to_numpy(), rows["t_fin"].to_numpy(), touched)
    return moe_time(rows["t_c"].to_numpy(), rows["t_m"].to_numpy(), rows["t_l2"].to_numpy(), params,
                    rows["tiles_per_sm"].to_numpy(), touched)


class Regimes(NamedTuple):
    """One block's parameter sets: small-M (<= SMALL_M rows an expert), large-M (the rest, or > TILE_M_CAP where
    `mid` is fitted), mid-M (SMALL_M < rows <= TILE_M_CAP; None: two regimes)."""
    small: RooflineParams
    large: RooflineParams
    mid: RooflineParams | None = None


def fit_moe(rows, expert_cost: bool = False) -> RooflineParams:
    """One parameter set for `rows` (one GPU: its own fit; several: pooled); `expert_cost`: with a cost per touched
    expert (EXPERT_COST_KERNELS)."""
    measured = rows["latency_s"].to_numpy()

    def residuals(v):
        return np.log(_times(rows, to_params(v)) / measured)
    tiles = rows["tiles_per_sm"].any() or expert_cost
    x0 = np.array([np.log(10e-6), _logit(0.5), _logit(0.7), np.log(1.0), np.log(1.0)]
                  + ([np.log(1e-7)] if tiles else []) + ([np.log(2e-7)] if expert_cost else []))
    return to_params(levenberg_marquardt(residuals, x0, iters=80))


def small_m(rows) -> np.ndarray:
    """Rows in the small-M regime (kernel_models/moe.SMALL_M rows per touched expert or fewer)."""
    return (rows["rows_per_expert"] <= SMALL_M).to_numpy()


def mid_m(rows) -> np.ndarray:
    """Rows of the optional mid-M regime: more than SMALL_M and at most TILE_M_CAP rows per touched expert (one
    partly filled M tile an expert: kernel_models/moe.moe_regime)."""
    return (~small_m(rows)) & (rows["rows_per_expert"] <= TILE_M_CAP).to_numpy()


def fit_regimes(rows, three: bool = False) -> Regimes:
    """(small-M, large-M, mid-M or None) parameter sets, each fitted on its regime's rows; a regime with fewer than
    MIN_REGIME_ROWS rows takes the fit of all rows. `three`: fit the mid-M regime apart from the large one, where
    both bands hold MIN_REGIME_ROWS rows (else two regimes, large = every row over SMALL_M)."""
    small, mid = small_m(rows), mid_m(rows)
    split = three and mid.sum() >= MIN_REGIME_ROWS and (~small & ~mid).sum() >= MIN_REGIME_ROWS
    pooled = None
    fits = []
    for i, mask in enumerate((small, ~small & ~mid, mid) if split else (small, ~small)):
        if mask.sum() >= MIN_REGIME_ROWS:
            fits.append(fit_moe(rows[mask], i == 0 and expert_cost_fitted(rows)))
        else:
            pooled = pooled or fit_moe(rows)
            fits.append(pooled)
    return Regimes(fits[0], fits[1], fits[2] if split else None)


def predict(rows, fits) -> np.ndarray:
    """Seconds of `rows` by their regime's parameters (`fits`: Regimes, or a (small, large) pair)."""
    fits = Regimes(*fits)
    out = np.where(small_m(rows), _times(rows, fits.small), _times(rows, fits.large))
    return out if fits.mid is None else np.where(mid_m(rows), _times(rows, fits.mid), out)


def insample_and_loo(rows, three=False):
    """rows with `insample_s` and `loo_s` predictions beside `latency_s`. `three`: fit_regimes' mid-M regime for
    every GPU (True), or for those named (a collection: the GPUs whose shipped block has it, block_gpus_with_mid_m;
    a GPU left out is predicted by the other GPUs' fit of the same form as its own)."""
    out = rows.copy()
    out["insample_s"] = np.nan
    out["loo_s"] = np.nan
    for gpu in sorted(set(rows["gpu"])):
        mine = rows["gpu"] == gpu
        split = three is True or (three is not False and gpu in three)
        out.loc[mine, "insample_s"] = predict(rows[mine], fit_regimes(rows[mine], split))
        if (~mine).any():   # (a dtype measured on one GPU has no leave-one-out figure)
            out.loc[mine, "loo_s"] = predict(rows[mine], fit_regimes(rows[~mine], split))
    return out


def block_gpus_with_mid_m(rows, engine: str, dtype: str) -> set[str]:
    """The GPUs of `rows` whose block (engine/arch/dtype) MID_M_BLOCKS fits with the mid-M regime."""
    return {g for g in set(rows["gpu"]) if f"{engine}/{corpus_gpu(g).arch}/{dtype}" in MID_M_BLOCKS}


SHAPE = ["hidden_size", "inter_size", "num_experts", "topk"]   # a model's expert shape (leave_one_shape_out's unit)


def leave_one_shape_out(rows, three: bool = False) -> np.ndarray:
    """Seconds of each row predicted by the regimes fitted on the same GPU's other expert shapes (SHAPE): the
    out-of-sample score of a fit measured on one GPU only, where no leave-one-GPU-out figure exists."""
    out = np.full(len(rows), np.nan)
    for _, group in rows.groupby("gpu"):
        shape = group[SHAPE].astype(str).agg("/".join, axis=1)
        for held in sorted(set(shape)):
            mine = (shape == held).to_numpy()
            if (~mine).any():
                out[group.index[mine]] = predict(group[mine], fit_regimes(group[~mine], three))
    return out


# Blocks fitted with the mid-M regime (fit_regimes' `three`): those whose in-sample AND out-of-sample MAPE (leave-one-
# GPU-out where the engine/dtype has rows on two GPUs, else leave_one_shape_out) both fell by MID_M_MARGIN points or
# more (`benchmarks/accuracy_moe.py --mid-m`; session 63: sglang/blackwell/fp8 15.07 -> 12.01% in-sample, 15.57 ->
# 12.44% leave-one-shape-out; every other block with the rows gained under a point or lost, so keeps its two regimes).
MID_M_MARGIN = 1.0   # points: the tolerance test_moe_engine_fits already treats as refit noise
# Session 72 B2: fused_moe_triton/hopper/fp8 met it (16.80 -> 12.13% in, 47.28 -> 46.01% leave-one-GPU-out);
# fused_moe_triton/blackwell/fp8 did not (18.10 -> 13.95% in, 27.98 -> 28.23% out), so keeps two.
MID_M_BLOCKS = ("sglang/blackwell/fp8", "fused_moe_triton/hopper/fp8")


def mid_m_scores(rows) -> list[dict]:
    """Per GPU of one fit's rows: the rows in each regime band and the MAPE % of two against three regimes,
    in-sample and out of sample (leave-one-GPU-out, else leave-one-shape-out), and whether MID_M_MARGIN is met."""
    two, three = insample_and_loo(rows), insample_and_loo(rows, True)
    loso = rows["gpu"].nunique() == 1
    if loso:
        two["loo_s"], three["loo_s"] = leave_one_shape_out(rows), leave_one_shape_out(rows, True)
    scores = []
    for gpu in sorted(set(rows["gpu"])):
        mine = (rows["gpu"] == gpu).to_numpy()
        small, mid = small_m(rows[mine]), mid_m(rows[mine])
        row = {"gpu": gpu, "small": int(small.sum()), "mid": int(mid.sum()), "large": int((~small & ~mid).sum()),
               "out_of_sample": "shape" if loso else "gpu"}
        for name, out in (("two", two), ("three", three)):
            m = out[mine]
            for col, kind in (("insample_s", "in"), ("loo_s", "out")):
                row[f"{kind}_{name}"] = float((np.abs(m[col] / m["latency_s"] - 1) * 100).mean())
        row["adopt"] = bool(row["in_two"] - row["in_three"] >= MID_M_MARGIN
                            and row["out_two"] - row["out_three"] >= MID_M_MARGIN)
        scores.append(row)
    return scores


# ---- the fitted table (whatif/roofline/data/moe_fit.yaml) ----
HEADER = """# Fused-MoE model parameters (whatif/roofline/kernel_models/moe.py), one block per architecture x
# dtype x engine (key engine/arch/dtype), generated by `python benchmarks/accuracy_moe.py --write`: fitted by
# whatif/validate/moe_fit.py (log least squares, efficiencies in (0, 1]) on NVIDIA aiconfigurator's moe table
# (Apache-2.0, commit 095f58a51c), each engine's own fused-MoE rows. Units: floor_s seconds; compute_eff /
# memory_eff fractions of the datasheet peak and HBM bandwidth; smooth the exponent p combining compute and memory;
# l2_speedup how much faster than HBM a working set that fits in L2 is read (vllm and sglang bf16 blocks: than
# SMs x clock x 4 B, moe_fit.SM_RATE_L2_FITS); item_s seconds per launched CTA tile per SM (the grid covers every
# slot of every expert, tiles without local rows exit early); expert_s seconds per touched expert (small-M regime of
# moe_fit.EXPERT_COST_KERNELS only). A block's top-level
# values are fitted on its rows of more than SMALL_M (16) routed rows per touched expert, `small_m` on the others
# (decode: the engines' grouped GEMMs run other tiles and kernels there); a block with `mid_m` has it fitted on its
# rows of 17-128 (TILE_M_CAP) rows an expert and its top-level values on those over 128. EXPERIMENTAL: see the
# accuracy report (benchmarks/accuracy_moe.py) before relying on it.
"""


def fit_document(rows_by_fit: dict) -> dict:
    """One block per engine x architecture x dtype: {(engine, whatif dtype): rows} -> the moe_fit.yaml document."""
    blocks = {}
    for (engine, dtype), rows in rows_by_fit.items():
        blocks.update(_dtype_blocks(rows, engine, dtype))
    return {"provenance": "fitted", "blocks": blocks}


def _values(p: RooflineParams) -> dict:
    return {"floor_s": float(f"{p.floor_s:.4g}"), "compute_eff": float(f"{p.compute_eff:.4g}"),
            "memory_eff": float(f"{p.memory_eff:.4g}"), "smooth": float(f"{p.smooth:.4g}"),
            "item_s": float(f"{p.item_s:.4g}"), "l2_speedup": float(f"{p.l2_speedup:.4g}"),
            **({"expert_s": float(f"{p.expert_s:.4g}")} if p.expert_s else {})}


def _dtype_blocks(rows, engine: str, dtype: str) -> dict:
    blocks = {}
    for gpu, group in rows.groupby("gpu"):
        key = f"{engine}/{corpus_gpu(gpu).arch}/{dtype}"
        fits = fit_regimes(group, key in MID_M_BLOCKS)
        mid = {"mid_m": {**_values(fits.mid), "rows": int(mid_m(group).sum())}} if fits.mid else {}
        blocks[key] = {
            **_values(fits.large), "small_m": {**_values(fits.small), "rows": int(small_m(group).sum())}, **mid,
            "provenance": "fitted",
            "fitted_on": {"gpu": gpu, "engine": ROWS_FRAMEWORK.get(engine, engine), "rows": int(len(group)),
                          "version": str(group["version"].iloc[0]), "moe_dtype": str(group["moe_dtype"].iloc[0]),
                          "kernel_source": str(group["kernel_source"].iloc[0])}}
    return blocks


def write_fit(rows_by_fit: dict, path=None, merge: bool = False) -> dict:
    """Write the fitted table (`merge`: only the blocks of `rows_by_fit` replaced, every other block kept as it is,
    byte for byte: a refit of one fit does not move the others by optimizer noise)."""
    import yaml
    from ..roofline.kernel_models.moe import FIT_FILE
    doc = fit_document(rows_by_fit)
    if merge:
        from ..specs.profiles import read_yaml
        old = read_yaml(path or FIT_FILE)
        doc = {**old, "blocks": {**old["blocks"], **doc["blocks"]}}
    (path or FIT_FILE).write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110))
    precompiled.refresh(path or FIT_FILE)
    return doc
