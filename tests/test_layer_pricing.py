"""Each layer kind priced by its mechanism: a sliding or chunked layer reads at most its window, DSA reads its top-k
tokens plus the indexer's pass over the whole context, a recurrent layer reads and writes a constant state; the
memory plan holds each layer's own cache."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import check_parallelism, forward_ops
from whatif.roofline.memory import stored_kv_bytes
from whatif.roofline.techniques.compose import NONE
from whatif.specs.models import load_model

BF16 = Precision()


def ops_by_role(model, batch, par=None):
    out = {}
    for op in forward_ops(model, batch, par or Parallelism(tp=8), BF16):
        out.setdefault(str(op.role), []).append(op)
    return out


def test_a_sliding_layer_reads_at_most_its_window_and_a_full_one_the_whole_context():
    m = load_model("gpt-oss-120b")
    short, long = (ops_by_role(m, ForwardBatch.decode(4, c))["attention"] for c in (1_000, 100_000))
    # two attention ops: the sliding layers' (first kind) and the full layers'
    (slide_s, full_s), (slide_l, full_l) = short, long
    assert slide_s.hbm_bytes == pytest.approx(slide_l.hbm_bytes)          # both past the 128-token window
    assert full_l.hbm_bytes > 50 * full_s.hbm_bytes / 2 and full_l.hbm_bytes > 100 * slide_l.hbm_bytes


def test_sliding_prefill_computes_only_windowed_pairs():
    m = load_model("gpt-oss-120b")
    slide, full = ops_by_role(m, ForwardBatch.prefill(1, 8192))["attention"]
    assert slide.flops / full.flops == pytest.approx((8192 * 128 - 128 * 127 / 2) / (8192 * 8193 / 2), rel=1e-6)


def test_chunked_layers_read_only_their_chunk():
    m = load_model("llama-4-scout")
    chunked, full = ops_by_role(m, ForwardBatch.decode(1, 8192 * 3 + 10))["attention"]
    assert chunked.shape.max_context == 11 and full.shape.max_context == 8192 * 3 + 11


def test_dsa_attends_its_top_k_and_its_indexer_scans_the_whole_context():
    m = load_model("deepseek-v3.2")
    near, far = (ops_by_role(m, ForwardBatch.decode(8, c)) for c in (4_000, 64_000))
    assert near["mla_attention"][0].hbm_bytes == pytest.approx(far["mla_attention"][0].hbm_bytes)   # 2048 each
    assert far["sparse_indexer"][-1].hbm_bytes > 10 * near["sparse_indexer"][-1].hbm_bytes
    v3 = ops_by_role(load_model("deepseek-v3"), ForwardBatch.decode(8, 64_000))
    assert v3["mla_attention"][0].hbm_bytes > 20 * far["mla_attention"][0].hbm_bytes


@pytest.mark.parametrize("name,role", [("qwen3.5-397b-a17b", "linear_attention"), ("nemotron-h-56b", "ssm_scan")])
def test_a_recurrent_layer_reads_its_state_whatever_the_context(name, role):
    m = load_model(name)
    near, far = (ops_by_role(m, ForwardBatch.decode(8, c))[role][0] for c in (100, 8000))
    assert near.hbm_bytes == far.hbm_bytes and near.flops == far.flops
    assert "kv_write" in ops_by_role(m, ForwardBatch.decode(8, 100))        # its attention layers still append


def test_the_cache_a_sequence_holds_follows_each_layer_kind():
    par = Parallelism(tp=8)
    gpt = load_model("gpt-oss-120b")
    grow = stored_kv_bytes(gpt, par, BF16, NONE, 20_001) - stored_kv_bytes(gpt, par, BF16, NONE, 20_000)
    assert grow == 18 * 2 * 1 * 64 * 2                                      # full layers only, 1 KV head per GPU
    qwen = load_model("qwen3.5-397b-a17b")
    state = stored_kv_bytes(qwen, par, BF16, NONE, 0)
    assert state == pytest.approx(45 * (64 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 64 * 128) * 2) / 8)


def test_tp_must_split_the_recurrent_heads():
    with pytest.raises(WhatifError, match="does not divide the 16 linear-attention key heads"):
        check_parallelism(load_model("qwen3.5-397b-a17b"), Parallelism(tp=32))


def test_a_kv_technique_shapes_the_attention_layers_and_leaves_recurrent_states_alone():
    from whatif.roofline.techniques.registry import technique_set
    m, par = load_model("qwen3.5-35b-a3b"), Parallelism(tp=2)
    kivi = technique_set(["kivi"])
    state = stored_kv_bytes(m, par, BF16, NONE, 0)
    assert stored_kv_bytes(m, par, BF16, kivi, 0) == pytest.approx(state)      # no tokens: only the states
    grow = [stored_kv_bytes(m, par, BF16, t, 100_001) - stored_kv_bytes(m, par, BF16, t, 100_000) for t in (NONE, kivi)]
    assert grow[1] < grow[0] / 3                                               # 2-bit keys/values on the 10 layers
    ops = forward_ops(m, ForwardBatch.decode(4, 4000), par, BF16, techs=kivi)
    assert {op.count for op in ops if op.name == "kv_quantize"} == {10}        # one per attention layer, not 40


def test_a_vision_encoder_sits_in_the_first_stages_weights_16_bit():
    from whatif.roofline.memory import stage_weight_bytes
    k2, k25 = load_model("kimi-k2"), load_model("kimi-k2.5")
    par = Parallelism(tp=8, pp=2)
    assert stage_weight_bytes(k25, par, BF16, 0) - stage_weight_bytes(k2, par, BF16, 0) == 2 * k25.encoder_params()
    assert stage_weight_bytes(k25, par, BF16, 1) == stage_weight_bytes(k2, par, BF16, 1)


def test_a_kv_technique_on_a_hybrid_model_says_what_it_skips():
    from whatif.roofline.techniques.registry import technique_set
    notes = technique_set(["kivi"]).notes(load_model("qwen3.5-35b-a3b"))
    assert any("30 recurrent layers keep their state" in n for n in notes)
    assert not any("recurrent" in n for n in technique_set(["kivi"]).notes(load_model("qwen3-32b")))


def test_gemma4_global_layers_run_their_own_head_shape_and_cache_it():
    m = load_model("gemma-4-31b")   # sliding: 32 x 256 over 16 KV heads; global: 32 x 512 over 4, K and V cached
    ops = ops_by_role(m, ForwardBatch.decode(4, 100_000), Parallelism(tp=2))
    slide, full = ops["attention"]
    assert (slide.count, slide.shape.kv_heads, slide.shape.d_qk) == (50, 8, 256)
    assert (full.count, full.shape.kv_heads, full.shape.d_qk, full.shape.heads) == (10, 2, 512, 16)
    # vLLM loads k_proj into both the K and V slots of one QKV GEMM: a global layer's is (16 + 2 x 2) x 512 wide
    widths = sorted({op.shape.n for op in ops["qkv_proj"]})
    assert widths == [(16 + 2 * 8) * 256, (16 + 2 * 2) * 512]
    par = Parallelism(tp=2)
    grow = stored_kv_bytes(m, par, BF16, NONE, 20_001) - stored_kv_bytes(m, par, BF16, NONE, 20_000)
    assert grow == 10 * 2 * 2 * 512 * 2                                     # global layers only, 2 KV heads per GPU
    from dataclasses import replace
    with pytest.raises(WhatifError, match="neither divides nor is a multiple of the 3 full-attention layers' KV"):
        check_parallelism(replace(m, global_kv_heads=3), Parallelism(tp=4))


def test_glm52_runs_its_indexer_on_21_layers_and_every_layer_attends_the_top_k():
    m, g = load_model("glm-5.2"), load_model("glm-5")   # IndexShare: layers 0-2, then every 4th from 6
    ops, ops5 = (ops_by_role(x, ForwardBatch.decode(8, 64_000)) for x in (m, g))
    assert sum(op.count for op in ops["sparse_indexer"] if op.name == "indexer_scores") == 21
    assert sum(op.count for op in ops5["sparse_indexer"] if op.name == "indexer_scores") == 78
    attn = ops["mla_attention"]   # the 57 reusing layers still read top-k latents only, as the 21 do
    assert sum(op.count for op in attn) == 78 and len({op.hbm_bytes for op in attn}) == 1
    par = Parallelism(tp=8)
    grow = stored_kv_bytes(m, par, BF16, NONE, 20_001) - stored_kv_bytes(m, par, BF16, NONE, 20_000)
    assert grow == 78 * 576 * 2 + 21 * 132                                  # latent replicated; keys on 21 layers
    assert g.total_params() - m.total_params() == 57 * m.indexer.params(6144, 2048)


def test_kimi_delta_attention_is_gdns_recurrence_with_a_channel_gate_and_low_rank_gates():
    """Kimi-Linear's KDA layers: GDN's state (32 heads x 128 x 128, fp32 as vLLM keeps it) read and written once a
    decode step whatever the context; the decay gate is a key channel's (4,096 values a token, not 32); f_b / g_b
    lift the rank-128 f_a / g_a outputs (split by TP, f_a / g_a replicated); no fused qkvzba split kernel."""
    m = load_model("kimi-linear-48b-a3b")
    par = Parallelism(tp=2)
    near, far = (ops_by_role(m, ForwardBatch.decode(8, c), par) for c in (100, 8000))
    kda, kda_far = near["linear_attention"][0], far["linear_attention"][0]
    assert kda.name == "kimi_delta_attention" and kda.hbm_bytes == kda_far.hbm_bytes
    state = 2 * 8 * 16 * 128 * 128 * 4                     # read + write, 8 sequences, 16 heads a GPU, fp32
    io = 8 * (2 * 16 * 128 + 2 * 16 * 128 + 4096 / 2 + 16) * 2     # q, k, v, o, the channel gate, beta (bf16)
    assert kda.hbm_bytes == pytest.approx(state + io)
    names = [op.name for op in forward_ops(m, ForwardBatch.decode(8, 100), par, BF16)]
    assert {"kda_f_b_proj", "kda_g_b_proj", "kda_gate"} <= set(names) and "mixer_split" not in names
    gemm = {op.name: op for op in forward_ops(m, ForwardBatch.decode(8, 100), par, BF16)}
    assert gemm["kda_f_b_proj"].flops == 2 * 8 * 128 * 4096 / 2
    assert gemm["mixer_in_proj"].flops == 2 * 8 * 2304 * ((3 * 4096 + 32) / 2 + 2 * 128)
