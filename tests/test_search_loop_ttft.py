"""Search and simulate agree on TTFT at the search's full-load operating point (issue 37; docs/accuracy.md session
70 W): without a TTFT target a replica runs its B slots full, a closed loop of B clients, and the simulator's
clients, started together at fixed lengths, come back in groups that wait for the engine's prefill passes
(config_search/closed_loop_ttft.py). Before, the search reported a lone prompt's prefill (x8 low at 8 clients).
Session 70 BB: checked against the simulator's default run (through the server's front end, the client's TTFT from
its send, Record.served_ttft_s), whose one-at-a-time front end spreads a burst (front_end_drain_s)."""
from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from whatif.config_search.closed_loop_ttft import (burst_mean_s, front_end_drain_s, loop_ttft_s, prefill_groups,
                                                   train_mean_s)
from whatif.config_search.configs import aggregated
from whatif.config_search.evaluate import evaluate_replica
from whatif.config_search.recheck import sim_config
from whatif.config_search.space import ReplicaSetup, SearchSpace
from whatif.simulator.cluster import simulate

TP1 = ReplicaSetup("dgx-h100", tp=1, pp=1, ep=1, weight="bf16", kv="bf16")
CLIENTS = (1, 2, 4, 8, 16, 32, 64)
# through the front end, measured x0.92-1.15 of the simulator (llama-3.1-8b, one H100, 1,000 / 4,000-token prompts,
# output 100) except the mixed engines' trains of 4,000-token prompts at 16+ clients (GAP)
TOL = 0.25
# search / simulator there, x0.59-0.71 (output 100): the front end breaks the returning groups of 2 apart and the
# simulated loop queues ~3 passes of prefill, not the train's 2 (not modelled: docs/accuracy.md session 70 BB)
GAP = (0.5, 0.8)


def _configs(engine: str, prompt: int, output: int = 32):
    space = SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100",), gpu_budget=1, prompt=prompt, output=output,
                        modes=("aggregated",), batches=CLIENTS, engine=engine)
    profile, = evaluate_replica(space, TP1)
    return space, profile, {c.batch: c for c in aggregated(space, profile) if c.replicas == 1}


def _loop_ttft(space, c, clients: int) -> float:
    """Mean TTFT of the last half of the re-check's simulation of `c` run as `clients` closed-loop clients, as a
    client measures it: from its send, through the server's front end (`whatif simulate --concurrency`'s default)."""
    cfg = sim_config(space, c, max(12 * clients, 60))
    cfg = replace(cfg, workload=replace(cfg.workload, concurrency=clients, through_server=True))
    res = simulate(cfg, keep_log=False)
    assert all(r.status == "finished" for r in res.records)
    recs = sorted(res.records, key=lambda r: r.request.arrival_s)
    return statistics.fmean(r.served_ttft_s(None) for r in recs[len(recs) // 2:])


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("prompt", [1000, 4000])
def test_search_ttft_at_full_load_is_the_simulated_closed_loops(engine, prompt):
    space, profile, configs = _configs(engine, prompt)
    for b in CLIENTS:
        c = configs[b]
        sim = _loop_ttft(space, c, b)
        if engine != "sglang" and prompt == 4000 and b >= 16:
            assert GAP[0] < c.ttft_s / sim < GAP[1], (engine, prompt, b, c.ttft_s, sim)
        else:
            assert c.ttft_s == pytest.approx(sim, rel=TOL), (engine, prompt, b)
        # one request's cycle is e2e(B): a later first token is decode time it no longer waits (Little's law)
        assert c.ttft_s + (space.output - 1) * c.tpot_s == pytest.approx(c.e2e_s, rel=1e-9)
    assert configs[8].ttft_s > 3 * profile.prefill_s      # fails when the search reports a lone prompt's prefill


def test_an_engine_that_prefills_first_drains_the_whole_burst():
    """SGLang's decodes wait while prompts prefill, so 64 clients stay one burst (mean (8 + 1) / 2 passes of 8);
    vLLM's mixed steps keep the groups a pass apart (each waits one pass: 2 - 1/8 passes)."""
    t = 0.8                           # the batch's prefill: 8 passes of 0.1 s
    assert loop_ttft_s(64, 1000, 8192, t, prefill_first=True) == pytest.approx(0.45)
    assert loop_ttft_s(64, 1000, 8192, t, prefill_first=False) == pytest.approx(0.1 * (2 - 1 / 8))
    assert loop_ttft_s(8, 1000, 8192, 0.1, True) == loop_ttft_s(8, 1000, 8192, 0.1, False) == pytest.approx(0.1)
    assert loop_ttft_s(1, 1000, 8192, 0.02, True) == pytest.approx(0.02)


def test_prefill_groups_cover_the_batch_and_its_prefill():
    for batch, prompt in ((13, 1000), (3, 10000), (64, 8192), (5, 3000)):
        groups = prefill_groups(batch, prompt, 8192, 1.3)
        assert sum(n * k for _, n, k in groups) == batch
        assert sum(s * k for s, _, k in groups) == pytest.approx(1.3)
        assert burst_mean_s(groups) >= train_mean_s(groups) * (1 - 1e-12) or batch <= 8192 // prompt


def test_a_front_end_spreads_the_burst_over_its_passes():
    """Four prompts sent together through a 1 s front end reach the engine at 1, 2, 3, 4 s: the first pass holds
    one (ends 4 s), the next the three there by then (ends 13 s); without a front end it is the plain drain."""
    assert front_end_drain_s(4, 4, 3.0, 1.0) == pytest.approx((4 + 3 * 13) / 4)
    assert front_end_drain_s(4, 2, 1.0, 0.0) == pytest.approx(burst_mean_s([(2.0, 2, 2)]))
    # a lone request pays its front end and its prefill; a mixed engine's train pays its own front end on top
    assert loop_ttft_s(1, 1000, 8192, 0.02, False, 0.005) == pytest.approx(0.025)
    assert loop_ttft_s(64, 1000, 8192, 0.8, False, 0.001) == pytest.approx(0.1 * (2 - 1 / 8) + 0.001)
