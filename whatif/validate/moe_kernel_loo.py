"""Leave-one-GPU-out of the fused-MoE fits against donors that run the held-out GPU's own kernel.

validate/moe_fit.insample_and_loo pools every other GPU's block rows as donors, whatever kernel each ran. The bf16
blocks' kernels differ by architecture: vLLM's unquantized oracle (vllm/model_executor/layers/fused_moe/oracle/
unquantized.py) ranks FlashInfer TRTLLM first on CUDA but moves it behind Triton on SM90 ("the FlashInfer unquantized
MoE kernels are slower than Triton"), and TRTLLM-Gen's MoE exists for SM100 only; SGLang's B200 recipes launch
`--moe-runner-backend flashinfer_trtllm` (InferenceX qwen3.5_bf16_b200.sh). So the corpus's B200 bf16 block rows are
TRTLLM-Gen and the other GPUs' Triton (TensorRT-LLM's CUTLASS): a pooled leave-one-GPU-out of B200 scores a kernel
swap, not whether one kernel's parameters transfer. same_kernel_loo scores each GPU against donors of its own kernel
family (session 64 G). Nothing here is read at prediction time.
"""
from __future__ import annotations

import numpy as np

from .corpus import corpus_gpu
from .moe_fit import FITS, MID_M_BLOCKS, ROWS_FRAMEWORK, fit_regimes, fit_rows, moe_rows, predict

# kernel_source substring -> family, first match wins (vllm_fused_moe: vLLM 0.14's fused_moe, its Triton kernel;
# moe_torch_flow: TensorRT-LLM's PyTorch-flow fused MoE, the CUTLASS grouped GEMM)
KERNEL_FAMILIES = (("flashinfer_trtllm", "trtllm-gen"), ("triton", "triton"), ("vllm_fused_moe", "triton"),
                   ("marlin", "marlin"), ("cutlass", "cutlass"), ("moe_torch_flow", "cutlass"))


def kernel_family(kernel_source: str) -> str:
    """The kernel family of a corpus kernel_source (KERNEL_FAMILIES' first match; else the name itself)."""
    return next((fam for key, fam in KERNEL_FAMILIES if key in kernel_source), kernel_source)


def family_pool(frame, engine: str, dtype: str) -> dict:
    """{(gpu, kernel family): rows with ideal times} of one fit's engine and corpus dtypes (moe_rows per family)."""
    corpus_dtypes, gpus = FITS[(engine, dtype)]
    mine = frame[(frame["framework"] == ROWS_FRAMEWORK.get(engine, engine)) & frame["moe_dtype"].isin(corpus_dtypes)]
    if gpus is not None:
        mine = mine[mine["gpu"].isin(gpus)]
    families = mine["kernel_source"].map(kernel_family)
    return {(g, f): moe_rows(part, str(part["moe_dtype"].iloc[0]), engine, (g,))
            for (g, f), part in mine.groupby([mine["gpu"], families])}


def scored_family(pool: dict, gpu: str, shipped_family: str) -> tuple[str, list[str]]:
    """(family, donor GPUs) a held-out GPU is scored with: its block's kernel where another GPU runs it, else the
    family of its rows that the most other GPUs run (none: its own, no donors)."""
    def donors(fam):
        return sorted(g for g, f in pool if f == fam and g != gpu)
    if donors(shipped_family):
        return shipped_family, donors(shipped_family)
    alts = [f for g, f in pool if g == gpu and donors(f)]
    fam = max(alts, key=lambda f: len(donors(f))) if alts else shipped_family
    return fam, donors(fam)


def same_kernel_loo(frame, engine: str, dtype: str):
    """Rows with `insample_s` (fitted on the GPU's scored rows) and `loo_s` (fitted on the donors' rows of the same
    kernel family; NaN without donors) and `scored_kernel`, one block per GPU of the fit (moe_fit.FITS)."""
    import pandas as pd
    shipped = fit_rows(frame, engine, dtype)
    pool = family_pool(frame, engine, dtype)
    parts = []
    for gpu in sorted(set(shipped["gpu"])):
        own = kernel_family(str(shipped.loc[shipped["gpu"] == gpu, "kernel_source"].iloc[0]))
        fam, donors = scored_family(pool, gpu, own)
        rows = pool.get((gpu, fam), shipped[shipped["gpu"] == gpu]).copy()
        split = f"{engine}/{corpus_gpu(gpu).arch}/{dtype}" in MID_M_BLOCKS
        rows["insample_s"] = predict(rows, fit_regimes(rows, split))
        rows["loo_s"] = (predict(rows, fit_regimes(pd.concat([pool[(g, fam)] for g in donors], ignore_index=True),
                                                   split)) if donors else np.nan)
        rows["scored_kernel"] = fam
        parts.append(rows)
    return pd.concat(parts, ignore_index=True)
