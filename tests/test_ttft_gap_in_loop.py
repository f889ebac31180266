"""benchmarks/ttft_gap_in_loop.py: a TTFT miss spent in the engine's prompt step shows in the decode streams' TPOT as
(N - 1) x gap / (OSL - 1), one outside the loop does not; deployments pair across OSL only on the whole layout, and a
measurement copied under another model name counts once (docs/accuracy.md, "Session 73 A")."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

tgl = load_benchmark("ttft_gap_in_loop")


def _row(osl, meas_ttft, pred_ttft, meas_tpot, pred_tpot, n=8, model="deepseek-ai/DeepSeek-R1", ep=1, **kw):
    base = dict(engine="trtllm", version="v", system="b200_sxm", mode="agg", model=model, gemm_quant="fp8",
                moe_quant="fp8", tp=8, ep=ep, attention_dp=1, isl=1024, osl=osl, concurrency=n, scored=1,
                measured_ttft_ms=meas_ttft, predicted_ttft_ms=pred_ttft, measured_tpot_ms=meas_tpot,
                predicted_tpot_ms=pred_tpot)
    return {**base, **kw}


def test_the_in_loop_expectation_is_the_other_clients_prompt_steps_spread_over_the_output():
    assert tgl.in_loop_tpot(102.3, 8, 1024) == pytest.approx(7 * 102.3 / 1023)
    assert tgl.in_loop_tpot(100.0, 1, 1024) == 0.0


def test_a_miss_spent_in_the_loop_reads_observed_equal_to_expected_and_one_outside_reads_zero():
    gap, n = 100.0, 8
    in_loop = [_row(1024, 200.0, 100.0, 10.0 + tgl.in_loop_tpot(gap, n, 1024), 10.0),
               _row(8192, 200.0, 100.0, 12.0 + tgl.in_loop_tpot(gap, n, 8192), 12.0)]
    outside = [_row(1024, 200.0, 100.0, 10.0, 10.0, ep=8), _row(8192, 200.0, 100.0, 12.0, 12.0, ep=8)]
    pairs = tgl.osl_pairs(pd.DataFrame(in_loop + outside)).set_index("ep")
    assert pairs.loc[1, "observed"] == pytest.approx(pairs.loc[1, "expected"])
    assert pairs.loc[8, "observed"] == pytest.approx(0.0) and pairs.loc[8, "expected"] > 0.5


def test_other_layouts_do_not_pair_and_a_copy_under_another_model_counts_once():
    rows = [_row(1024, 200.0, 100.0, 11.0, 10.0), _row(8192, 200.0, 100.0, 12.0, 12.0, ep=8),
            _row(1024, 180.0, 90.0, 11.0, 10.0, tp=4), _row(8192, 180.0, 90.0, 12.0, 12.0, tp=4),
            _row(1024, 180.0, 90.0, 11.0, 10.0, tp=4, model="deepseek-ai/DeepSeek-V3"),
            _row(8192, 180.0, 90.0, 12.0, 12.0, tp=4, model="deepseek-ai/DeepSeek-V3")]
    pairs = tgl.osl_pairs(pd.DataFrame(rows))
    assert len(pairs) == 1 and pairs.tp.iloc[0] == 4


def test_families_split_the_big_moe_models_from_the_campaigns_controls():
    assert tgl.family("deepseek-ai/DeepSeek-V3") == tgl.family("zhipuai/GLM-5") == "bigMoE"
    assert tgl.family("Qwen/Qwen3.5-397B-A17B") == "bigMoE"
    assert tgl.family("meta-llama/Llama-3.1-70B") == tgl.family("openai/gpt-oss-120b") == "control"
    assert tgl.family("moonshotai/Kimi-K2.5") == "other"


def test_a_bad_query_is_one_line_not_a_traceback(capsys):
    assert tgl.main(["--query", "no_such_column==1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --query") and len(err.strip().splitlines()) == 1
