"""benchmarks/heavy_load_ttft.py: the per-deployment TTFT slopes against N and the iteration-log statistics, on
made-up figures (the simulation itself is not run here)."""
from array import array

import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

hl = load_benchmark("heavy_load_ttft")


def test_slope_is_ms_a_client_and_needs_two_concurrencies():
    assert hl.slope_ms_per_client([32, 64, 128], [100.0, 200.0, 400.0]) == pytest.approx(3.125)
    with pytest.raises(ValueError, match="two distinct"):
        hl.slope_ms_per_client([64, 64], [1.0, 2.0])


def test_the_slope_part_of_a_gap_counts_from_32_clients():
    assert hl.slope_gap_ms(6.0, 4.0, 128) == pytest.approx(2.0 * 96)
    assert hl.slope_gap_ms(4.0, 4.0, 256) == 0.0


def _row(n, meas, pred, model="m", version="v", scored=1):
    return {"model": model, "version": version, "gemm_quant": "fp8", "tp": 8, "attention_dp": 1, "ep": 1,
            "isl": 1024, "osl": 1024, "mode": "agg", "concurrency": n, "measured_ttft_ms": meas,
            "predicted_ttft_ms": pred, "measured_tpot_ms": 10.0 + n / 1000, "scored": scored}


def test_a_deployment_line_reads_slopes_light_gap_and_the_top_row():
    t = pd.DataFrame([_row(4, 150, 50), _row(8, 160, 60), _row(32, 300, 100), _row(64, 500, 200),
                      _row(128, 900, 400), _row(256, 99, 1, scored=0),
                      _row(32, 1, 1, model="short"), _row(48, 2, 2, model="short")])   # never reaches 64 clients
    (d,) = hl.deployment_slopes(t)
    assert d["model"] == "m" and d["ns"] == [4, 8, 32, 64, 128]
    assert d["light_gap"] == pytest.approx(100.0)
    assert d["n_max"] == 128 and d["gap_at_max"] == pytest.approx(500.0) and d["ratio_at_max"] == pytest.approx(4 / 9)
    assert d["slope_meas"] > d["slope_pred"] > 0
    assert d["slope_part"] == pytest.approx((d["slope_meas"] - d["slope_pred"]) * 96)


class _Log:
    def __init__(self, rows):
        names = ("start_s", "duration_s", "prefill_seqs")
        self.columns = {k: array("d", [r[i] for r in rows]) for i, k in enumerate(names)}


def test_step_stats_split_prefill_and_decode_steps_inside_the_window():
    log = _Log([(0.0, 0.05, 2), (0.05, 0.02, 0), (0.07, 0.04, 1), (0.11, 0.02, 0), (0.50, 9.0, 5)])
    s = hl.step_stats(log, 0.0, 0.2)
    assert s["steps"] == 4 and s["prefill_share"] == pytest.approx(0.5)
    assert s["prompts_a_step"] == pytest.approx(1.5)
    assert s["prefill_step_ms"] == pytest.approx(45.0) and s["decode_step_ms"] == pytest.approx(20.0)


def test_as_release_fills_only_a_missing_release():
    assert hl.as_release({"backend_version": ""}, "1.1.0rc2.post2")["backend_version"] == "1.1.0rc2.post2"
    assert hl.as_release({"backend_version": "1.2.0rc6.post2"}, "1.1.0rc2.post2")["backend_version"] == "1.2.0rc6.post2"
    row = {"backend_version": ""}
    assert hl.as_release(row, None) is row
