"""benchmarks/disagg_agg_twins.py: a light-load disaggregated row beside the aggregated rows of its prefill layout."""
from tests.benchmark_module import load_benchmark

twins_mod = load_benchmark("disagg_agg_twins")


def _row(mode, **kw):
    base = dict(backend="trtllm", system="b200_sxm", model_path="deepseek-ai/DeepSeek-R1", gemm_quant_mode="fp8",
                isl="8192", measured_ttft_ms="300", predicted_ttft_ms="200", concurrency="4", id=mode)
    return {**base, **kw}


def test_deepseek_v3_and_r1_are_one_architecture():
    assert twins_mod.model_family("deepseek-ai/DeepSeek-V3") == twins_mod.model_family("nvidia/DeepSeek-R1-FP4")
    assert twins_mod.model_family("Qwen/Qwen3-32B") == "qwen/qwen3-32b"


def test_the_prefill_pool_layout_is_matched_not_the_decode_pool():
    disagg = _row("d", prefill_tp_size="8", prefill_attention_dp_size="1", prefill_moe_ep_size="1",
                  prefill_moe_tp_size="8", tp_size="1", attention_dp_size="8", moe_ep_size="8", moe_tp_size="1")
    tp8 = _row("a_tp8", tp_size="8", attention_dp_size="1", moe_ep_size="1", moe_tp_size="8")
    adp8 = _row("a_adp8", tp_size="1", attention_dp_size="8", moe_ep_size="8", moe_tp_size="1")
    other_isl = _row("a_1k", isl="1024", tp_size="8", attention_dp_size="1", moe_ep_size="1", moe_tp_size="8")
    [(d, ts)] = twins_mod.twins([disagg], [tp8, adp8, other_isl])
    assert d is disagg and [t["id"] for t in ts] == ["a_tp8"]


def test_any_ep_loosens_only_the_expert_layout():
    disagg = _row("d", prefill_tp_size="4", prefill_moe_tp_size="4", prefill_moe_ep_size="1")
    ep4 = _row("a_ep4", tp_size="4", moe_tp_size="1", moe_ep_size="4")
    assert twins_mod.twins([disagg], [ep4])[0][1] == []
    assert [t["id"] for t in twins_mod.twins([disagg], [ep4], with_ep=False)[0][1]] == ["a_ep4"]


def test_summary_reads_measured_over_predicted():
    rows = [_row("a", measured_ttft_ms="300", predicted_ttft_ms="200", concurrency="4"),
            _row("b", measured_ttft_ms="200", predicted_ttft_ms="200", concurrency="16")]
    assert twins_mod.summary(rows) == "2, N 4-16, x1.25 (x1.00-1.50)"
    assert twins_mod.summary([]) == "none"


def test_the_twin_factor_falls_back_from_the_layout_to_any_layout():
    """Same EP first, then the attention layout, then any layout of the engine/GPU/precision/ISL; none -> None."""
    disagg = _row("d", prefill_tp_size="4", prefill_attention_dp_size="1", prefill_moe_tp_size="4",
                  prefill_moe_ep_size="1")
    same = _row("a_tp4", tp_size="4", moe_tp_size="4", moe_ep_size="1", measured_ttft_ms="400")
    ep4 = _row("a_ep4", tp_size="4", moe_tp_size="1", moe_ep_size="4", measured_ttft_ms="300")
    tp8 = _row("a_tp8", tp_size="8", moe_tp_size="8", moe_ep_size="1", measured_ttft_ms="500")
    assert twins_mod.twin_factor(disagg, [same, ep4, tp8]) == (2.0, "same EP (1)")
    assert twins_mod.twin_factor(disagg, [ep4, tp8]) == (1.5, "any EP (1)")
    assert twins_mod.twin_factor(disagg, [tp8]) == (2.5, "any layout (1)")
    assert twins_mod.twin_factor(disagg, [_row("x", isl="1024", tp_size="4")]) == (None, "none")
