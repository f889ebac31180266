"""Multi-step scheduling (vLLM 0.6 --num-scheduler-steps K): a decode iteration runs K decode passes for one
round of the scheduler's CPU work, every row's K tokens stream out together at its end, and a request that
arrives meanwhile waits for it. Prefill iterations stay single passes."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from whatif.cli import main
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import engine_step
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.iteration_time import IterationTimes, bucket
from whatif.simulator.request import FINISHED, Request

SC = Scenario(model="llama-3.1-8b", hardware="a100-sxm-80gb", kernel_engine="vllm-0.6")
K = 10


def engine(steps: int) -> SchedulerConfig:
    return SchedulerConfig.for_engine(SC.engine_spec(), scheduler_steps=steps)


def run(requests, steps: int):
    return simulate(SimConfig(SC, None, engine(steps), ClusterConfig(), SLO()), requests=requests)


def poisson(n: int, rate: float, prompt: int = 200, output: int = 150) -> list[Request]:
    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    return [Request(i, float(t), prompt, output) for i, t in enumerate(arrivals)]


def times(steps: int) -> IterationTimes:
    model, system, par, eff = SC.resolve()
    setup = pass_setup(model, system, par, SC.precision, eff, SC.utilization(), engine_spec=SC.engine_spec())
    e = engine(steps)
    return IterationTimes(setup, True, e.block_size, e.token_budget, 512, steps)


def test_a_decode_iteration_is_k_passes_for_one_round_of_cpu_work():
    t = times(K)
    rows, ctx = 24, 700
    mid = bucket(ctx + (K - 1) // 2)
    p, _ = engine_step(t.setup, ForwardBatch.decode(rows, mid), True)
    spec = SC.engine_spec()
    assert t.time(rows, ctx, []) == pytest.approx(spec.step_seconds(K * p.time_s, rows), rel=1e-9)
    assert t.time(rows, ctx, []) < K * times(1).time(rows, mid, [])   # the CPU's step paid once, not K times
    assert t.lookahead == K - 1 and t.accepted_tokens(rows, ctx, None) == [K] * rows


def test_a_prefill_iteration_stays_one_pass():
    assert times(K).time(0, 0, [(225, 0)]) == times(1).time(0, 0, [(225, 0)])


def test_tokens_stream_in_chunks_of_k_and_arrivals_wait_for_the_iteration():
    reqs = poisson(80, 4.0)
    one, multi = run(reqs, 1), run(reqs, K)
    for res in (one, multi):
        assert {r.status for r in res.records} == {FINISHED}
        assert all(r.emitted.count == r.request.output for r in res.records)
    chunks = [n for r in multi.records for n in np.unique(r.token_times[1:], return_counts=True)[1]]
    assert max(chunks) == K and np.median(chunks) == K
    itl_one = np.median(np.concatenate([r.inter_token_s for r in one.records]))
    itl_multi = np.median(np.concatenate([r.inter_token_s for r in multi.records]))
    assert 0.8 * K * itl_one < itl_multi < 1.1 * K * itl_one
    ttft = [np.median([r.ttft_s for r in res.records]) for res in (one, multi)]
    assert ttft[1] > ttft[0] + 2 * itl_one   # waiting for a running iteration's K steps to end


def test_multi_step_needs_prefill_priority_without_chunks():
    with pytest.raises(WhatifError, match="--scheduler-steps 10"):
        SchedulerConfig(scheduler_steps=10, chunked_prefill=True)
    with pytest.raises(WhatifError, match="--scheduler-steps"):
        SchedulerConfig(scheduler_steps=0)
    spec = replace(SC, techniques=("speculative:draft=llama-68m,k=4,alpha=0.8",), model="llama-2-7b",
                   workload=Workload(batch=1, prompt=128, output=16))
    with pytest.raises(WhatifError, match="--scheduler-steps 10.*speculative"):
        simulate(SimConfig(spec, None, engine(K), ClusterConfig(), SLO()), requests=poisson(2, 1.0))


def test_cli_takes_scheduler_steps_and_refuses_a_bad_one(capsys):
    args = ["simulate", "--engine", "vllm-0.6", "--model", "llama-3.1-8b", "--hardware", "a100-sxm-80gb",
            "--rate", "4", "--requests", "40"]
    assert main(args + ["--scheduler-steps", "10"]) == 0
    assert "10 decode steps per scheduling" in capsys.readouterr().out
    assert main(args + ["--scheduler-steps", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--scheduler-steps" in err[0]


def test_every_token_comes_out_once_through_short_outputs_and_preemption():
    """Outputs shorter than K, of one token (prefill only) and long ones, in a KV cache small enough to preempt:
    every request still gets exactly its tokens."""
    small = replace(SC, memory_utilization=0.25)
    rng = np.random.default_rng(5)
    arrivals = np.cumsum(rng.exponential(1 / 40, 150))
    outputs = rng.choice([1, 2, 9, 10, 11, 300, 1500], 150)
    prompts = rng.integers(50, 3000, 150)
    reqs = [Request(i, float(t), int(p), int(o)) for i, (t, p, o) in enumerate(zip(arrivals, prompts, outputs))]
    e = SchedulerConfig.for_engine(small.engine_spec(), scheduler_steps=K)
    res = simulate(SimConfig(small, None, e, ClusterConfig(), SLO()), requests=reqs)
    assert {r.status for r in res.records} == {FINISHED}
    assert all(r.emitted.count == r.request.output for r in res.records)
    assert sum(r.preemptions for r in res.records) > 0
