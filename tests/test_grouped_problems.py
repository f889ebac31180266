"""TensorRT-LLM's Hopper block-FP8 grouped expert GEMM pays for each LOCAL expert's problem (grouped_problems.py):
aiconfigurator's balanced rows of that kernel take longer at the same touched experts when the rank holds more."""
from dataclasses import replace

import pytest

from whatif.roofline.efficiency import default_efficiency
from whatif.roofline.grouped_problems import BLOCK_FP8_PROBLEM_COST, grouped_problem_seconds
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole

H100, B200 = load_system("h100-sxm").gpu, load_system("b200").gpu


def expert_op(local: float, block_scaled: bool = True, touched: float = 8.0):
    base = gemm("experts_gate_up", touched, 3072, 4096, 1, 1, "fp8", role=OpRole.EXPERT_UP)
    return replace(base, shape=replace(base.shape, groups=touched, local_experts=local), block_scaled=block_scaled)


def test_the_per_local_expert_cost_grows_with_the_rank_s_experts_at_the_same_touched_ones():
    few, many = (grouped_problem_seconds(expert_op(n), H100, "trtllm") for n in (8, 128))
    fixed, per_local = BLOCK_FP8_PROBLEM_COST[("trtllm", "hopper")]
    assert many - few == pytest.approx(120 * per_local / 2) and per_local > 0
    assert 0 < fixed < 20e-6 and 0 < per_local < 1e-6   # a few us, a fraction of a us an expert (the table's)


def test_only_trtllm_hopper_block_fp8_experts_pay_it():
    assert grouped_problem_seconds(expert_op(128, block_scaled=False), H100, "trtllm") == 0.0   # per-tensor rows: none
    assert grouped_problem_seconds(expert_op(128), H100, "sglang") == 0.0    # SGLang's Triton rows: none
    assert grouped_problem_seconds(expert_op(128), B200, "trtllm") == 0.0    # no such rows measured there
    assert grouped_problem_seconds(expert_op(0), H100, "trtllm") == 0.0      # a graph that says no local experts


def test_the_per_class_expert_gemm_time_carries_it_when_switched_on():
    eff = default_efficiency(H100, "trtllm")
    on = replace(eff, grouped_problem_cost=True)
    few, many = (time_op(expert_op(n), H100, on).time_s for n in (8, 128))
    assert many > few
    assert time_op(expert_op(128), H100, eff).time_s == time_op(expert_op(8), H100, eff).time_s   # off: as before


def test_the_scenario_switch_turns_it_on_and_is_off_by_default():
    from whatif.errors import WhatifError
    from whatif.scenario import Scenario
    base = dict(model="Qwen/Qwen3-235B-A22B-FP8", hardware="dgx-h100", gpus=4, kernel_engine="trtllm")
    assert not Scenario(**base).resolved().efficiency.grouped_problem_cost
    assert Scenario(**base, moe_problem_cost=True).resolved().efficiency.grouped_problem_cost
    with pytest.raises(WhatifError, match="moe_problem_cost"):
        from whatif.scenario import build_scenario
        build_scenario({**base, "moe_problem_cost": "yes"}, {})
