"""TensorRT-LLM's batch waiting (simulator/batch_wait.py): beside running decodes, new prompts wait up to
batch_wait_timeout_iters steps unless the step's tokens reach batch_wait_max_tokens_ratio x max_num_tokens."""
from __future__ import annotations

import statistics

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.simulator.batch_wait import BatchWait
from whatif.simulator.config import SchedulerConfig


def test_holds_prompts_for_the_timeout_then_lets_them_in():
    gate = BatchWait(timeout_iters=3, max_tokens_ratio=0.9, max_num_tokens=10_000)
    assert [gate.holds(1024, generating=4) for _ in range(5)] == [True, True, True, False, True]


def test_no_wait_without_decodes_or_prompts_or_past_the_token_threshold():
    gate = BatchWait(timeout_iters=20, max_tokens_ratio=0.9, max_num_tokens=10_000)
    assert not gate.holds(1024, generating=0)    # "no generation requests, no need to wait"
    assert not gate.holds(0, generating=8)
    assert not gate.holds(8_992, generating=8)   # 9,000 tokens = 0.9 x 10,000
    assert gate.holds(8_991, generating=8)


@pytest.mark.parametrize("field,value", [("batch_wait_timeout_iters", -1), ("batch_wait_max_tokens_ratio", 1.5)])
def test_a_bad_setting_names_the_field(field, value):
    with pytest.raises(WhatifError, match=field):
        SchedulerConfig(**{field: value})


def _mean_ttft_and_step(engine: dict) -> tuple[float, float]:
    res = whatif.simulate("llama-3.1-8b", "h100-sxm", traffic=dict(concurrency=4, requests=40, seed=1),
                          prompt=512, output=128, kernel_engine="trtllm", engine=engine)
    assert all(r.status == "finished" for r in res.records)
    step = statistics.median(res.log.columns["duration_s"])
    return statistics.fmean(r.ttft_s for r in res.records[4:]), step


def test_a_prompt_beside_decodes_waits_the_timeout():
    """4 clients at fixed lengths: every later prompt arrives while the others decode and the step's tokens stay
    far below 0.9 x the budget, so it waits for company, up to the 20 iterations (at least several of them)."""
    (off, _), (on, step) = _mean_ttft_and_step({}), _mean_ttft_and_step(
        {"batch_wait_timeout_iters": 20, "batch_wait_max_tokens_ratio": 0.9})
    assert off + 5 * step < on < off + 22 * step
