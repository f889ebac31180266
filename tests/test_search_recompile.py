"""Search and simulate agree on a launch that builds a prefill kernel per new token count (the simulator's
`prefill_recompile_s`, simulator/prefill_recompile.py; config_search/recompile.py): the re-check simulates the launch
with it, the simulator pays it only in warm-up (fixed lengths: a finite set of counts), and the search's steady state,
which pays none, is the warmed simulator's. Before session 70 V a search could not be told the launch pays it, so
its re-check simulated a server that never did."""
from __future__ import annotations

import statistics
from dataclasses import replace

import pytest

from whatif.config_search.configs import aggregated, disaggregated
from whatif.config_search.evaluate import evaluate_replica
from whatif.config_search.recheck import sim_config
from whatif.config_search.space import ReplicaSetup, SearchSpace
from whatif.errors import WhatifError
from whatif.simulator.cluster import simulate

COMPILE_S = 0.2     # host s a new prefill token count (SGLang 0.5.8's cuDNN FP4 plans are ~1.3 s, its L2-norm ~53 ms)
SPACE = SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100",), gpu_budget=1, prompt=1000, output=32,
                    modes=("aggregated",), batches=(1, 8), engine="sglang", prefill_recompile_s=COMPILE_S)
TP1 = ReplicaSetup("dgx-h100", tp=1, pp=1, ep=1, weight="bf16", kv="bf16")
# the search's TTFT at one client (a lone prompt's prefill) against the warmed simulator's: the simulator adds the
# engine front end (4 ms + 1.5 us a prompt token, engine_profiles/sglang.yaml `frontend`) only to closed-loop clients
# that cross the server (served TTFT); measured here without it, both price the same lone prefill step (equal here)
TTFT_TOL = 0.02


def _configs(space):
    profile, = evaluate_replica(space, TP1)
    return {c.batch: c for c in aggregated(space, profile) if c.replicas == 1}


def _closed_loop_ttfts(space, c, clients: int, requests: int) -> list[float]:
    """TTFTs, in arrival order, of the re-check's simulation of `c` run as `clients` closed-loop clients, from the
    send through the server's front end (the default run; the search's closed-loop TTFT includes it, 70 BB)."""
    cfg = sim_config(space, c, requests)
    cfg = replace(cfg, workload=replace(cfg.workload, concurrency=clients, through_server=True))
    res = simulate(cfg, keep_log=False)
    assert all(r.status == "finished" for r in res.records)
    return [r.served_ttft_s(None) for r in sorted(res.records, key=lambda r: r.request.arrival_s)]


@pytest.mark.parametrize("value", [-0.1, 11.0, float("nan"), "slow"])
def test_a_bad_recompile_time_names_the_flag(value):
    with pytest.raises(WhatifError, match="^--prefill-recompile-s"):
        replace(SPACE, prefill_recompile_s=value)


def test_the_recheck_simulates_the_launch_with_its_recompile():
    """Both pools of a disaggregated re-check and an aggregated one run the compile; a search without it does not."""
    c = _configs(SPACE)[8]
    assert sim_config(SPACE, c, 10).scheduler.prefill_recompile_s == COMPILE_S
    assert sim_config(replace(SPACE, prefill_recompile_s=0.0), c, 10).scheduler.prefill_recompile_s == 0.0
    space = replace(SPACE, modes=("disaggregated",), gpu_budget=2)
    profile, = evaluate_replica(space, TP1)
    d = next(c for c in disaggregated(space, profile, profile) if (c.prefill_replicas, c.replicas) == (1, 1))
    cfg = sim_config(space, d, 10)
    assert cfg.cluster.prefill_scheduler(cfg.scheduler).prefill_recompile_s == COMPILE_S


@pytest.mark.parametrize("batch", [1, 8])
def test_the_search_prices_the_warmed_server_the_simulator_runs(batch):
    """The simulator pays the compile in warm-up (the first requests' TTFT rises by at least one compile) and not
    after (the last half of a closed loop of `batch` clients at fixed lengths runs exactly as without it); the
    search's figures are the same with the setting and without, and at one client its TTFT is the warmed run's."""
    unset = replace(SPACE, prefill_recompile_s=0.0)
    on, off = _configs(SPACE)[batch], _configs(unset)[batch]
    assert (on.ttft_s, on.tpot_s, on.request_rate) == (off.ttft_s, off.tpot_s, off.request_rate)
    requests = 12 * batch
    paid, free = _closed_loop_ttfts(SPACE, on, batch, requests), _closed_loop_ttfts(unset, off, batch, requests)
    assert paid[0] >= free[0] + COMPILE_S * (1 - 1e-9)       # the simulator pays it: the first prompt's count is new
    warm = slice(requests // 2, None)
    assert statistics.fmean(paid[warm]) == pytest.approx(statistics.fmean(free[warm]), rel=1e-9)
    if batch == 1:
        assert on.ttft_s == pytest.approx(statistics.fmean(paid[warm]), rel=TTFT_TOL)
        # the run's mean is not the steady state: with the warm-up in it the search would be off by far more
        assert statistics.fmean(paid) > on.ttft_s * (1 + 5 * TTFT_TOL)


def test_under_poisson_arrivals_the_compile_is_a_warm_up_that_drains():
    """The re-check's traffic (Poisson, fixed lengths) at 3/4 of the search's rate for two SGLang replicas: the run pays
    1.31 s a new count (3-8 counts a replica) and its queue, and once that drained the last half of the run's p90 TTFT
    is the run's without the compile (within 10%), the steady state the search prices. (Nearer the search's rate the
    drain outlasts a re-check's few hundred requests: docs/accuracy.md, session 70 V.)"""
    import numpy as np
    space = replace(SPACE, gpu_budget=2, output=100, batches=(32,), prefill_recompile_s=1.31,
                    slo=replace(SPACE.slo, ttft_s=1.0, tpot_s=0.05))
    p90 = {}
    for compile_s in (0.0, 1.31):
        s = replace(space, prefill_recompile_s=compile_s)
        profile, = evaluate_replica(s, TP1)
        c = next(c for c in aggregated(s, profile) if c.replicas == 2)
        cfg = sim_config(s, c, 3000)
        res = simulate(replace(cfg, workload=replace(cfg.workload, rate=0.75 * c.request_rate)), keep_log=False)
        ttft = np.array([r.ttft_s for r in sorted(res.records, key=lambda r: r.request.arrival_s)])
        p90[compile_s] = (np.percentile(ttft, 90), np.percentile(ttft[len(ttft) // 2:], 90))
    assert p90[1.31][0] > 10 * p90[0.0][0]                          # the whole run pays the warm-up
    assert p90[1.31][1] == pytest.approx(p90[0.0][1], rel=0.10)     # its last half does not
