"""benchmarks/kv_budget.py: the KV pool whatif plans for a row against what its measured queue holds."""
import pytest

from tests.benchmark_module import load_benchmark
from whatif.api import estimate

kv = load_benchmark("kv_budget")


def test_requests_in_service_hold_their_prompt_and_half_their_output():
    assert kv.held_tokens(5.0, 1024, 128) == pytest.approx(5 * 1088)
    assert kv.held_tokens(0.0, 8192, 1024) == 0.0


def _plan(fraction: float):
    return estimate(model="Qwen/Qwen3-32B", hardware="dgx-h100", kernel_engine="sglang", prompt=1024, output=128,
                    batch=16, gpus=1, tp=1, memory_utilization=fraction).memory


def test_a_static_fraction_moves_the_pool_by_its_share_of_the_gpu():
    # SGLang's static accounting: weights + KV take fraction x capacity, so 0.05 less takes 0.05 x capacity of KV
    hi, lo = _plan(0.84), _plan(0.79)
    assert kv.pool_tokens(hi) - kv.pool_tokens(lo) == pytest.approx(
        0.05 * hi.capacity_bytes / hi.kv_bytes_per_token, rel=1e-6)
    assert kv.pool_tokens(lo) > 0


def test_an_unmatched_filter_is_a_one_line_error(capsys):
    assert kv.main(["--filter", "no-such-row-id"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("--filter") and "\n" not in err
