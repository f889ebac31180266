"""How fast a token-gathering sparse attention kernel computes, relative to dense FlashAttention, measured
on aiconfigurator's DeepSeek-V3.2 DSA and DeepSeek-V3 MLA module tables (../shared/reference/aiconfigurator/
modern/<gpu>/<engine>/): the same engine release, projections and grid, one module attending per query the
2,048 tokens its indexer gathered (FlashMLA's sparse kernels), the other every causal key (dense FA).

Prefill (`prefill_ratio`): per (GPU, engine, batch) at 128 heads (no engine pads them) and prompts >= 4,096,
each module's latency is fitted as a + b isl + c isl^2. The dense module's quadratic term is its attention
(2 H (qk + v) FLOPs a causal pair); the DSA module's linear term less the dense one is its sparse attention
(2 H (kv_lora + rope + kv_lora) x top-k FLOPs a query: their projections match, kv_b's expansion costing what
the absorbed bmms do; the indexer's projections, ~5% of those FLOPs, are left in, so the ratio leans low).
The ratio is the two kernels' achieved FLOP rates. Decode (`decode_ratio`): the time a step adds per cached
token read, prompts 256 -> 2,048 (where the DSA module still reads every token), its indexer's own slope
(read past 4,096, where the attention stays at 2,048 tokens) taken out, over the dense module's.
"""
from __future__ import annotations

import math

import numpy as np

from .modern_rows import DEFAULT_ROOT

DSA_MODEL = "deepseek-ai/DeepSeek-V3.2"
HEADS = 128
QK, V, LATENT, KV_LORA, TOPK = 192, 128, 576, 512, 2048   # DeepSeek-V3.2's config.json
PAIRS = ("h100_sxm", "b200_sxm")
ENGINES = ("vllm", "trtllm")   # the engines with both a DSA and a dense MLA module table
# TensorRT-LLM's sparse MLA walks all top-k slots whatever the visible keys (mla_modules.all_topk_part), so its
# decode module adds nothing per token below 2,048: only vLLM's (FLASHMLA_SPARSE) separates a per-token cost
DECODE_ENGINES = ("vllm",)


def _tables(root, gpu: str, engine: str, phase: str):
    import pandas as pd
    sparse = pd.read_parquet(f"{root}/{gpu}/{engine}/sparse_attention__dsa_{phase}_module_perf.parquet")
    dense = pd.read_parquet(f"{root}/{gpu}/{engine}/mla__mla_{phase}_module_perf.parquet")
    def keep(d):   # 16-bit weights and cache, 128 heads (no engine pads them)
        return d[(d.gemm_type == "bfloat16") & (d.kv_cache_dtype == "bfloat16") & (d.num_heads == HEADS)]
    return keep(sparse[sparse.model == DSA_MODEL]), keep(dense)


def prefill_ratio(root=DEFAULT_ROOT, gpu: str = "h100_sxm", engine: str = "vllm") -> list[float]:
    """Sparse / dense attention FLOP rate, one value per batch of the prefill tables (see the module doc)."""
    sparse, dense = _tables(root, gpu, engine, "context")
    out = []
    for b in (1, 2, 4):
        s = sparse[(sparse.batch_size == b) & (sparse.step == 0)].groupby("isl").latency.median() / 1e3
        d = dense[(dense.batch_size == b) & (dense.step == 0)].groupby("isl").latency.median() / 1e3
        isl = [x for x in s.index if x >= 4096 and x in d.index]
        if len(isl) < 4:
            continue
        cs, cd = np.polyfit(isl, s[isl].values, 2), np.polyfit(isl, d[isl].values, 2)
        dense_rate = 2.0 * HEADS * (QK + V) / (2.0 * cd[0] / b)          # FLOP/s: isl^2 / 2 pairs a sequence
        sparse_rate = 2.0 * HEADS * (LATENT + KV_LORA) * TOPK / ((cs[1] - cd[1]) / b)
        out.append(sparse_rate / dense_rate)
    return out


def decode_ratio(root=DEFAULT_ROOT, gpu: str = "h100_sxm", engine: str = "vllm", min_batch: int = 128) -> list[float]:
    """Dense / sparse seconds per cached token read at decode, one value per batch >= min_batch."""
    sparse, dense = _tables(root, gpu, engine, "generation")
    out = []
    for b in sorted(set(sparse.batch_size) & set(dense.batch_size)):
        if b < min_batch:
            continue
        s = sparse[sparse.batch_size == b].groupby("step").latency.median()
        d = dense[dense.batch_size == b].groupby("step").latency.median()
        lo, hi = min(x for x in s.index if x >= 256), max(x for x in s.index if x <= TOPK)
        far = [x for x in s.index if 4096 <= x <= 32768]
        indexer = np.polyfit(far, s[far].values, 1)[0]
        dlo, dhi = min(x for x in d.index if x >= 256), max(x for x in d.index if x <= TOPK)
        sparse_s = (s[hi] - s[lo]) - indexer * (hi - lo)
        dense_s = (d[dhi] - d[dlo]) * (hi - lo) / (dhi - dlo)
        out.append(dense_s / sparse_s)
    return out


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def per_gpu(root=DEFAULT_ROOT, phase: str = "prefill") -> dict[str, float]:
    """Each GPU's ratio: the geometric mean over its engines and batches."""
    fn, engines = (prefill_ratio, ENGINES) if phase == "prefill" else (decode_ratio, DECODE_ENGINES)
    return {gpu: geomean(v for e in engines for v in fn(root, gpu, e)) for gpu in PAIRS}


def pooled(root=DEFAULT_ROOT, phase: str = "prefill") -> float:
    """The shipped value: the geometric mean of the GPUs' ratios."""
    return geomean(per_gpu(root, phase).values())
