"""The fitted kernel models as the default efficiency applies them to a pass's ops (roofline/kernel_timing.py)."""
from dataclasses import replace

import pytest

from whatif.roofline import kernels
from whatif.roofline.attention import attention_op
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.kernel_models.decode_attention import decode_attention_time
from whatif.roofline.kernel_models.gemm import gemm_time
from whatif.roofline.kernel_models.moe import moe_params
from whatif.roofline.kernel_models.params import params_for
from whatif.roofline.kernel_models.prefill_attention import prefill_attention_time
from whatif.specs.op_kinds import OpRole
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_system

H100 = load_system("h100-sxm")
DGX = load_system("dgx-h100")
EFF = load_efficiency("default", H100.gpu)


@pytest.mark.parametrize("m,n,k,dtype", [(1, 4096, 4096, "bf16"), (300, 14336, 4096, "bf16"),
                                         (4096, 4096, 14336, "bf16"), (64, 8192, 8192, "fp8")])
def test_a_plain_gemm_op_is_timed_exactly_as_the_fitted_model(m, n, k, dtype):
    b = 2.0 if dtype == "bf16" else 1.0
    op = gemm("g", m, n, k, b, b, dtype, out_bytes=2.0)
    model = gemm_time(m, n, k, dtype, H100.gpu, params_for("gemm", "hopper", dtype).params)
    assert time_op(op, H100.gpu, EFF).time_s == pytest.approx(model, rel=1e-9)


def test_decode_and_prefill_ops_match_the_models_they_were_fitted_as():
    # one decode step: 8 sequences of 4096 cached tokens, 32 query heads over 8 KV heads of 128
    op = attention_op([(1, 4096, 8)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    model = decode_attention_time(8, 4097, 32, 8, 128, "bf16", H100.gpu,
                                  params_for("decode_attention", "hopper", "bf16").params)
    assert time_op(op, H100.gpu, EFF).time_s == pytest.approx(model, rel=0.02)
    # a causal prefill of 2 x 2048 tokens: the op's bytes are the model's (Q, K, V, O once), no KV write here
    op = attention_op([(2048, 0, 2)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    model = prefill_attention_time(2, 2048, 32, 8, 128, "bf16", "bf16", H100.gpu,
                                   params_for("prefill_attention", "hopper", "bf16").params)
    assert time_op(op, H100.gpu, EFF).time_s == pytest.approx(model, rel=0.05)


def test_trtllm_blackwell_decode_is_priced_with_the_tile_it_was_fitted_with():
    """TensorRT-LLM's Blackwell decode fit pads a GQA group to 8 heads (kernel_models/decode_attention.py): the
    pricing path applies the shipped block as fitted, tile included."""
    b200 = load_system("b200").gpu
    eff = load_efficiency("default", b200, engine="trtllm")
    op = attention_op([(1, 4096, 64)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    p = params_for("decode_attention", "blackwell", "bf16", "trtllm").params
    assert p.group_rows == 8.0
    timed = time_op(op, b200, eff)
    assert timed.time_s == pytest.approx(decode_attention_time(64, 4097, 32, 8, 128, "bf16", b200, p), rel=0.02)
    padded16 = decode_attention_time(64, 4097, 32, 8, 128, "bf16", b200, replace(p, group_rows=16.0))
    assert timed.time_s < padded16


def test_a_compressed_or_sparsely_read_cache_streams_faster():
    full = attention_op([(1, 16384, 16)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    quarter = attention_op([(1, 16384, 16)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16",
                           kv_read=lambda tokens: tokens * 2 * 8 * 128 * 0.5)
    t_full, t_quarter = (time_op(o, H100.gpu, EFF) for o in (full, quarter))
    assert t_quarter.time_s < t_full.time_s
    assert t_quarter.memory_s == pytest.approx(t_full.memory_s / 4, rel=1e-2)   # Q and O bytes stay


def test_a_verify_pass_over_a_cache_never_costs_less_than_streaming_it():
    decode = attention_op([(1, 8192, 4)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    verify = attention_op([(17, 8192, 4)], 32, 8, 128, 128, 2.0, 2.0, 2 * 8 * 128, 1, "bf16")
    assert time_op(verify, H100.gpu, EFF).time_s >= time_op(decode, H100.gpu, EFF).time_s


def test_grouped_expert_gemms_use_the_fused_moe_fit():
    """8 touched experts, 512 routed rows (64 per expert: one 64-row tile each): compute at the MoE fit's
    efficiency, HBM bytes at its memory efficiency, half its floor, combined by its exponent."""
    base = gemm("experts", 512, 14336, 4096, 2, 2, "bf16", role=OpRole.EXPERT_UP)
    grouped = replace(base, shape=replace(base.shape, groups=8.0))
    p = moe_params("hopper", "bf16")
    t_c = 2.0 * 512 * 14336 * 4096 / (989e12 * p.compute_eff)
    t_m = grouped.hbm_bytes / (3.35e12 * p.memory_eff)
    expected = p.floor_s / 2 + (t_c ** p.smooth + t_m ** p.smooth) ** (1 / p.smooth)
    assert time_op(grouped, H100.gpu, EFF).time_s == pytest.approx(expected, rel=1e-6)
    # 100 rows per expert pad to 128-row tiles: more compute than the op's own FLOPs
    padded = replace(grouped, shape=replace(grouped.shape, m=800.0))
    assert time_op(padded, H100.gpu, EFF).compute_s > 2.0 * 800 * 14336 * 4096 / (989e12 * p.compute_eff)


def test_grouped_gemms_without_an_expert_role_and_other_sources_use_the_per_class_model():
    grouped = replace(gemm("experts", 512, 14336, 4096, 2, 2, "bf16"), shape=replace(
        gemm("experts", 512, 14336, 4096, 2, 2, "bf16").shape, groups=8.0))
    class_only = replace(EFF, engine=None)
    assert time_op(grouped, H100.gpu, EFF).time_s == time_op(grouped, H100.gpu, class_only).time_s
    plain = gemm("g", 256, 4096, 4096, 2, 2, "bf16")
    for source in ("ideal",):
        eff = load_efficiency(source, H100.gpu)
        assert eff.engine is None and time_op(plain, H100.gpu, eff).time_s != time_op(plain, H100.gpu, EFF).time_s


def test_engines_differ_and_the_small_all_reduce_is_the_engines_custom_kernel():
    vllm, sglang = (load_efficiency("default", DGX.gpu, engine=e) for e in ("vllm", "sglang"))
    g = [kernels.gemm_kernel(H100, e, 64, 8192, 8192, "bf16").time_s for e in (vllm, sglang)]
    assert g[0] != g[1]
    small = kernels.allreduce_kernel(DGX, vllm, 16384, 4).time_s
    # a 16 KB TP all-reduce under CUDA graphs: a few microseconds, not the tens an eager NCCL call costs
    assert 2e-6 < small < 15e-6
    big = [kernels.allreduce_kernel(DGX, vllm, n, 8).time_s for n in (1 << 20, 1 << 24, 1 << 28)]
    assert big == sorted(big)
    # 256 MB over 8 H100s cannot beat the NVLink 4 per-direction figure (450 GB/s), even with NVLS
    assert big[-1] > (1 << 28) / 450e9


def test_a_users_own_link_gets_the_nearest_fitted_generation():
    mine = replace(DGX.gpu_link, name="my-fabric")   # not a shipped profile: matched by type and bandwidth
    system = replace(DGX, gpu_link=mine)
    vllm = load_efficiency("default", DGX.gpu)
    for size in (16384, 1 << 24):
        ours, shipped = (kernels.allreduce_kernel(s, vllm, size, 8).time_s for s in (system, DGX))
        assert ours == shipped


def test_absorbed_mla_decode_is_timed_by_the_mla_fit_and_prefill_is_not():
    """DeepSeek-V3's decode op (128 heads over one 576-wide latent, 512 of it the value) is the MLA decode
    model's; vLLM takes TRT-LLM's fit, its own rows having been timed eagerly. The prefill op (per-head
    K/V expanded from the latent) stays with the per-class model."""
    from whatif.roofline.kernel_models.mla import mla_decode_time_arrays
    from whatif.roofline.kernel_models.params import ceilings
    op = attention_op([(1, 4095, 16)], 128, 1, 576, 512, 2.0, 2.0, 576, 1, "bf16", role=OpRole.MLA_ATTENTION)
    fit = params_for("mla_decode", "hopper", "bf16", "vllm")
    assert "TRT-LLM's graphed MLA fit stands in" in fit.provenance
    c = ceilings(H100.gpu)
    model = float(mla_decode_time_arrays(16, 4096, 128, 576, 512, 2.0, c.peak_flops("bf16"), c, fit.params))
    # the op's bytes also count its 128 heads' Q in and O out (6% beside the latent): the model's rescaled to them
    assert time_op(op, H100.gpu, EFF).time_s == pytest.approx(model, rel=0.06)
    assert time_op(op, H100.gpu, EFF).time_s > model
    prefill = attention_op([(1024, 0, 2)], 128, 128, 192, 128, 2.0, 2.0, 128 * 320, 1, "bf16",
                           role=OpRole.MLA_ATTENTION)
    class_only = replace(EFF, engine=None)
    assert time_op(prefill, H100.gpu, EFF).time_s == time_op(prefill, H100.gpu, class_only).time_s


def test_fp8_scenarios_attention_is_priced_by_the_fitted_models_at_the_fitters_peak():
    # fp8 GEMM activations give the attention op dtype fp8; it must still take the fitted kernel models
    # (it once fell back to the per-class model), decode at the 16-bit peak the decode fit was made with
    from whatif.roofline import kernel_timing
    bf16, fp8 = (attention_op([(1, 4096, 8)], 32, 8, 128, 128, 2.0, 1.0, 2 * 8 * 128, 1, d) for d in ("bf16", "fp8"))
    assert kernel_timing.covers(fp8, H100.gpu)
    assert kernel_timing.attention_peak_dtype(fp8) == "bf16"
    assert time_op(fp8, H100.gpu, EFF).time_s == pytest.approx(time_op(bf16, H100.gpu, EFF).time_s, rel=1e-12)
    # prefill over an fp8 cache runs an fp8 context kernel; over a 16-bit cache, a 16-bit one
    over_fp8 = attention_op([(2048, 0, 2)], 32, 8, 128, 128, 1.0, 1.0, 2 * 8 * 128, 1, "fp8")
    over_bf16 = attention_op([(2048, 0, 2)], 32, 8, 128, 128, 1.0, 2.0, 2 * 8 * 128, 1, "fp8")
    assert kernel_timing.attention_peak_dtype(over_fp8) == "fp8"
    assert kernel_timing.attention_peak_dtype(over_bf16) == "bf16"


def test_vllm_fp8_cache_prefill_is_priced_at_the_bf16_peak_its_fit_was_made_at():
    # vLLM's context rows over an fp8 cache all record attn_dtype bfloat16 (kernel_fit prices them at the bf16
    # peak); pricing them at the fp8 peak doubled the fitted rate: B200 Llama-3.1-70B TP1 8k 0.49 ms where
    # vLLM's table reads 0.84 (0.93 over a 16-bit cache). TensorRT-LLM and SGLang keep their fp8 context kernels.
    from whatif.roofline import kernel_timing
    over_fp8 = attention_op([(8192, 0, 1)], 64, 8, 128, 128, 1.0, 1.0, 2 * 8 * 128, 1, "fp8")
    over_bf16 = attention_op([(8192, 0, 1)], 64, 8, 128, 128, 1.0, 2.0, 2 * 8 * 128, 1, "fp8")
    assert kernel_timing.attention_peak_dtype(over_fp8, "vllm") == "bf16"
    assert kernel_timing.attention_peak_dtype(over_fp8, "trtllm") == "fp8"
    assert kernel_timing.attention_peak_dtype(over_fp8, "sglang") == "fp8"
    b200 = load_system("b200").gpu
    eff = load_efficiency("default", b200, engine="vllm")
    fp8_cache, bf16_cache = (time_op(op, b200, eff).time_s for op in (over_fp8, over_bf16))
    assert 0.8 < fp8_cache / bf16_cache < 1.1
