"""benchmarks/ttft_isl_slope.py: the slope ratio tells a miss that grows with the prompt from a flat one, and the
committed table keeps the Qwen3.5 / DeepSeek-R1 contrast it reports (docs/accuracy.md, "Session 74 F")."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

slope = load_benchmark("ttft_isl_slope")


def _rows(measured):
    base = dict(model="m", engine="sglang", version="1", gemm_quant="fp8", tp=4, ep=1, attention_dp=1, osl=1024,
                concurrency=4)
    return pd.DataFrame([{**base, "isl": isl, "predicted_ttft_ms": pred, "measured_ttft_ms": measured(pred)}
                         for isl, pred in ((1024, 100.0), (8192, 300.0))])


def test_a_flat_miss_reads_slope_one_and_a_per_token_miss_does_not():
    flat = slope.slope_table(_rows(lambda p: p + 80)).iloc[0]
    assert flat.slope_ratio == pytest.approx(1.0) and flat.excess_short_ms == pytest.approx(80.0)
    scaled = slope.slope_table(_rows(lambda p: 1.5 * p)).iloc[0]
    assert scaled.slope_ratio == pytest.approx(1.5) and scaled.d_measured_ms == pytest.approx(300.0)


def test_a_deployment_with_one_prompt_length_gives_no_row():
    rows = _rows(lambda p: p)
    assert slope.slope_table(rows[rows.isl == 1024]).empty


def test_the_committed_table_keeps_qwen35_tp4_above_deepseek_tp4():
    table = slope.slope_table(pd.read_csv(slope.CSV).query("scored == 1 and engine == 'sglang' and version == '0.5.9'"))
    tp4 = table[(table.tp == 4) & (table.concurrency >= 16) & (table.concurrency <= 128)]
    qwen = tp4[tp4.model.str.contains("Qwen3.5")].slope_ratio
    deepseek = tp4[tp4.model.str.contains("DeepSeek-R1") & (tp4.ep == 4)].slope_ratio
    assert len(qwen) >= 8 and len(deepseek) >= 4
    assert qwen.min() > 1.3 and deepseek.max() < 1.15


def test_a_bad_query_is_one_line(capsys):
    assert slope.main(["--query", "nonsense ==="]) == 2
    assert capsys.readouterr().err.startswith("--query:")
