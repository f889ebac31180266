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
