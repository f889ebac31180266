"""benchmarks/off3x_neighbours.py: Little's law on a closed loop and the verdict rules, on synthetic tables."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

on = load_benchmark("off3x_neighbours")


def _row(i, n, ttft_m, ttft_p, tpot_m=10.0, tpot_p=10.0, osl=1001, kv=0.1, pre=0, **kw):
    base = {"id": f"r{i}", "model": "org/M", "system": "b200_sxm", "engine": "vllm", "version": "1.0", "mode": "agg",
            "isl": 1024, "osl": osl, "tp": 1, "pp": 1, "attention_dp": 1, "ep": 1, "gemm_quant": "fp8",
            "moe_quant": "fp8", "concurrency": n, "measured_ttft_ms": ttft_m, "predicted_ttft_ms": ttft_p,
            "measured_tpot_ms": tpot_m, "predicted_tpot_ms": tpot_p, "kv_peak_fraction": kv, "preemptions": pre,
            "scored": 1}
    return {**base, **kw}


def _table(rows, tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return on.table(on.load(path)).set_index("id")


def test_in_service_is_decode_share_of_the_cycle():
    # 1000 decode steps of 10 ms = 10 s; TTFT 10 s: half the cycle waiting, half of 8 clients decoding
    assert on.in_service(8, 10_000.0, 10.0, 1001) == pytest.approx(4.0)
    assert on.in_service(8, 0.0, 10.0, 1001) == pytest.approx(8.0)


def test_floor_when_the_gap_matches_the_neighbours(tmp_path):
    rows = [_row(1, 4, 150, 40), _row(2, 64, 600, 480)]   # gaps 110 and 120 ms; the second reads x0.8
    assert _table(rows, tmp_path).loc["r1", "verdict"] == "floor"


def test_queue_whatif_lacks(tmp_path):
    # measured TTFT 10 s at 32 clients with 10 s of decode: 16 in service; whatif's 0.5 s keeps ~30
    rows = [_row(1, 32, 10_000, 500), _row(2, 16, 600, 500)]
    assert _table(rows, tmp_path).loc["r1", "verdict"] == "queue whatif lacks"


def test_kv_capacity_first(tmp_path):
    rows = [_row(1, 32, 10_000, 500, kv=1.0, pre=3), _row(2, 16, 600, 500)]
    assert _table(rows, tmp_path).loc["r1", "verdict"] == "whatif at KV capacity"


def test_outlier_above_its_next_load(tmp_path):
    rows = [_row(1, 8, 240, 50), _row(2, 16, 140, 65), _row(3, 32, 160, 80)]
    assert _table(rows, tmp_path).loc["r1", "verdict"] == "outlier of its curve"


def test_lone_and_curve_wide(tmp_path):
    lone = _table([_row(1, 4, 160, 50)], tmp_path)
    assert lone.loc["r1", "verdict"] == "lone row"
    wide = _table([_row(1, 64, 470, 150), _row(2, 32, 230, 100), _row(3, 128, 650, 240)], tmp_path)
    assert wide.loc["r1", "verdict"] == "curve-wide"


def test_other_families_are_not_neighbours(tmp_path):
    rows = [_row(1, 4, 150, 40), _row(2, 64, 600, 480, isl=8192)]
    assert _table(rows, tmp_path).loc["r1", "verdict"] == "lone row"


def test_committed_table_runs():
    out = on.table(on.load())
    assert set(out.verdict) <= {"whatif at KV capacity", "queue whatif lacks", "outlier of its curve", "floor",
                                "curve-wide", "lone row", "unexplained"}
    assert (out.x < 1 / 3).sum() + (out.x > 3).sum() == len(out)
