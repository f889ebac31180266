"""benchmarks/qwen35_decode_ops.py: its table lookups (decode attention between the table's cached lengths) and its
per-layer sums of the estimate's ops, on made-up rows; the shared tables themselves are not needed."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

q = load_benchmark("qwen35_decode_ops")
OpSum = load_benchmark("step_ops").OpSum


def test_attention_reads_linearly_between_the_tables_cached_lengths():
    rows = pd.DataFrame({"step": [1023, 1023, 2047], "latency_ms": [0.010, 0.012, 0.020]})
    assert q._at_context(rows, 1535) == pytest.approx(0.011 + 0.009 * 512 / 1024)
    assert q._at_context(rows, 4096) == pytest.approx(0.020)   # past the last length: the last one, no extrapolation
    assert q._at_context(rows.iloc[:0], 1535) is None


def test_per_layer_divides_a_familys_total_by_the_layers_that_run_it():
    ops = {"experts_gate_up": OpSum(60, 60 * 20e-6), "experts_down": OpSum(60, 60 * 14e-6),
           "gated_deltanet": OpSum(45, 45 * 5e-6)}
    assert q.per_layer(ops, ("experts_gate_up", "experts_act", "experts_down")) == pytest.approx(34.0)
    assert q.per_layer(ops, ("gated_deltanet",)) == pytest.approx(5.0)
    assert q.per_layer(ops, ("attention",)) is None


def test_moe_regime_follows_the_fits_rows_per_expert_seam():
    # Qwen3.5-397B: 512 experts, top-10. 768 tokens route 15 rows a touched expert (small-M, <= SMALL_M = 16);
    # 1,024 route 20 (large-M): the seam where the fit's price jumps (docs/accuracy.md, session 62 O).
    assert q.moe_regime(768) == "small-M"
    assert q.moe_regime(1024) == "large-M"
    assert q.moe_regime(8) == "small-M"   # 80 slots over 80 touched experts: one row each
    assert q.moe_regime(64, topk=8, experts=256) == "small-M" and q.moe_regime(1024, topk=8, experts=256) == "large-M"


def test_moe_seam_reads_the_table_by_layout_and_distribution(monkeypatch):
    monkeypatch.setattr(q, "_priced_experts_us", lambda tp, n: 100.0 * tp)
    moe = pd.DataFrame({"moe_dtype": ["fp8_block"] * 3 + ["bfloat16"], "moe_tp_size": [4, 4, 8, 4],
                        "moe_ep_size": [1] * 4, "num_tokens": [1024] * 4,
                        "distribution": ["balanced", "power_law_1.01", "balanced", "balanced"],
                        "latency_ms": [0.45, 0.42, 0.31, 9.0]})
    rows = q.moe_seam([1024], moe)
    assert rows[0] == (4, 1024, 20.0, "large-M", pytest.approx(450.0), pytest.approx(420.0), 400.0)
    assert rows[1][:4] == (8, 1024, 20.0, "large-M") and rows[1][4] == pytest.approx(310.0) and rows[1][5] is None


def test_prefill_measured_reads_each_family_at_the_layouts_shape():
    # TP4 EP4 at 8,192 tokens: moe_tp 1 x EP 4 fp8_block rows; GDN at 4 key / 16 value heads, batch 1; trtllm_mha
    # at 8 query heads over 1 KV head (2 KV heads at TP4 keep one a rank), fp8 q and KV; the 8192 x 4096 x 2 B reduce
    moe = pd.DataFrame({"moe_dtype": ["fp8_block"] * 3, "moe_tp_size": [1, 1, 4], "moe_ep_size": [4, 4, 1],
                        "num_tokens": [8192] * 3, "distribution": ["balanced", "power_law_1.01", "balanced"],
                        "latency_ms": [1.05, 1.19, 9.0]})
    gdn = pd.DataFrame({"num_k_heads": [4, 4, 2], "num_v_heads": [16, 16, 8], "batch_size": [1, 1, 1],
                        "seq_len": [8192] * 3, "kernel_source": ["chunk_gated_delta_rule", "causal_conv1d_fn",
                                                                 "chunk_gated_delta_rule"],
                        "latency": [0.434, 0.038, 9.0]})
    att = pd.DataFrame({"num_heads": [8, 8], "num_key_value_heads": [1, 1], "attn_dtype": ["fp8", "bfloat16"],
                        "kv_cache_dtype": ["fp8", "bfloat16"], "batch_size": [1, 1], "isl": [8192, 8192],
                        "latency_ms": [0.25, 0.33]})
    comm = pd.DataFrame({"num_gpus": [4, 8], "bytes": [8192 * 4096 * 2] * 2, "latency_ms": [0.214, 0.291]})
    got = q.prefill_measured((moe, gdn, att, comm), "fp8", 4, 4, 8192)
    assert got["moe"] == (pytest.approx(1050.0), pytest.approx(1190.0))
    assert got["gdn chunked"][0] == pytest.approx(434.0) and got["gdn conv1d"][0] == pytest.approx(38.0)
    assert got["attention"][0] == pytest.approx(250.0) and got["all-reduce"][0] == pytest.approx(214.0)
    assert q.prefill_measured((moe, gdn, att, comm), "fp8", 4, 4, 4096)["moe"] == (None, None)   # no row: None
