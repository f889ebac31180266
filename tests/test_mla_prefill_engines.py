"""benchmarks/mla_prefill_engines.py: the per-token intercept / per-head slope split of an MLA module table."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

mpe = load_benchmark("mla_prefill_engines")


def _rows(intercept_ns, slope_ns):
    rows = [dict(num_heads=h, batch_size=b, isl=1024) for h in (1, 2, 4, 8, 16) for b in (16, 32, 64)]
    frame = pd.DataFrame(rows)
    frame["latency"] = (intercept_ns + slope_ns * frame["num_heads"]) * frame["batch_size"] * frame["isl"] / 1e6
    return frame


def test_per_token_fit_recovers_a_head_independent_intercept_and_a_per_head_slope():
    a, b, n = mpe.per_token_fit(_rows(72.5, 5.0))
    assert a == pytest.approx(72.5) and b == pytest.approx(5.0) and n == 15


def test_large_rows_keep_only_long_batches_of_few_heads():
    frame = pd.DataFrame([dict(num_heads=16, batch_size=16, isl=1024), dict(num_heads=32, batch_size=16, isl=1024),
                          dict(num_heads=1, batch_size=8, isl=1024), dict(num_heads=1, batch_size=4, isl=4096)])
    assert mpe.large_rows(frame).index.tolist() == [0]   # 32 heads, 8k tokens, length 4096: out
