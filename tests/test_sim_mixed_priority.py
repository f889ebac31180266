"""Without chunked prefill, TensorRT-LLM's inflight batching puts whole prompts beside the running decodes in
one step while their tokens fit the budget (the `mixed` priority); vLLM V0 runs prefill steps first, decodes
waiting (`prefill`)."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SchedulerConfig, SimConfig
from whatif.simulator.request import Request
from whatif.simulator.workload import WorkloadSpec

SC = Scenario(hardware="h100-sxm")


def run(requests, **engine):
    cfg = SchedulerConfig(token_budget=8192, **engine)
    res = simulate(SimConfig(SC, WorkloadSpec(requests=len(requests)), cfg), requests=requests)
    records = sorted(res.records, key=lambda r: r.request.id)
    assert all(r.finish_s is not None for r in records)
    return res, records


def test_tensorrt_llm_takes_whole_prompts_beside_decodes():
    spec = engine_spec("trtllm")
    assert not spec.chunked_prefill and spec.priority == "mixed"
    cfg = SchedulerConfig.for_engine(spec)
    assert not cfg.chunked_prefill and cfg.priority == "mixed"
    assert SchedulerConfig.for_engine(engine_spec("vllm")).chunked_prefill


def test_mixed_admits_whole_prompts_within_the_budget():
    """Three 3,000-token prompts at once, 8,192 tokens a step: two fit whole in the first step, the third
    waits for the next (never split); chunked prefill starts all three in the first step."""
    reqs = [Request(i, 0.0, 3000, 4) for i in range(3)]
    _, mixed = run(reqs, chunked_prefill=False, priority="mixed")
    assert mixed[0].first_token_s == mixed[1].first_token_s < mixed[2].first_token_s
    assert mixed[2].first_scheduled_s == pytest.approx(mixed[0].first_token_s)
    _, chunked = run(reqs, chunked_prefill=True)
    assert all(r.first_scheduled_s == 0.0 for r in chunked)


def test_mixed_decodes_beside_a_prompt_where_prefill_priority_stalls():
    """A request decoding when a second prompt arrives: mixed steps carry its decode beside the prompt, so it
    needs fewer steps (iterations) than prefill-priority, which stops decoding for the prompt's step."""
    reqs = [Request(0, 0.0, 500, 200), Request(1, 0.05, 2000, 2)]
    mixed, _ = run(reqs, chunked_prefill=False, priority="mixed")
    first, _ = run(reqs, chunked_prefill=False, priority="prefill")
    assert mixed.summary()["iterations"] == first.summary()["iterations"] - 1


def test_an_unknown_priority_names_the_valid_ones():
    with pytest.raises(WhatifError, match="mixed"):
        SchedulerConfig(priority="fifo")


def test_mixed_rejects_a_prompt_longer_than_the_budget():
    """TensorRT-LLM without chunked context caps the input at max_num_tokens: a longer prompt is refused with
    the reason, not run."""
    cfg = SchedulerConfig(token_budget=2048, chunked_prefill=False, priority="mixed")
    reqs = [Request(0, 0.0, 3000, 4), Request(1, 0.0, 1000, 4)]
    res = simulate(SimConfig(SC, WorkloadSpec(requests=2), cfg), requests=reqs)
    records = sorted(res.records, key=lambda r: r.request.id)
    assert records[0].finish_s is None and "token budget (2048 tokens)" in records[0].reason
    assert records[1].finish_s is not None
    run(reqs, chunked_prefill=True)   # chunked prefill serves both (run checks every request finished)
