"""benchmarks/dense_step_vs_kernels.py: the table lookups (linear in m, then in the missing n or k)."""
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import dense_step_vs_kernels as dsk  # noqa: E402


def test_interp_is_linear_between_points_and_none_outside():
    pts = [(1.0, 10.0), (3.0, 30.0)]
    assert dsk.interp(pts, 2.0) == pytest.approx(20.0)
    assert dsk.interp(pts, 4.0) is None and dsk.interp([], 1.0) is None
    assert dsk.interp([(1.0, 0.0), (100.0, 2.0)], 10.0, log=True) == pytest.approx(1.0)


def gemm_table(rows):
    return pd.DataFrame(rows, columns=["m", "n", "k", "latency_ms"])


def test_gemm_us_interpolates_m_then_the_unmeasured_k():
    t = gemm_table([(128, 5120, 16384, 0.050), (256, 5120, 16384, 0.070),
                    (128, 5120, 51200, 0.150), (256, 5120, 51200, 0.210)])
    assert dsk.gemm_us(t, 192, 5120, 16384) == pytest.approx(60.0)
    # k 25,600 lies 0.267 of the way from 16,384 to 51,200: 50 + 0.2647 x 100 us at m 128
    assert dsk.gemm_us(t, 128, 5120, 25600) == pytest.approx(50 + (25600 - 16384) / (51200 - 16384) * 100)
    assert dsk.gemm_us(t, 128, 4096, 4096) is None   # neither n nor k measured
