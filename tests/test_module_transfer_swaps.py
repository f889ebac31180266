"""benchmarks/module_transfer_swaps.py: which parameter carries a module fit's leave-one-GPU-out miss, and the GEMM
table's small-M weight-streaming rate (docs/accuracy.md "Session 74 C")."""
import numpy as np
import pandas as pd

from tests.benchmark_module import load_benchmark

mts = load_benchmark("module_transfer_swaps")


def _gemm_rows(gpu, bw, eff, fixed_s=3e-6):
    """Small-M GEMM rows whose time is a fixed latency plus the weight bytes at `eff` of `bw`."""
    out = []
    for n, k in ((2048, 2048), (4096, 4096), (4096, 8192), (8192, 8192), (8192, 16384)):
        out.append(dict(framework="sglang", gemm_dtype="bfloat16", gpu=gpu, m=1, n=n, k=k,
                        latency_ms=(fixed_s + 2.0 * n * k / (eff * bw)) * 1e3))
    return out


def test_the_incremental_rate_reads_the_streaming_efficiency_whatever_the_fixed_latency():
    bw = {"b200_sxm": 8e12, "h100_sxm": 3.35e12}
    frame = pd.DataFrame(_gemm_rows("b200_sxm", 8e12, 0.6, 5e-6) + _gemm_rows("h100_sxm", 3.35e12, 0.9, 2e-6)
                         + [dict(framework="sglang", gemm_dtype="bfloat16", gpu="h100_sxm", m=64, n=8192, k=8192,
                                 latency_ms=1.0)])   # a large-M row: not a weight-streaming one, left out
    t = mts.weight_stream(frame, bw)
    assert abs(t.loc[("sglang", "bfloat16", "b200_sxm"), "incremental"] - 0.6) < 1e-3
    assert abs(t.loc[("sglang", "bfloat16", "h100_sxm"), "incremental"] - 0.9) < 1e-3
    # the whole-kernel rate of a small weight sits under the streaming one (the fixed latency counts there)
    assert t.loc[("sglang", "bfloat16", "b200_sxm"), "8-32MB"] < 0.6


def _module_rows(gpu, memory_eff, floor_s=5e-5, n=60):
    rng = np.random.default_rng(0 if gpu == "a" else 1)
    m0 = rng.uniform(1e-6, 2e-4, n)
    return pd.DataFrame(dict(gpu=gpu, engine="e", family="f", table="t", kernel_source="k", version="1",
                             c0=0.0, m0=m0, l0=0.0, items=0.0, sms=100.0, latency_s=floor_s + m0 / memory_eff))


def test_the_swap_that_closes_a_cell_names_the_parameter_the_gpus_differ_in():
    rows = pd.concat([_module_rows("a", 0.55), _module_rows("b", 0.9)], ignore_index=True)
    t = mts.swap_table(rows, "f", "e")
    for gpu in ("a", "b"):
        assert t.loc[gpu, "loo"] > 10.0 and t.loc[gpu, "own"] < 1.0
        assert t.loc[gpu, "swap_memory_eff"] < 1.0 and t.loc[gpu, "swap_floor_s"] > 5.0


def test_no_cell_for_an_engine_the_rows_lack():
    rows = pd.concat([_module_rows("a", 0.55), _module_rows("b", 0.9)], ignore_index=True)
    assert mts.swap_table(rows, "f", "not_an_engine") is None
