"""benchmarks/kv_admission_check.py: the admission cap of a KV pool and a closed loop's mean in decode (made-up rows
and the committed table)."""
import pytest

from tests.benchmark_module import load_benchmark

kv = load_benchmark("kv_admission_check")


def test_the_cap_counts_the_blocks_a_request_needs_to_finish():
    # 2,048 + 512 tokens = 80 blocks of 32: 8,155 blocks hold 101, 9,320 hold 116
    assert kv.admission_cap(8155, 2048, 512) == 101
    assert kv.admission_cap(9320, 2048, 512) == 116
    assert kv.admission_cap(80, 2048, 513) == 0   # 81 blocks: one token over a block boundary


def test_the_least_fraction_scales_the_pool_to_the_mean_in_decode():
    # 8,155 / 80 requests of 80 blocks fill 8,155 blocks; at 0.8 the pool is 9,320 blocks
    assert kv.least_fraction(8155 / 80, 2048, 512, 9320, 0.8) == pytest.approx(0.8 * 8155 / 9320)
    assert kv.least_fraction(0.0, 2048, 512, 9320, 0.8) == 0.0


def test_mean_in_decode_is_littles_law_on_the_client_means():
    # TTFT 1 s beside a 4 s decode: 4/5 of 128 clients decode
    assert kv.mean_in_decode(128, 1000.0, 4000.0 / 512, 513) == pytest.approx(128 * 0.8)
    row = {"osl": "513", "concurrency": "128", "measured_ttft_ms": "1000", "measured_tpot_ms": str(4000 / 512),
           "predicted_ttft_ms": "0", "predicted_tpot_ms": "1"}
    assert kv.shortfall(row) == pytest.approx(128 - 128 * 0.8)


def test_the_committed_kv_bound_rows_fall_short_no_more_than_the_idle_pools():
    table = {(m, n, b): (rows, mean) for m, n, b, rows, mean, _ in kv.shortfall_table(kv.campaign_rows(), 0.85)}
    bound, idle = table[("Qwen3-32B", 128.0, True)], table[("Qwen3-32B", 128.0, False)]
    assert bound[0] >= 3 and idle[0] >= 10   # the six KV-bound TP1 rows split 3 / 3 over N 64 / 128
    assert abs(bound[1] - idle[1]) < 2.0   # the same few clients short, pool binding or not
