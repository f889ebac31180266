"""Fit the fused-MoE model (roofline/kernel_models/moe.py) to the corpus's moe table.

A GPU's prediction is its datasheet peak (dtype) and HBM bandwidth times dimensionless efficiencies,
plus a floor in seconds, so leave-one-GPU-out (each corpus GPU is its own architecture) fits one
pooled parameter set on the other GPUs and predicts the one left out. Rows: vLLM's fused-MoE rows of
one dtype, the kernel with the most rows per GPU (B200 also has a FlashInfer-CUTLASS variant); bf16, fp8
and NVFP4 each get their own blocks (FITTED says whose rows on which GPU).
Least squares on log(predicted / measured) with collective_fit's numpy Levenberg-Marquardt.
"""
from __future__ import annotations

import numpy as np

from ..roofline.kernel_models.fitted_roofline import RooflineParams
from ..roofline.kernel_models.moe import moe_ideal_times, moe_time
from ..specs import precompiled
from .collective_fit import _eff, _logit, levenberg_marquardt
from .corpus import corpus_gpu

# corpus dtype -> (weight bytes, activation bytes, whatif dtype): NVFP4 is 4 bits plus an fp8 scale per 16 elements
# (fp8_block: a float scale per 128x128 weights and per 128 activations, left out)
DTYPE_BYTES = {"bfloat16": (2.0, 2.0, "bf16"), "fp8": (1.0, 1.0, "fp8"), "fp8_block": (1.0, 1.0, "fp8"),
               "nvfp4": (0.5625, 0.5625, "fp4")}
# The blocks moe_fit.yaml holds: (block dtype, engine, corpus dtype, GPUs; None: all). vLLM's rows where they
# are the kernel a deployment runs. Hopper's fp8 block is SGLang's Triton fused MoE over 128x128 block-FP8 (the
# kernel family vLLM's Fp8MoEMethod runs block-FP8 checkpoints with): vLLM's H100 fp8 rows are ModelOpt's
# FlashInfer-CUTLASS path, 2.5-3x slower than bf16 at every shape where SGLang's block-FP8 and TensorRT-LLM's fp8
# rows are ~0.55x (a fit over vLLM's three GPUs missed by 64-222% leave-one-GPU-out). L40S's fp8 stays unfitted.
FITTED = (("bf16", "vllm", "bfloat16", None), ("fp8", "vllm", "fp8", ("b200_sxm",)),
          ("fp8", "sglang", "fp8_block", ("h100_sxm",)), ("fp4", "vllm", "nvfp4", ("b200_sxm",)))


def block_rows(frame) -> dict:
    """{block dtype: its rows, each GPU's from its FITTED entry}."""
    import pandas as pd
    out: dict = {}
    for block, engine, dtype, gpus in FITTED:
        out.setdefault(block, []).append(moe_rows(frame, dtype, engine, gpus))
    return {block: pd.concat(parts, ignore_index=True) for block, parts in out.items()}


def moe_rows(frame, dtype: str = "bfloat16", engine: str = "vllm", gpus=None):
    """One engine's rows of one dtype (on `gpus`, None: all), the most-measured kernel per GPU, with ideal
    times attached."""
    rows = frame[(frame["framework"] == engine) & (frame["moe_dtype"] == dtype)]
    if gpus is not None:
        rows = rows[rows["gpu"].isin(gpus)]
    main = rows.groupby(["gpu", "kernel_source"]).size().reset_index().sort_values(0).groupby("gpu").tail(1)
    rows = rows.merge(main[["gpu", "kernel_source"]], on=["gpu", "kernel_source"])
    w_bytes, a_bytes, peak_key = DTYPE_BYTES[dtype]
    t_c, t_m, t_l2 = [], [], []
    for gpu, group in rows.groupby("gpu", sort=False):
        g = corpus_gpu(gpu)
        peak, hbm, l2 = g.peak_flops(peak_key), g.hbm_bandwidth.value, g.l2_size.value
        for r in group.itertuples():
            c, m, cached = moe_ideal_times(r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts,
                                           r.moe_tp_size, r.moe_ep_size, r.distribution, peak, hbm,
                                           w_bytes, a_bytes, l2)
            t_c.append(c)
            t_m.append(m)
            t_l2.append(cached)
    order = np.concatenate([g.index.to_numpy() for _, g in rows.groupby("gpu", sort=False)])
    out = rows.loc[order].reset_index(drop=True)
    out["t_c"], out["t_m"], out["t_l2"] = t_c, t_m, t_l2
    return out


def to_params(v) -> RooflineParams:
    return RooflineParams(float(np.exp(v[0])), float(_eff(v[1])), float(_eff(v[2])), float(1.0 + np.exp(v[3])),
                          l2_speedup=float(1.0 + np.exp(v[4])))


def _times(rows, params: RooflineParams):
    return moe_time(rows["t_c"].to_numpy(), rows["t_m"].to_numpy(), rows["t_l2"].to_numpy(), params)


def fit_moe(rows) -> RooflineParams:
    """One parameter set for `rows` (one GPU: its own fit; several: pooled)."""
    measured = rows["latency_s"].to_numpy()

    def residuals(v):
        return np.log(_times(rows, to_params(v)) / measured)
    x0 = np.array([np.log(10e-6), _logit(0.5), _logit(0.7), np.log(1.0), np.log(1.0)])
    return to_params(levenberg_marquardt(residuals, x0, iters=80))


def insample_and_loo(rows):
    """rows with `insample_s` and `loo_s` predictions beside `latency_s`."""
    out = rows.copy()
    out["insample_s"] = np.nan
    out["loo_s"] = np.nan
    for gpu in sorted(set(rows["gpu"])):
        mine = rows["gpu"] == gpu
        out.loc[mine, "insample_s"] = _times(rows[mine], fit_moe(rows[mine]))
        if (~mine).any():   # (a dtype measured on one GPU has no leave-one-out figure)
            out.loc[mine, "loo_s"] = _times(rows[mine], fit_moe(rows[~mine]))
    return out


# ---- the fitted table (whatif/roofline/data/moe_fit.yaml) ----
HEADER = """# Fused-MoE model parameters (whatif/roofline/kernel_models/moe.py), one block per architecture x
# dtype, generated by `python benchmarks/accuracy_moe.py --write`: fitted by whatif/validate/moe_fit.py
# (log least squares, efficiencies in (0, 1]) on NVIDIA aiconfigurator's moe table (Apache-2.0,
# commit 095f58a51c), vLLM's fused-MoE rows. Units: floor_s seconds; compute_eff / memory_eff fractions
# of the datasheet peak and HBM bandwidth; smooth the exponent p combining compute and memory;
# l2_speedup how much faster than HBM a working set that fits in L2 is read. EXPERIMENTAL: see the
# accuracy report (benchmarks/accuracy_moe.py) before relying on it.
"""


def fit_document(rows_by_block: dict) -> dict:
    """One block per architecture x dtype: {block dtype: rows} (block_rows) -> the moe_fit.yaml document."""
    blocks = {}
    for block, rows in rows_by_block.items():
        blocks.update(_dtype_blocks(rows, block))
    return {"provenance": "fitted", "blocks": blocks}


def _dtype_blocks(rows, dtype: str) -> dict:
    blocks = {}
    for gpu, group in rows.groupby("gpu"):
        arch = corpus_gpu(gpu).arch
        p = fit_moe(group)
        blocks[f"{arch}/{dtype}"] = {
            "floor_s": float(f"{p.floor_s:.4g}"), "compute_eff": float(f"{p.compute_eff:.4g}"),
            "memory_eff": float(f"{p.memory_eff:.4g}"), "smooth": float(f"{p.smooth:.4g}"),
            "l2_speedup": float(f"{p.l2_speedup:.4g}"), "provenance": "fitted",
            "fitted_on": {"gpu": gpu, "engine": str(group["framework"].iloc[0]), "rows": int(len(group)),
                          "version": str(group["version"].iloc[0]),
                          "kernel_source": str(group["kernel_source"].iloc[0])}}
    return blocks


def write_fit(rows_by_block: dict, path=None) -> dict:
    import yaml
    from ..roofline.kernel_models.moe import FIT_FILE
    doc = fit_document(rows_by_block)
    (path or FIT_FILE).write_text(HEADER + yaml.safe_dump(doc, sort_keys=False, width=110))
    precompiled.refresh(path or FIT_FILE)
    return doc
