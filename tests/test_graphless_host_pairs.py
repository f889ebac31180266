"""benchmarks/graphless_host_pairs.py: the two readings of a with/without-graph pair and the leave-one-source-out."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import graphless_host_pairs as ghp  # noqa: E402


def _pair(source, graphless, graphed, graphed_gpu=None):
    return ghp.Pair(source, "x", "e", "g", 61, 1024, graphless, graphed, graphed_gpu, {})


def test_additive_host_is_the_difference_and_floor_adds_the_graphed_gpu():
    h = ghp.implied(_pair("a", 170.0, 80.0), gpu_ms=50.0)
    assert h == {"add": 90.0, "floor": 140.0}
    # a measured graphed span replaces whatif's GPU
    assert ghp.implied(_pair("b", 171.0, 105.0, graphed_gpu=105.0), gpu_ms=10.0)["floor"] == 171.0


def test_source_c_floor_is_capped_by_its_eager_ttft():
    assert ghp.implied(_pair("c", 175.0, 51.0), gpu_ms=60.0)["floor"] == 175.0


def test_leave_one_source_out_is_exact_when_every_source_has_one_per_layer_host():
    rows = [{"source": s, "layers": n, "kernels": k, "add": 1.5 * n, "floor": 2.0 * n}
            for s, n, k in (("a", 61, 978), ("a", 61, 1222), ("b", 45, 925), ("c", 61, 1100))]
    assert all(abs(e) < 1e-9 for e in ghp.loo(rows, "add", "layers").values())
    per_op = ghp.loo(rows, "add", "kernels")
    assert any(abs(e) > 1.0 for e in per_op.values())   # kernels a layer differ by source: a per-op form misses
    assert set(ghp.loo(rows, "add", "layers", "ab")) == {"a", "b"}
