"""benchmarks/light_load_floor.py: the shape fits recover what made-up rows carry, and the committed table keeps the
vLLM capture contrast the diagnosis rests on (docs/accuracy.md, "Session 64 I")."""
import statistics

import pytest

from tests.benchmark_module import load_benchmark

llf = load_benchmark("light_load_floor")


def test_each_shape_fit_recovers_its_own_shape():
    pred = [40.0, 60.0, 90.0, 150.0, 300.0]
    assert llf.best_constant([p + 70 for p in pred], pred) == (70, pytest.approx(0.0))
    f, err = llf.best_floor([max(p, 120.0) for p in pred], pred)
    assert f == 120 and err == pytest.approx(0.0)
    a, f, err = llf.best_both([30 + max(p, 100.0) for p in pred], pred)
    assert (a, f) == (30, 100) and err == pytest.approx(0.0)
    # an additive cost is not a floor: the floor fit leaves an error the constant does not
    assert llf.best_floor([p + 70 for p in pred], pred)[1] > 5.0


def test_the_scale_and_constant_fit_tells_a_scaled_miss_from_a_flat_one():
    pred = [40.0, 60.0, 90.0, 150.0, 300.0, 600.0]
    k, c, err = llf.best_scale_constant([1.5 * p + 40 for p in pred], pred)
    assert (k, c, err) == (pytest.approx(1.5), 40, pytest.approx(0.0))
    # a flat miss reads k = 1: the scale is not taken up when the rows do not carry it
    k, c, err = llf.best_scale_constant([p + 100 for p in pred], pred)
    assert (k, c, err) == (pytest.approx(1.0), 100, pytest.approx(0.0))
    # and the constant-only fit cannot reproduce a scaled miss
    assert llf.best_constant([1.5 * p + 40 for p in pred], pred)[1] > 5.0


def test_the_per_moe_layer_floor_recovers_h_and_leaves_dense_rows_alone():
    rows = [dict(meas=max(p, 2.5 * n), pred=p, moe_layers=n) for p, n in [(50, 60), (80, 60), (400, 60), (30, 36)]]
    assert llf.per_moe_layer_floor(rows) == pytest.approx(2.5)
    dense = [dict(meas=70.0, pred=70.0, moe_layers=0)]
    assert llf.per_moe_layer_floor(dense) == 0.0   # nothing to fit: the smallest h on the grid


def test_the_committed_table_keeps_the_kimi_capture_contrast():
    rows = [r for r in llf.light_rows(8) if "Kimi" in r["model"] and r["version"] == "0.17.0"
            and r["isl_band"] == "<=1k"]
    graphed = [r["gap"] for r in rows if r["graph"] == llf.GRAPHED]
    graphless = [r["gap"] for r in rows if r["graph"] == llf.GRAPHLESS]
    assert graphed and graphless
    # the same v0.17.0 image: 1k prompts inside the piecewise graphs miss ~6 ms, outside them ~96 ms
    assert statistics.median(graphed) < 20.0 < 60.0 < statistics.median(graphless)
    assert all(r["graph"] == llf.EAGER for r in llf.light_rows(8) if r["engine"] != "vllm")
