"""benchmarks/ttft_growth.py: a deployment's TTFT miss as light-load level x growth with load."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import ttft_growth as tg  # noqa: E402


def _row(n, measured, predicted, tpot=10.0, **key):
    base = {"system": "b200_sxm", "engine": "vllm", "model": "org/M", "version": "0.19.0", "tp": 2, "ep": 1,
            "attention_dp": 1, "gemm_quant": "fp8", "isl": 1024, "osl": 1024}
    return {**base, **key, "concurrency": n, "measured_ttft_ms": measured, "predicted_ttft_ms": predicted,
            "measured_tpot_ms": tpot, "predicted_tpot_ms": tpot}


def test_a_flat_miss_is_all_level():
    rows = [_row(n, 50 + 2 * n, 0.8 * (50 + 2 * n)) for n in (4, 16, 64)]
    points = tg.level_and_growth(tg.deployments(rows)[next(iter(tg.deployments(rows)))])
    assert [p["n"] for p in points] == [16, 64]
    assert all(p["level"] == pytest.approx(0.8) and p["growth"] == pytest.approx(1.0) for p in points)


def test_a_cost_missing_under_load_shows_as_growth_below_one():
    rows = [_row(n, 50 + 3 * n, 50 + 2 * n) for n in (4, 64)]
    (point,) = tg.level_and_growth(next(iter(tg.deployments(rows).values())))
    assert point["level"] == pytest.approx(58 / 62)
    assert point["growth"] < 0.8   # (178 / 58) / (242 / 62) = 0.79
    assert point["ratio"] == pytest.approx(point["level"] * point["growth"])


def test_repeats_average_and_heavy_only_deployments_are_left_out():
    rows = [_row(4, 60, 48), _row(4, 80, 48), _row(16, 100, 80)]
    by_n = next(iter(tg.deployments(rows).values()))
    assert by_n[4.0][0] == pytest.approx(70)
    assert tg.level_and_growth({16.0: (1, 1, 1, 1), 64.0: (2, 2, 1, 1)}) is None   # lowest N above LIGHT


def test_rate_fit_recovers_a_front_end_cost_per_streamed_token():
    rows = []
    for n, tpot, pred in ((4, 8, 60), (16, 10, 90), (64, 20, 200), (256, 40, 500), (8, 30, 300)):
        rate = n / tpot
        rows.append(_row(n, 1.2 * pred + 5.0 * rate + 3.0, pred, tpot=tpot))
    a, c, b = tg.rate_fit(rows)
    assert (a, c, b) == pytest.approx((1.2, 5.0, 3.0), rel=1e-6)


def test_table_groups_by_band_in_order():
    rows = [_row(n, 50 + 2 * n, 0.8 * (50 + 2 * n)) for n in (4, 16, 64, 256)]
    groups = [g["group"] for g in tg.table(rows)]
    assert groups == ["b200_sxm vllm M 0.19.0 N (8,32]", "b200_sxm vllm M 0.19.0 N (32,128]",
                      "b200_sxm vllm M 0.19.0 N > 128"]
