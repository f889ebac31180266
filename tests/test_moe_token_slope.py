"""benchmarks/moe_token_slope.slopes: the 8k->16k rise of a fit against the table's (session 66 L)."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

mts = load_benchmark("moe_token_slope")


def _rows(measured, fitted):
    base = dict(gpu="b200_sxm", hidden_size=4096, inter_size=1024, num_experts=512, topk=10, moe_tp_size=1,
                moe_ep_size=4, distribution="balanced")
    return pd.DataFrame([{**base, "num_tokens": n, "latency_s": m, "insample_s": f}
                         for n, m, f in zip((8192, 16384), measured, fitted)])


def test_a_fit_rising_half_as_fast_reads_half():
    s = mts.slopes(_rows((1.0e-3, 1.8e-3), (1.0e-3, 1.4e-3)), ("insample_s",))
    assert s["measured_us_per_1k"].iloc[0] == pytest.approx(800.0 / 8.192)   # 0.8 ms over 8,192 tokens
    assert s["insample_s_slope_ratio"].iloc[0] == pytest.approx(0.5)
    assert s["insample_s_at_16384"].iloc[0] == pytest.approx(1.4 / 1.8)


def test_a_case_measured_at_one_end_only_is_left_out():
    rows = _rows((1.0e-3, 1.8e-3), (1.0e-3, 1.4e-3)).iloc[:1]
    assert mts.slopes(rows, ("insample_s",)).empty
