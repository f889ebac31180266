"""benchmarks/prefill_allreduce_paths.py: a prefill pass's prompt-sized all-reduces against the comm table's path."""
from types import SimpleNamespace

import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

pap = load_benchmark("prefill_allreduce_paths")


def _rows() -> pd.DataFrame:
    """Two sizes per source on 2 B200s (10 and 40 us), and an NCCL int8 row that must be dropped."""
    rows = [("b200_sxm", src, "all_reduce", "half", 2, b, ms) for src in ("TRTLLM", "vLLM_custom_graph",
                                                                         "vLLM_custom_eager", "NCCL")
            for b, ms in ((2 ** 20, 0.01), (2 ** 22, 0.04))]
    rows.append(("b200_sxm", "NCCL", "all_reduce", "int8", 2, 2 ** 22, 9.0))
    return pd.DataFrame(rows, columns=["gpu", "kernel_source", "op_name", "nccl_dtype", "num_gpus", "bytes",
                                       "latency_ms"])


def test_nccl_int8_rows_are_dropped():
    rows = pap.allreduce_rows(_rows())
    assert len(rows) == 8 and (rows.nccl_dtype == "half").all()


def test_table_reads_log_log_between_sizes_and_flat_outside():
    rows = pap.allreduce_rows(_rows())
    assert pap.table_s(rows, "b200_sxm", "TRTLLM", 2, 2 ** 21) == pytest.approx(20e-6)   # geometric midpoint
    assert pap.table_s(rows, "b200_sxm", "TRTLLM", 2, 2 ** 30) == pytest.approx(40e-6)
    assert pap.table_s(rows, "b200_sxm", "TRTLLM", 8, 2 ** 21) != pap.table_s(rows, "b200_sxm", "TRTLLM", 8, 2 ** 21)


def test_fused_reads_trtllm_and_unfused_reads_vllm():
    assert pap.table_source(True) == pap.table_source(True, eager=True) == "TRTLLM"
    assert pap.table_source(False) == "vLLM_custom_graph"
    assert pap.table_source(False, eager=True) == "vLLM_custom_eager"


def test_pass_sums_skip_small_and_non_allreduce_ops():
    from whatif.specs.op_kinds import OpClass

    def op_time(collective, nbytes, count, seconds, op_class=OpClass.COMM):
        shape = SimpleNamespace(collective=collective, bytes=nbytes, gpus=2)
        op = SimpleNamespace(op_class=op_class, shape=shape, count=count, collective_kernel=None, hbm_bytes=0)
        return SimpleNamespace(op=op, time_s=seconds, total_s=seconds * count)
    times = [op_time("all_reduce", 2 ** 22, 10, 50e-6), op_time("all_reduce", 8192, 62, 7e-6),
             op_time("all_gather", 2 ** 22, 1, 1e-3)]
    s = pap.pass_sums(times, pap.allreduce_rows(_rows()), "b200_sxm")
    assert s["calls"] == 10 and s["paths"] == {"unfused"}
    assert s["whatif"] == pytest.approx(0.5) and s["graph"] == pytest.approx(0.4) and s["eager"] == pytest.approx(0.4)
