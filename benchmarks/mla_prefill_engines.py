"""vLLM's MLA context module beside TensorRT-LLM's at the same shapes, GPU by GPU: where vLLM's H100 time goes.

The vLLM MLA prefill fit misses B200 left out by 36.7% (docs/accuracy.md "Session 71 C"). The two engines' tables
(../shared/reference/aiconfigurator/modern/<gpu>/{vllm,trtllm}/mla__mla_context_module_perf.parquet, DeepSeek-V3
widths, the same head / batch / length sweep) time the same module, so their difference on one GPU is engine
work, not the GPU. Three views (bf16 KV; vLLM rows of its auto-selected prefill backend FLASH_ATTN only):
- per token, large rows (length <= 1024, >= 16,384 tokens, 1-16 heads): ns a token = intercept + slope x heads
  (least squares); the intercept is the head-independent work (the fused q_a + kv_a GEMM 7168 -> 2112, the two
  RMSNorms, rope, the latent cache write), the slope the per-head work (q_b, kv_b, o, attention);
- (vLLM - TensorRT-LLM) ns a token by heads and size;
- the decode module's (vLLM - TensorRT-LLM) per step at batch >= 128 (another attention kernel on each GPU).
Usage: PYTHONPATH=$PWD python3 benchmarks/mla_prefill_engines.py [--root MODERN_DIR]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

SHAPE = ["num_heads", "batch_size", "isl", "gemm_type", "kv_cache_dtype"]
GPUS = ("b200_sxm", "h100_sxm", "l40s")
VLLM_PREFILL = "FLASH_ATTN"   # vLLM 0.24.0's SM100 / SM90 / SM89 auto pick (the collector's prefill/selector note)


def per_token_fit(rows):
    """(intercept ns a token, slope ns a token a head, rows) of latency / tokens = a + b x heads on `rows`
    (columns num_heads, batch_size, isl, latency in ms)."""
    y = rows["latency"].to_numpy() / (rows["batch_size"] * rows["isl"]).to_numpy() * 1e6
    a = np.c_[np.ones(len(rows)), rows["num_heads"].to_numpy()]
    (intercept, slope), *_ = np.linalg.lstsq(a, y, rcond=None)
    return float(intercept), float(slope), len(rows)


def large_rows(rows):
    """Rows where the projections bind and attention is small: length <= 1024, >= 16,384 tokens, <= 16 heads."""
    tokens = rows["batch_size"] * rows["isl"]
    return rows[(rows["isl"] <= 1024) & (tokens >= 16384) & (rows["num_heads"] <= 16)]


def _table(root, gpu, engine, table="mla__mla_context_module_perf"):
    import pandas as pd
    try:
        t = pd.read_parquet(f"{root}/{gpu}/{engine}/{table}.parquet")
    except FileNotFoundError:
        return None
    if engine == "vllm" and "context" in table:
        t = t[t["kernel_source"] == VLLM_PREFILL]
    keys = SHAPE if "context" in table else ["num_heads", "batch_size", "step", "gemm_type", "kv_cache_dtype"]
    return t[t["kv_cache_dtype"] == "bfloat16"].groupby(keys, as_index=False)["latency"].median()


def report(root) -> str:
    import pandas as pd
    lines = ["== per token on large rows: ns = intercept + slope x heads (bf16 KV) =="]
    for engine in ("vllm", "trtllm"):
        for gpu in GPUS:
            t = _table(root, gpu, engine)
            if t is None:
                continue
            for gemm, g in large_rows(t).groupby("gemm_type"):
                a, b, n = per_token_fit(g)
                lines.append(f"{engine:6} {gpu:8} {gemm:9} rows {n:3}  intercept {a:6.1f} ns  slope {b:5.2f} ns/head")
    for gpu in ("b200_sxm", "h100_sxm"):
        v, t = _table(root, gpu, "vllm"), _table(root, gpu, "trtllm")
        m = v.merge(t, on=SHAPE, suffixes=("_v", "_t"))
        tokens = m["batch_size"] * m["isl"]
        m = m[tokens > 2048].assign(d=(m["latency_v"] - m["latency_t"]) / tokens * 1e6,
                                    size=pd.cut(tokens[tokens > 2048], [2048, 8192, 32768, 1e9]))
        lines += [f"\n== {gpu}: (vLLM - TensorRT-LLM) ns a token, median, > 2,048 tokens ==",
                  m.pivot_table(index=["gemm_type", "size"], columns="num_heads", values="d", aggfunc="median",
                                observed=True).round(1).to_string()]
        v, t = (_table(root, gpu, e, "mla__mla_generation_module_perf") for e in ("vllm", "trtllm"))
        keys = ["num_heads", "batch_size", "step", "gemm_type", "kv_cache_dtype"]
        m = v.merge(t, on=keys, suffixes=("_v", "_t"))
        m = m[(m["step"] <= 2048) & (m["batch_size"] >= 128)]
        m = m.assign(d=(m["latency_v"] - m["latency_t"]) * 1e3)
        lines += [f"\n== {gpu}: decode module (vLLM - TensorRT-LLM) us a step, median, context <= 2,048 ==",
                  m.pivot_table(index=["gemm_type", "batch_size"], columns="num_heads", values="d",
                                aggfunc="median").round(1).to_string()]
    return "\n".join(lines)


def main(argv=None) -> int:
    from whatif.validate import modern_rows as mr
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(mr.DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    args = ap.parse_args(argv)
    print(report(args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
