"""A DSA prefill's sparse MLA on SGLang's Blackwell trtllm path: a decode row a query token, each gathering its own
top-k latent rows (roofline/dsa_prefill.py, engine kernels.dsa_prefill_as_decode)."""
from pathlib import Path

import pytest

from whatif import api
from whatif.errors import WhatifError
from whatif.roofline.ops import OpClass
from whatif.specs.kernel_options import kernel_options

MODERN = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "modern"
LATENT_FP8 = 576   # GLM-5's kv_lora_rank + rope dims, one byte each in an fp8 cache
TOP_K = 2048


def attention(hardware: str, prompt: int, kv_dtype: str = "fp8"):
    r = api.estimate("zhipuai/GLM-5", hardware, tp=8, gpus=8, batch=1, prompt=prompt, output=2,
                     kernel_engine="sglang", quantization="fp8", kv_dtype=kv_dtype, module_fits=False,
                     with_max_batch=False)
    p = r.estimate.prefill[0][0]
    return max((t for t in p.op_times if t.op.name == "attention_mla"), key=lambda t: t.op.count)   # MoE layers


def capped_pairs(n: int, k: int = TOP_K) -> float:
    """Keys the prompt's queries read: query i (1-based) reads min(i, k)."""
    return k * (k + 1) / 2 + (n - k) * k


def test_an_8k_prompt_on_b200_reads_each_querys_top_k_rows():
    t = attention("b200", 8192)
    assert t.op.op_class == OpClass.ATTENTION_DECODE
    assert t.op.shape.sequences == 8192   # one decode row a query token
    gathered = capped_pairs(8192) * LATENT_FP8
    assert t.op.bytes["hbm"] >= gathered   # every row its own gather, not the latent once a sequence
    assert t.op.bytes["hbm"] < 1.05 * gathered


def test_below_the_top_k_and_on_hopper_the_prefill_op_stays():
    assert attention("b200", 1024).op.op_class == OpClass.ATTENTION_PREFILL   # SGLang's dense MHA path
    assert attention("dgx-h100", 8192).op.op_class == OpClass.ATTENTION_PREFILL   # flashmla_kv: not this kernel


def test_the_gather_takes_at_least_its_bytes_at_the_hbm_peak():
    # the per-query gather moves ~1,800x the 8k latent (8.5 GB a layer), B200's HBM 8 TB/s: >= 1.06 ms a layer
    assert attention("b200", 8192).time_s >= capped_pairs(8192) * LATENT_FP8 / 8.0e12


def test_a_bad_architecture_list_is_refused_naming_the_field():
    with pytest.raises(WhatifError, match="dsa_prefill_as_decode"):
        sec = {"dsa_prefill_as_decode": ["volta9"]}
        kernel_options(sec, "sglang.kernels", sec.get)


@pytest.mark.skipif(not (MODERN / "b200_sxm").exists(), reason="needs /work/shared's aiconfigurator tables")
def test_the_module_at_8k_tokens_meets_sglangs_measured_table():
    import pandas as pd

    from whatif.roofline.module_fits import DSA_MODULE_ROLES
    from whatif.roofline.ops import graph_role
    d = pd.read_parquet(MODERN / "b200_sxm" / "sglang" / "sparse_attention__dsa_context_module_perf.parquet")
    d = d[(d.model == "zai-org/GLM-5-FP8") & (d.kernel_source == "sglang_dsa_indexer_trtllm") & (d.num_heads == 8)
          & (d.batch_size == 1) & (d.isl == 8192) & (d.step == 0) & (d.kv_cache_dtype == "fp8")
          & (d.gemm_type == "fp8_block")]
    measured_s = d.latency.median() / 1e3
    r = api.estimate("zhipuai/GLM-5", "b200", tp=8, gpus=8, batch=1, prompt=8192, output=2, kernel_engine="sglang",
                     quantization="fp8", kv_dtype="fp8", module_fits=False, with_max_batch=False).estimate
    ops = [t for t in r.prefill[0][0].op_times if graph_role(t.op) in DSA_MODULE_ROLES]
    layers = max(t.op.count for t in ops)
    module_s = sum(t.time_s for t in ops if t.op.count == layers)
    assert module_s == pytest.approx(measured_s, rel=0.15)   # 2.35 ms measured; 0.90 before the gather was priced
