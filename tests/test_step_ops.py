"""benchmarks/step_ops.py: a pass's op times summed under a label, on made-up op times (no estimate run)."""
from types import SimpleNamespace as NS

import pytest

from tests.benchmark_module import load_benchmark

so = load_benchmark("step_ops")


def op_time(name: str, count: int, total_s: float):
    return NS(op=NS(name=name, count=count), total_s=total_s)


def test_ops_of_a_label_join_in_first_seen_order():
    times = [op_time("attention", 3, 3e-3), op_time("experts_down", 58, 58e-3), op_time("attention", 58, 58e-3)]
    by_name = so.summed(times)
    assert list(by_name) == ["attention", "experts_down"]
    assert by_name["attention"].count == 61 and by_name["attention"].total_s == pytest.approx(61e-3)
    assert by_name["attention"].op is times[2].op   # the last one seen, for its shape
    by_family = so.summed(times, lambda name: "moe" if name.startswith("experts_") else "other")
    assert {k: v.count for k, v in by_family.items()} == {"other": 61, "moe": 58}
