"""benchmarks/burst_split.py: the two extreme readings of a measured mean TTFT over a client's rounds (all burst or
all steady) and Little's-law waiting, on made-up figures (the simulation itself is not run here)."""
import pytest

from tests.benchmark_module import load_benchmark

bs = load_benchmark("burst_split")


def test_a_mean_of_one_burst_and_nine_steady_rounds_splits_back_either_way():
    burst, steady, rounds = 1200.0, 100.0, 10
    mean = (burst + (rounds - 1) * steady) / rounds
    assert bs.burst_needed_ms(mean, steady, rounds) == pytest.approx(burst)
    assert bs.steady_needed_ms(mean, burst, rounds) == pytest.approx(steady)


def test_a_single_round_has_no_steady_reading():
    with pytest.raises(ValueError, match="rounds"):
        bs.steady_needed_ms(100.0, 100.0, 1)


def test_burst_throughput_and_littles_law():
    # 64 prompts of mean 0.9 x 1024 tokens whose mean first token is at 0.5 s: drained over ~1 s
    assert bs.burst_tokens_per_s(64, 1024, 500.0) == pytest.approx(64 * 0.9 * 1024)
    # 10 clients, TTFT 100 ms, 0.9 x 101 - 1 = 89.9 tokens at 10 ms: a 999 ms cycle, 10 / 0.999 req/s x 0.1 s
    assert bs.waiting(10, 100.0, 101, 10.0) == pytest.approx(10 * 100.0 / 999.0)
