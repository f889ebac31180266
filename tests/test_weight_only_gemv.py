"""TensorRT-LLM's weight-only GEMM below 5 rows runs a CUDA-core GEMV (weight_only_gemv.py): no 16-row tensor-core
tile in its compute term, its own measured floor; vLLM (Marlin) and TensorRT-LLM at 5+ rows keep the tiled GEMM."""
from pathlib import Path

import pytest

from whatif.roofline.config import Precision
from whatif.roofline.kernel_timing import gemm_seconds
from whatif.roofline.mlp import weight_gemm
from whatif.roofline.weight_only_gemv import GEMV_FLOOR_S, GEMV_MAX_ROWS, runs_gemv
from whatif.specs.hardware import load_system

INT4 = Precision(weight="int4", activation="fp16", kv="fp16")
TABLE = Path("/work/shared/reference/aiconfigurator/gemm.parquet")


def _seconds(m, n, k, engine):
    return gemm_seconds(weight_gemm("g", m, n, k, INT4, 1), load_system("a100-sxm-80gb", 1).gpu, engine)


def test_only_trtllm_below_five_rows_with_integer_weights():
    assert runs_gemv("trtllm", 1, True) and runs_gemv("trtllm", GEMV_MAX_ROWS, True)
    assert not runs_gemv("trtllm", GEMV_MAX_ROWS + 1, True)
    assert not runs_gemv("vllm", 1, True) and not runs_gemv("trtllm", 1, False)


def test_a_large_one_row_gemv_is_priced_near_its_weight_bytes():
    n, k = 28672, 8192                      # int4: 117 MB of weights, ~58 us at the A100's 2.04 TB/s
    gemv, t_c, t_m, fixed = _seconds(1, n, k, "trtllm")
    tiled = _seconds(1, n, k, "vllm")[0]
    assert fixed == pytest.approx(GEMV_FLOOR_S)
    assert t_c < t_m                        # memory-bound: no 16-row tile of tensor-core work
    assert gemv < 0.8 * tiled


def test_five_rows_take_the_tiled_kernel():
    assert _seconds(5, 8192, 8192, "trtllm")[3] != pytest.approx(GEMV_FLOOR_S)


@pytest.mark.skipif(not TABLE.is_file(), reason="needs /work/shared's measured GEMM table")
def test_the_floor_is_the_measured_median_of_the_smallest_gemvs():
    pd = pytest.importorskip("pandas")
    d = pd.read_parquet(TABLE)
    small = d[d.gemm_dtype.isin(["int4_wo", "int8_wo"]) & (d.gpu == "a100_sxm") & (d.m <= GEMV_MAX_ROWS)
              & (d.n * d.k <= 2 ** 16)]
    assert len(small) == 36
    assert small.latency_ms.median() * 1e-3 == pytest.approx(GEMV_FLOOR_S, rel=1e-3)
