"""Fit the fused-MoE model (roofline/kernel_models/moe.py) to the corpus's moe table.

A GPU's prediction is its datasheet peak (dtype) and HBM bandwidth times dimensionless efficiencies,
plus a floor in seconds, so leave-one-GPU-out (each corpus GPU is its own architecture) fits one
pooled parameter set on the other GPUs and predicts the one left out. Rows: vLLM's fused-MoE rows of
one dtype, the kernel with the most rows per GPU (B200 also has a FlashInfer-CUTLASS variant).
Least squares on log(predicted / measured) with collective_fit's numpy Levenberg-Marquardt.
"""
from __future__ import annotations

import numpy as np

from ..roofline.kernel_models.moe import MoeParams, moe_ideal_times, moe_time
from .collective_fit import _eff, _logit, levenberg_marquardt
from .corpus import GPU_PROFILES

DTYPE_BYTES = {"bfloat16": (2.0, 2.0, "bf16"), "fp8": (1.0, 1.0, "fp8")}


def moe_rows(frame, dtype: str = "bfloat16", engine: str = "vllm"):
    """One engine's rows of one dtype, the most-measured kernel per GPU, with ideal times attached."""
    from ..specs.hardware import load_component
    rows = frame[(frame["framework"] == engine) & (frame["moe_dtype"] == dtype)]
    main = rows.groupby(["gpu", "kernel_source"]).size().reset_index().sort_values(0).groupby("gpu").tail(1)
    rows = rows.merge(main[["gpu", "kernel_source"]], on=["gpu", "kernel_source"])
    w_bytes, a_bytes, peak_key = DTYPE_BYTES[dtype]
    t_c, t_m = [], []
    for gpu, group in rows.groupby("gpu", sort=False):
        g = load_component(GPU_PROFILES[gpu], "gpu")
        peak, hbm = g.peak_flops(peak_key), g.hbm_bandwidth.value
        for r in group.itertuples():
            c, m = moe_ideal_times(r.num_tokens, r.hidden_size, r.inter_size, r.topk, r.num_experts,
                                   r.moe_tp_size, r.moe_ep_size, r.distribution, peak, hbm, w_bytes, a_bytes)
            t_c.append(c)
            t_m.append(m)
    order = np.concatenate([g.index.to_numpy() for _, g in rows.groupby("gpu", sort=False)])
    out = rows.loc[order].reset_index(drop=True)
    out["t_c"], out["t_m"] = t_c, t_m
    return out


def to_params(v) -> MoeParams:
    return MoeParams(float(np.exp(v[0])), float(_eff(v[1])), float(_eff(v[2])), float(1.0 + np.exp(v[3])))


def fit_moe(rows) -> MoeParams:
    """One parameter set for `rows` (one GPU: its own fit; several: pooled)."""
    t_c, t_m = rows["t_c"].to_numpy(), rows["t_m"].to_numpy()
    measured = rows["latency_s"].to_numpy()

    def residuals(v):
        return np.log(moe_time(t_c, t_m, to_params(v)) / measured)
    x0 = np.array([np.log(10e-6), _logit(0.5), _logit(0.7), np.log(1.0)])
    return to_params(levenberg_marquardt(residuals, x0, iters=80))


def insample_and_loo(rows):
    """rows with `insample_s` and `loo_s` predictions beside `latency_s`."""
    out = rows.copy()
    out["insample_s"] = np.nan
    out["loo_s"] = np.nan
    for gpu in sorted(set(rows["gpu"])):
        mine = rows["gpu"] == gpu
        for column, fitted in (("insample_s", fit_moe(rows[mine])), ("loo_s", fit_moe(rows[~mine]))):
            out.loc[mine, column] = moe_time(rows.loc[mine, "t_c"].to_numpy(), rows.loc[mine, "t_m"].to_numpy(), fitted)
    return out
