"""benchmarks/block_fp8_dense_speed.py: the public dense block-fp8 GEMM timings against the per-tensor fp8 tables."""
import pytest

from tests.benchmark_module import load_benchmark

bench = load_benchmark("block_fp8_dense_speed")
tables = pytest.mark.skipif(not bench.CORPUS.is_file(), reason="shared kernel tables not present")


def test_tflops_is_two_mnk_over_seconds():
    assert bench.tflops(1024, 2048, 4096, 1e-3) == pytest.approx(2 * 1024 * 2048 * 4096 / 1e-3 / 1e12)


@tables
def test_deepgemm_on_b200_runs_block_scales_at_per_tensor_speed_and_flashinfer_groupwise_does_not():
    """The finding the docs rest on (session 75 A): sm100 DeepGEMM within 10% of the fastest per-tensor fp8 kernel
    at 1-2k rows, the FlashInfer groupwise column of the same benchmark under a third of it."""
    import pandas as pd
    d = pd.read_parquet(bench.CORPUS)
    for kernel, _, gpu, m, n, k, (_unit, us), (tn, tk) in bench.MEASURED:
        if gpu != "b200_sxm":   # (every B200 figure is in us a call)
            continue
        best = max(bench.table_tflops(d, gpu, s, m, tn, tk) for s in bench.PER_TENSOR)
        speed = bench.tflops(m, n, k, us * 1e-6) / best
        if kernel == "DeepGEMM sm100":
            assert 0.9 < speed < 1.1
        else:
            assert speed < 0.33
