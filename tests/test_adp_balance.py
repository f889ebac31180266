"""TensorRT-LLM's attention-DP context balancing (simulator/adp_balance.py): the gate as the PyExecutor runs it, and
its effect on a simulated attention-DP group."""
from __future__ import annotations

import statistics

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.simulator.adp_balance import AdpBalance
from whatif.simulator.config import SchedulerConfig

FOUR = [8, 8, 8, 8]   # max batch of each of four ranks


def test_a_lone_prompt_waits_for_the_timeout_while_every_rank_generates():
    gate = AdpBalance(timeout_iters=5, batching_wait_iters=0)
    answers = [gate.admit([True, False, False, False], [3, 3, 3, 3], FOUR) for _ in range(5)]
    assert answers == [False, False, False, False, True]
    # the count restarts after a release
    assert gate.admit([True, False, False, False], [3, 3, 3, 3], FOUR) is False


def test_the_count_runs_with_no_prompt_waiting():
    """The PyExecutor counts every iteration that fails the test, prompts or not: a prompt arriving late in a
    cycle goes in at that cycle's timeout."""
    gate = AdpBalance(timeout_iters=4, batching_wait_iters=0)
    for _ in range(3):
        assert gate.admit([False] * 4, [3] * 4, FOUR) is False
    assert gate.admit([False, True, False, False], [3] * 4, FOUR) is True


def test_prompts_on_every_rank_go_in_after_the_batching_wait():
    gate = AdpBalance(timeout_iters=50, batching_wait_iters=2)
    assert [gate.admit([True] * 4, [3] * 4, FOUR) for _ in range(3)] == [False, False, True]


def test_no_wait_where_a_rank_has_nothing_to_generate_or_every_rank_a_prompt_and_nothing_runs():
    gate = AdpBalance(timeout_iters=50, batching_wait_iters=10)
    assert gate.admit([True, False, False, False], [3, 0, 3, 3], FOUR) is True
    assert gate.admit([True] * 4, [0, 3, 3, 3], FOUR) is True


def test_a_full_rank_holds_the_group_until_the_timeout():
    gate = AdpBalance(timeout_iters=3, batching_wait_iters=0)
    assert [gate.admit([True] * 4, [8, 3, 3, 3], FOUR) for _ in range(3)] == [False, False, True]


@pytest.mark.parametrize("field, value", [("attention_dp_timeout_iters", -1),
                                          ("attention_dp_batching_wait_iters", 1.5),
                                          ("attention_dp_balance", "yes")])
def test_bad_settings_name_the_field(field, value):
    with pytest.raises(WhatifError, match=field):
        SchedulerConfig(**{field: value})


def _run(balance: bool):
    engine = {"attention_dp_balance": balance, "attention_dp_timeout_iters": 40, "attention_dp_batching_wait_iters": 0}
    res = whatif.simulate("deepseek-v3", "dgx-b200", traffic=dict(rate=4, requests=60, seed=1), prompt=512,
                          output=256, kernel_engine="trtllm", tp=8, ep=8, dp_attention=True, quantization="fp8",
                          engine=engine)
    assert all(r.status == "finished" for r in res.records)
    step = statistics.median(res.log.columns["duration_s"])
    return statistics.fmean(r.ttft_s for r in res.records[10:]), step


@pytest.mark.slow
def test_balancing_holds_a_trickle_of_prompts_for_about_half_the_timeout():
    """4 requests/s over 8 generating ranks: a prompt rarely finds one on every rank, so the balanced group holds
    it until the 40-iteration count runs out (about 20 iterations on average, at most 40); unbalanced, it runs at
    the next step."""
    (off, _), (on, step) = _run(False), _run(True)
    assert off < 5 * step
    assert off + 8 * step < on < off + 40 * step
