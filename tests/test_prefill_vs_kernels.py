"""A serving row's prefill pass against aiconfigurator's B200 kernel tables (benchmarks/prefill_vs_kernels.py)."""
from pathlib import Path

import pytest

from tests.benchmark_module import load_benchmark

pvk = load_benchmark("prefill_vs_kernels")
AIC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"


def test_ops_fall_into_the_groups_the_tables_measure():
    assert pvk.op_group("q_a_proj_group_quant") == "mla module"
    assert pvk.op_group("attention_mla") == "mla module"
    assert pvk.op_group("experts_gate_up") == "routed moe"
    assert pvk.op_group("router_topk") == "routed moe"
    assert pvk.op_group("shared_expert_down") == "shared expert"
    assert pvk.op_group("attn_allreduce") == "all-reduce"
    assert pvk.op_group("input_norm") == "rest"
    assert pvk.op_group("mlp_gate_up") == "rest"


def test_interpolation_stays_inside_the_measured_range():
    pts = [(1024.0, 1.0), (2048.0, 3.0)]
    assert pvk.interp(pts, 1536) == pytest.approx(2.0)
    assert pvk.interp(pts, 1024) == 1.0
    assert pvk.interp(pts, 512) is None and pvk.interp(pts, 4096) is None
    assert pvk.interp([(1e6, 1.0), (1e8, 3.0)], 1e7, log=True) == pytest.approx(2.0)


@pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")
def test_the_tables_at_deepseeks_1k_prefill_shapes():
    assert pvk.measured_mla_ms(AIC, 16, 1024, "fp8_block") == pytest.approx(0.110, abs=0.002)
    moe = pvk.measured_moe_ms(AIC, 1024, 8, 1, "fp8_block")
    assert 0.3 < moe["balanced"] < moe["power_law_1.01"] < 0.6
    ar = pvk.measured_allreduce_ms(AIC, "trtllm", 8, 1024 * pvk.HIDDEN * 2)
    assert 0.055 < ar < 0.085   # between the 8.4 MB and 16.8 MB rows


def test_points_interpolate_inside_and_extend_along_the_nearest_two_outside():
    pts = [(8192.0, 1.2), (4096.0, 0.6), (16384.0, 2.4)]
    assert pvk.interp(pts, 6144, extend=True) == pytest.approx(0.9)
    assert pvk.interp(pts, 16384, extend=True) == pytest.approx(2.4)
    assert pvk.interp(pts, 32768, extend=True) == pytest.approx(4.8)   # along 8,192 -> 16,384
    assert pvk.interp(pts, 2048, extend=True) == pytest.approx(0.3)    # along 4,096 -> 8,192
