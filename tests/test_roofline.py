"""Structural facts and mechanisms of the roofline engine (no calibration needed)."""
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whatif.errors import WhatifError
from whatif.specs.hardware import load_system
from whatif.specs.models import load_model
from whatif.roofline.attention import causal_pairs
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.efficiency import IDEAL, load_efficiency
from whatif.roofline.estimate import Workload, estimate, prefill_passes
from whatif.roofline.graph import check_parallelism, forward_ops, stage_layers
from whatif.roofline.memory import stage_weight_bytes
from whatif.roofline.moe import busiest_rank_touched, experts_touched
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op

H100 = load_system("h100-sxm")
LLAMA7 = load_model("llama-2-7b")
BF16 = Precision()


def ops_by_name(model, batch, par=None, prec=BF16, stage=0):
    par = par or Parallelism()
    return {op.name: op for op in forward_ops(model, batch, par, prec, stage)}


def test_gemm_flops_and_bytes():
    op = gemm("g", 3, 5, 7, 2.0, 1.0, "bf16")
    assert op.flops == 2 * 3 * 5 * 7
    assert op.hbm_bytes == 3 * 7 * 2 + 7 * 5 * 1 + 3 * 5 * 2


def test_llama2_7b_structure():
    assert LLAMA7.total_params() == 6_738_415_616
    assert LLAMA7.kv_elements_per_token() * 2 == 524_288


def test_decode_reads_each_weight_and_the_kv_cache_once():
    batch, ctx = 4, 1000
    ops = forward_ops(LLAMA7, ForwardBatch.decode(batch, ctx), Parallelism(), BF16)
    weight_reads = sum(op.shape.k * op.shape.n * 2 * op.count for op in ops if op.op_class == "gemm")
    # every linear weight of the model (embeddings are gathered, not read whole)
    linear = LLAMA7.total_params() - LLAMA7.vocab_size * LLAMA7.hidden_size - LLAMA7.hidden_size * (2 * 32 + 1)
    assert weight_reads == pytest.approx(linear * 2, rel=1e-9)
    attn = next(op for op in ops if op.name == "attention")
    kv_per_layer_token = 2 * 32 * 128 * 2
    q_and_o = batch * 32 * 256 * 2
    assert attn.hbm_bytes == batch * (ctx + 1) * kv_per_layer_token + q_and_o   # read once, not twice


def test_prefill_attention_is_causal():
    p = 1024
    attn = ops_by_name(LLAMA7, ForwardBatch.prefill(1, p))["attention"]
    assert attn.flops == 2 * 32 * 256 * p * (p + 1) / 2   # half of the full 4*H*d*P^2 (plus diagonal)
    assert causal_pairs(4, 10) == 4 * 10 + 10
    assert "l2" in attn.bytes and attn.hbm_bytes < attn.flops   # S x S scores never reach HBM


def test_ideal_decode_step_is_weight_bytes_over_bandwidth():
    e = estimate(LLAMA7, H100, Parallelism(), BF16, Workload(1, 128, 2), IDEAL)
    weights = LLAMA7.total_params() * 2 - LLAMA7.vocab_size * LLAMA7.hidden_size * 2
    assert e.tpot_s == pytest.approx(weights / H100.gpu.hbm_bandwidth.value, rel=0.02)


def test_default_efficiency_is_never_faster_than_ideal():
    eff = load_efficiency("default", H100.gpu)
    for batch in (ForwardBatch.prefill(2, 700), ForwardBatch.decode(16, 3000)):
        for op in forward_ops(LLAMA7, batch, Parallelism(), BF16):
            assert time_op(op, H100.gpu, eff).time_s >= time_op(op, H100.gpu, IDEAL).time_s


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 16384), n=st.integers(1, 16384), k=st.integers(1, 16384), scale=st.floats(1.01, 4.0))
def test_more_bandwidth_or_compute_is_never_slower(m, n, k, scale):
    eff = load_efficiency("default", H100.gpu)
    op = gemm("g", m, n, k, 2.0, 2.0, "bf16")
    base = time_op(op, H100.gpu, eff).time_s
    bw = H100.gpu.hbm_bandwidth
    faster_mem = replace(H100.gpu, hbm_bandwidth=replace(bw, value=bw.value * scale))
    peak = dict(H100.gpu.peak)
    peak["bf16"] = replace(peak["bf16"], value=peak["bf16"].value * scale)
    faster_flops = replace(H100.gpu, peak=peak)
    assert time_op(op, faster_mem, eff).time_s <= base * (1 + 1e-12)
    assert time_op(op, faster_flops, eff).time_s <= base * (1 + 1e-12)


def test_wave_quantization_shows_in_default_not_in_ideal():
    eff = load_efficiency("default", H100.gpu)
    sms = int(H100.gpu.sm_count.value)
    full = gemm("g", 128 * sms, 256, 8192, 2, 2, "bf16")      # exactly one wave of 128x256 tiles
    over = gemm("g", 128 * sms + 128, 256, 8192, 2, 2, "bf16")  # one tile row more
    r_default = time_op(over, H100.gpu, eff).compute_s / time_op(full, H100.gpu, eff).compute_s
    r_ideal = time_op(over, H100.gpu, IDEAL).compute_s / time_op(full, H100.gpu, IDEAL).compute_s
    assert r_ideal == pytest.approx((sms + 1) / sms)
    assert r_default > 1.2 * r_ideal   # one tile row more costs a partial wave, not 1/132 more


def test_tensor_parallel_splits_weights_and_adds_allreduces():
    one = stage_weight_bytes(LLAMA7, Parallelism(tp=1), BF16, 0)
    two = stage_weight_bytes(LLAMA7, Parallelism(tp=2), BF16, 0)
    assert two == pytest.approx(one / 2, rel=0.001)
    assert "attn_allreduce" not in ops_by_name(LLAMA7, ForwardBatch.decode(1, 10))
    ops = ops_by_name(LLAMA7, ForwardBatch.decode(1, 10), Parallelism(tp=2))
    assert ops["attn_allreduce"].shape.bytes == 4096 * 2 and ops["attn_allreduce"].count == 32


def test_pipeline_stages_cover_all_layers_once():
    m = load_model("llama-3-70b")
    layers = [i for s in range(3) for i in stage_layers(m, 3, s)]
    assert layers == list(range(m.num_layers))
    e1 = estimate(m, load_system("dgx-h100"), Parallelism(tp=4, pp=1), BF16, Workload(1, 256, 8),
                  load_efficiency("default", H100.gpu))
    e2 = estimate(m, load_system("dgx-h100"), Parallelism(tp=4, pp=2), BF16, Workload(1, 256, 8),
                  load_efficiency("default", H100.gpu))
    assert e2.memory.weights_bytes < 0.6 * e1.memory.weights_bytes
    assert e2.tpot_s > e1.tpot_s * 0.9   # one sequence gains nothing from a pipeline


def test_busiest_ep_rank_touches_more_experts_than_the_mean_at_few_tokens():
    # DeepSeek-V3 (256 experts, top 8) on 16 EP ranks: one token's 8 experts, the mean rank 0.5, the busiest 1-3
    one = busiest_rank_touched(16, 8, 1, 256, 16)
    assert experts_touched(16, 8, 1, 256) == pytest.approx(0.5)
    assert 1.5 < one < 3.0
    assert busiest_rank_touched(256, 8, 1, 256, 1) == pytest.approx(8.0)   # no EP: the mean
    many = [busiest_rank_touched(16, 8, t, 256, 16) for t in (1, 4, 16, 64, 1024)]
    assert many == sorted(many) and many[-1] == pytest.approx(16.0, rel=1e-3)


def test_moe_reads_only_touched_experts():
    assert experts_touched(8, 2, 1, 8) == pytest.approx(2.0)
    assert experts_touched(8, 2, 10_000, 8) == pytest.approx(8.0)
    mix = load_model("mixtral-8x7b")
    small = ops_by_name(mix, ForwardBatch.decode(1, 100))["experts_gate_up"]
    large = ops_by_name(mix, ForwardBatch.decode(256, 100))["experts_gate_up"]
    per_expert = 2 * 14336 * 4096 * 2
    assert small.hbm_bytes == pytest.approx(2 * per_expert, rel=0.01)
    assert large.hbm_bytes > 7.9 * per_expert


def test_mla_cache_is_latent_and_not_split_by_tp():
    ds = load_model("deepseek-v3")
    for tp in (1, 8):
        attn = ops_by_name(ds, ForwardBatch.decode(1, 4096), Parallelism(tp=tp, ep=tp))["attention_mla"]
        assert attn.hbm_bytes >= 4097 * (512 + 64) * 2


def test_bad_parallelism_is_a_clear_error():
    with pytest.raises(WhatifError, match="does not divide the 32 attention heads"):
        check_parallelism(LLAMA7, Parallelism(tp=3))
    with pytest.raises(WhatifError, match="no experts"):
        check_parallelism(LLAMA7, Parallelism(tp=2, ep=2))
    with pytest.raises(WhatifError, match="GPUs"):
        estimate(LLAMA7, H100, Parallelism(tp=2), BF16, Workload(), IDEAL)


def test_memory_capacity_answers():
    e = estimate(LLAMA7, H100, Parallelism(), BF16, Workload(1, 1000, 1000), IDEAL)
    m = e.memory
    # max batch also makes room for the activations of the larger prefill pass that batch runs, so it
    # is at most what fits beside batch 1's activations (equal unless that pass tips it over)
    assert 0 < e.max_batch <= m.max_sequences(2000) <= e.max_batch + 1
    assert m.max_sequences(4000) < m.max_sequences(2000)
    assert m.max_context(e.max_batch) >= 2000
    one_more = estimate(LLAMA7, H100, Parallelism(), BF16, Workload(e.max_batch + 1, 1000, 1000), IDEAL,
                        with_max_batch=False)
    assert not one_more.memory.fits
    big = estimate(load_model("llama-2-70b"), H100, Parallelism(), BF16, Workload(1, 100, 10), IDEAL)
    assert not big.memory.fits


def test_int4_weights_shrink_memory_and_decode_time():
    eff = load_efficiency("default", H100.gpu)
    bf = estimate(LLAMA7, H100, Parallelism(), BF16, Workload(1, 128, 32), eff)
    q4 = estimate(LLAMA7, H100, Parallelism(), Precision(weight="int4"), Workload(1, 128, 32), eff)
    assert q4.memory.weights_bytes < 0.35 * bf.memory.weights_bytes
    assert q4.tpot_s < 0.6 * bf.tpot_s
    assert q4.max_batch > bf.max_batch


def test_prefill_chunks_cover_every_prompt_token():
    for batch, prompt, chunk in ((3, 100, 250), (2, 1000, 256), (5, 256, 256)):
        passes = prefill_passes(batch, prompt, chunk)
        assert sum(p.tokens * n for p, n in passes) == batch * prompt
        assert all(p.tokens <= chunk for p, _ in passes)


def test_eager_decode_can_be_launch_bound():
    small = load_model("llama-68m")
    eff = load_efficiency("default", H100.gpu)
    graphs = estimate(small, H100, Parallelism(), BF16, Workload(1, 64, 16), eff, cuda_graphs=True)
    eager = estimate(small, H100, Parallelism(), BF16, Workload(1, 64, 16), eff, cuda_graphs=False)
    assert eager.decode.launch_s == pytest.approx(eager.decode.kernels * H100.gpu.launch_overhead.value)
    assert graphs.decode.launch_s == 0 and eager.tpot_s >= graphs.tpot_s
    slow_host = replace(H100, gpu=replace(H100.gpu, launch_overhead=replace(H100.gpu.launch_overhead, value=20e-6)))
    cpu_bound = estimate(small, slow_host, Parallelism(), BF16, Workload(1, 64, 16), eff, cuda_graphs=False)
    assert cpu_bound.decode.launch_s > cpu_bound.decode.gpu_s
    assert cpu_bound.tpot_s > graphs.tpot_s


def test_efficiency_sources_and_their_provenance(tmp_path):
    h200 = load_system("h200-sxm").gpu
    assert "transferred from h100-sxm" in load_efficiency("default", h200).provenance
    h100 = load_efficiency("default", H100.gpu).provenance
    assert h100.startswith("engine vllm") and "fitted on" in h100 and "rows of h100-sxm" in h100
    assert "engine sglang" in load_efficiency("default", H100.gpu, engine="sglang").provenance
    with pytest.raises(WhatifError, match="--engine: 'tgi' is not valid; valid: vllm, sglang, trtllm"):
        load_efficiency("default", H100.gpu, engine="tgi")
    calib = tmp_path / "h100.yaml"
    calib.write_text("gpu: h100-sxm\nprovenance: test fit\nclasses:\n  gemm: {compute_eff: 0.5, memory_eff: 0.5}\n")
    eff = load_efficiency("calibrated", H100.gpu, str(calib))
    op = gemm("g", 4096, 4096, 4096, 2, 2, "bf16")
    assert eff.source == "calibrated"
    assert time_op(op, H100.gpu, eff).time_s > time_op(op, H100.gpu, load_efficiency("default", H100.gpu)).time_s
    with pytest.raises(WhatifError, match="not 'h200-sxm'"):
        load_efficiency("calibrated", h200, str(calib))
    with pytest.raises(WhatifError, match="needs --calibration"):
        load_efficiency("calibrated", H100.gpu)
    bad = tmp_path / "bad.yaml"
    bad.write_text("classes:\n  gemm: {speed: 2}\n")
    with pytest.raises(WhatifError, match="valid: compute_eff"):
        load_efficiency("calibrated", H100.gpu, str(bad))
