"""The host a layer an eager prefill would need to hold the light-load TTFT gap (benchmarks/eager_host_budget.py)."""
from types import SimpleNamespace

import pytest

from tests.benchmark_module import load_benchmark

eager_host_budget = load_benchmark("eager_host_budget")


def fake_pass(gpu_s, launch_s, layers):
    ops = [SimpleNamespace(op=SimpleNamespace(name="attention_mla", count=layers)),
           SimpleNamespace(op=SimpleNamespace(name="experts_down", count=layers - 3))]
    return SimpleNamespace(gpu_s=gpu_s, launch_s=launch_s, op_times=ops, kernels=2 * layers - 3)


def test_the_budget_puts_the_gap_on_top_of_the_slower_side_of_the_pass_a_layer():
    b = eager_host_budget.pass_budget(fake_pass(0.0610, 0.0305, 61), gap_ms=122.0)
    assert b["layers"] == 61 and b["host_us_a_layer"] == pytest.approx(500.0)
    assert b["need_all_us"] == pytest.approx((61.0 + 122.0) / 61 * 1e3)
    assert b["need_half_us"] == pytest.approx((61.0 + 61.0) / 61 * 1e3)
    host_bound = eager_host_budget.pass_budget(fake_pass(0.0300, 0.0610, 61), gap_ms=0.0)
    assert host_bound["need_all_us"] == pytest.approx(1000.0)   # the host already sets the pass


def test_a_committed_deepseek_row_needs_more_host_a_layer_than_whatif_charges():
    rec, = eager_host_budget.budgets("id=='2026_04_06_deepseek_r1_b200_sxm_trtllm_fp4_agg_1024x1024_c4_tp8_ep1_282'")
    assert rec["layers"] == 61 and rec["gap_ms"] > 0
    assert rec["need_half_us"] > 2 * rec["host_us_a_layer"]
