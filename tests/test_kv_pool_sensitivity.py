"""benchmarks/kv_pool_sensitivity.py: the memory fraction that moves one GPU's KV pool by E GiB, per accounting."""
import pytest

from tests.benchmark_module import load_benchmark

kps = load_benchmark("kv_pool_sensitivity")

GIB = 2 ** 30


def test_free_accounting_scales_the_fraction():
    # TensorRT-LLM: KV = fraction x free; 20 GiB free at 0.75 holds 15 GiB; 10 GiB less free holds 7.5 GiB
    f = kps.shifted_fraction("trtllm", 0.75, 20 * GIB, 180 * GIB, -10)
    assert f * 20 * GIB == pytest.approx(0.75 * 10 * GIB)


def test_total_accounting_adds_to_the_fraction():
    # vLLM / SGLang: KV = fraction x capacity - the rest, so +1 GiB is +1 GiB / capacity of fraction
    f = kps.shifted_fraction("vllm", 0.9, 10 * GIB, 80 * GIB, 1)
    assert (f - 0.9) * 80 * GIB == pytest.approx(GIB)
    assert kps.shifted_fraction("sglang", 0.8, 5 * GIB, 80 * GIB, 0) == 0.8


def test_no_free_memory_is_an_error():
    with pytest.raises(ValueError):
        kps.shifted_fraction("trtllm", 0.9, 0.0, 80 * GIB, -1)
