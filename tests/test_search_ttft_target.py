"""Search and simulate agree on TTFT under a TTFT target (issue 37; docs/accuracy.md session 70 CC): the search's
rate is the highest at which the attainment quantile (p90) of a request's TTFT meets the target under Poisson
arrivals; the simulator run at that rate gives the p90 TTFT of its last half. The search prices a rank's prefill as
a bulk-service queue (queueing.bulk_ttft_quantile_s: passes of the prompts waiting at a pass's start, up to the
token budget, decode steps between them) plus the wait for a slot (M/D/B). Before, the prefill was B identical
servers of one prompt each (M/D/B alone), which never sees a prompt wait behind another's prefill: the simulator's
p90 was x1.27-2.31 of the search's at 4,000-token prompts and a 0.15 s target."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from whatif.config_search.configs import aggregated
from whatif.config_search.evaluate import evaluate_replica
from whatif.config_search.queueing import bulk_ttft_quantile_s, pass_size
from whatif.config_search.recheck import sim_config
from whatif.config_search.space import ReplicaSetup, SearchSpace, SLOTargets
from whatif.simulator.cluster import simulate

TP1 = ReplicaSetup("dgx-h100", tp=1, pp=1, ep=1, weight="bf16", kv="bf16")
REQUESTS = 4000          # p90 over the last 2,000: shorter runs move it by up to 2x near the knee
# the simulator's p90 at the search's rate: this branch x0.84-1.22 (4,000-token prompts, 0.15 / 0.3 s, batch 8 / 32,
# three engines); main x1.02-2.31. The search's rate within 25% of the rate at which the simulator's p90 meets the
# target (1,000-token prompts): this branch 1.00-1.10 of it, main 0.98-1.09 (docs/accuracy.md session 70 CC)
TOL = 0.25


def _search(engine: str, prompt: int, target: float, batch: int):
    space = SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100",), gpu_budget=1, prompt=prompt, output=100,
                        modes=("aggregated",), batches=(batch,), engine=engine, slo=SLOTargets(ttft_s=target))
    profile, = evaluate_replica(space, TP1)
    c, = [c for c in aggregated(space, profile) if c.replicas == 1]
    assert c.ttft_s <= target * (1 + 1e-9)
    return space, c


def _sim_p90(space, c, rate: float) -> float:
    """p90 TTFT (s) of the last half of the re-check's simulation of `c` under Poisson arrivals at `rate`/s (the
    engine's TTFT, no front end: the search prices the engine)."""
    cfg = sim_config(space, c, REQUESTS)
    cfg = replace(cfg, workload=replace(cfg.workload, through_server=False, rate=rate))
    recs = sorted(simulate(cfg, keep_log=False).records, key=lambda r: r.request.arrival_s)
    assert all(r.status == "finished" for r in recs)
    return float(np.percentile([r.ttft_s for r in recs[len(recs) // 2:]], 90))


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("target", [0.15, 0.3])
@pytest.mark.parametrize("batch", [8, 32])
def test_search_p90_ttft_under_a_target_is_the_simulated_poisson_runs(engine, target, batch):
    space, c = _search(engine, 4000, target, batch)
    ratio = _sim_p90(space, c, c.request_rate) / c.ttft_s
    assert 1 - TOL <= ratio <= 1 + TOL, (engine, target, batch, ratio)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("target", [0.15, 1.0])
def test_search_rate_under_a_target_is_the_simulators(engine, target):
    """At 1,000-token prompts the simulator's p90 rises steeply near the rate (x0.36-1.00 of the target at the
    search's rate, within 10% of its rate): the rate is what is judged, bracketed within 25%."""
    space, c = _search(engine, 1000, target, 32)
    assert _sim_p90(space, c, (1 - TOL) * c.request_rate) <= target < _sim_p90(space, c, (1 + TOL) * c.request_rate)


def test_a_pass_takes_the_prompts_that_arrived_during_the_one_before():
    assert pass_size(0.0, 0.02, 0.1, 8) == (1.0, 0.02)
    k, s = pass_size(400.0, 0.02, 0.1, 8)          # saturated: a full pass of 8
    assert (k, s) == (8, pytest.approx(0.1))
    k, s = pass_size(60.0, 0.02, 0.1, 8)           # k = 1 + (60 s(k))^2 / k, s(k) = 0.02 + (k - 1) 0.08 / 7
    assert k == pytest.approx(1 + (60 * s) ** 2 / k, rel=1e-4) and 1 < k < 8


def test_bulk_quantile_at_no_load_and_capacity():
    # no load: its own pass plus 0.9 of a decode step in progress
    assert bulk_ttft_quantile_s(0.0, 0.1, 0.1, 1, 0.02) == pytest.approx(0.1 + 0.9 * 0.02, rel=1e-6)
    # one prompt a pass of 0.1 s serves under 10/s; passes of 8 in 0.2 s serve 40/s
    assert bulk_ttft_quantile_s(10.0, 0.1, 0.1, 1, 0.02) == float("inf")
    assert bulk_ttft_quantile_s(20.0, 0.1, 0.2, 8, 0.02) < float("inf")
    assert bulk_ttft_quantile_s(5.0, 0.1, 0.1, 1, 0.02) > bulk_ttft_quantile_s(2.0, 0.1, 0.1, 1, 0.02)


def test_residual_quantile_solves_the_mixtures_tail():
    from whatif.config_search.queueing import residual_quantile_s
    for rho, s, step in ((0.0, 0.1, 0.02), (0.3, 0.1, 0.02), (0.95, 0.1, 0.02), (0.5, 0.01, 0.05), (1.0, 0.1, 0.0)):
        t = residual_quantile_s(rho, s, step)
        tail = rho * max(0.0, 1 - t / s) + (1 - rho) * (max(0.0, 1 - t / step) if step else 0.0)
        assert tail == pytest.approx(0.1, abs=1e-12), (rho, s, step)
