"""benchmarks/decode_occupancy.py: Little's law's decoding sequences per decode worker (no estimate run)."""
import pytest

from tests.benchmark_module import load_benchmark

occ = load_benchmark("decode_occupancy")


def test_a_client_decoding_all_its_cycle_holds_one_slot():
    assert occ.decoding_per_worker(64, 0.0, 10.0, 1024, 1) == pytest.approx(64)


def test_a_long_ttft_leaves_fewer_sequences_decoding_per_worker():
    # 128 clients, 4 workers: TTFT 10 s against 1,023 x 10 ms of decode -> half the cycle decoding
    assert occ.decoding_per_worker(128, 10_230.0, 10.0, 1024, 4) == pytest.approx(16)
    assert occ.decoding_per_worker(128, 1_000.0, 10.0, 1024, 4) > 16


def test_no_cycle_no_occupancy():
    assert occ.decoding_per_worker(8, 0.0, 10.0, 1, 1) == 0.0
