"""benchmarks/ttft_gap_across_engines.py: cells are matched on the whole layout unless a column is freed, a pair
copied under another model name counts once, and the band table reads each engine's gap (docs/accuracy.md,
"Session 71 Q")."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

tge = load_benchmark("ttft_gap_across_engines")


def _row(engine, n, meas, pred, tpot=10.0, model="x/M", ep=8, **kw):
    base = dict(engine=engine, system="b200_sxm", model=model, version="v", tp=8, ep=ep, attention_dp=1,
                gemm_quant="nvfp4", moe_quant="nvfp4", isl=1024, osl=1024, concurrency=n, mode="agg", scored=1,
                measured_ttft_ms=meas, predicted_ttft_ms=pred, measured_tpot_ms=tpot, predicted_tpot_ms=tpot)
    return {**base, **kw}


def test_a_shared_gap_reads_equal_and_the_engine_difference_is_measured_against_predicted():
    table = pd.DataFrame([_row("sglang", 4, 200.0, 90.0), _row("trtllm", 4, 170.0, 60.0, tpot=5.0)])
    band = tge.by_band(tge.matched(table, "sglang", "trtllm", "mode=='agg'")).iloc[0]
    assert band.cells == 1 and band.gap_a == pytest.approx(110.0) and band.gap_b == pytest.approx(110.0)
    assert band.gap_steps_a == pytest.approx(11.0) and band.gap_steps_b == pytest.approx(22.0)
    assert band.diff_meas == pytest.approx(30.0) and band.diff_pred == pytest.approx(30.0)


def test_cells_of_another_layout_match_only_when_that_column_is_freed():
    table = pd.DataFrame([_row("sglang", 4, 200.0, 90.0, ep=8), _row("trtllm", 4, 170.0, 60.0, ep=1)])
    assert tge.matched(table, "sglang", "trtllm", "mode=='agg'").empty
    assert len(tge.matched(table, "sglang", "trtllm", "mode=='agg'", free=("ep",))) == 1


def test_a_measurement_pair_copied_under_another_model_name_counts_once():
    rows = [_row(e, 4, m, 50.0, model=name) for name in ("x/R1", "x/V3") for e, m in (("sglang", 200.0),
                                                                                    ("trtllm", 170.0))]
    assert len(tge.matched(pd.DataFrame(rows), "sglang", "trtllm", "mode=='agg'")) == 1


def test_a_bad_query_is_one_line(capsys):
    assert tge.main(["--query", "no_such_column > 1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
