"""Search's TTFT under load: the rate a configuration claims is one at which its own TTFT, queueing included (M/D/c
for Poisson arrivals, config_search/queueing.py), meets the TTFT target; a lone request's TTFT is not enough."""
from __future__ import annotations

import math

import pytest

from whatif.config_search.configs import aggregated, disaggregated
from whatif.config_search.evaluate import BatchPoint, ReplicaProfile
from whatif.config_search.queueing import ATTAINMENT, RATE_TOL, erlang_c, max_rate_within, wait_quantile_s
from whatif.config_search.space import ReplicaSetup, SearchSpace, SLOTargets

SETUP = ReplicaSetup("dgx-h100", 4, 1, 1, "fp8", "fp8")


def space(ttft_s=None, output=1000):
    return SearchSpace(model="llama-3.1-70b", hardware=("dgx-h100",), gpu_budget=8, prompt=4000, output=output,
                       slo=SLOTargets(ttft_s=ttft_s, tpot_s=0.05))


def test_md1_mean_is_pollaczek_khinchine():
    # the wait's tail is C exp(-2 t (c/D - lam)): its mean C / (2 (c/D - lam)) is P-K's rho D / (2 (1 - rho)) at c = 1
    d, lam = 0.4, 2.0
    rho = lam * d
    mean = erlang_c(1, rho) / (2 * (1 / d - lam))
    assert mean == pytest.approx(rho * d / (2 * (1 - rho)), rel=1e-12)
    assert erlang_c(1, rho) == pytest.approx(rho)


def test_wait_grows_with_rate_and_is_unbounded_at_capacity():
    d, c = 2.0, 8
    waits = [wait_quantile_s(r, d, c) for r in (0.5, 2.0, 3.0, 3.9, 3.99)]
    assert waits == sorted(waits) and waits[-1] > waits[-2] > 0
    assert wait_quantile_s(c / d, d, c) == math.inf
    assert wait_quantile_s(0.01, d, c) == 0.0          # hardly anyone waits: the quantile is 0


def test_max_rate_within_inverts_the_wait():
    d, c, budget = 0.3, 1, 0.5
    lam = max_rate_within(budget, d, c)
    assert 0 < lam < c / d
    assert wait_quantile_s(lam, d, c) <= budget < wait_quantile_s(lam + 2 * RATE_TOL * c / d, d, c)
    assert max_rate_within(-0.1, d, c) == 0.0


def _agg_profile(prefill_s=0.3, e2e_s=40.0, batch=32):
    pt = BatchPoint(batch, 2.0, (e2e_s - prefill_s) / 999, e2e_s, batch * 1000 / e2e_s)
    return ReplicaProfile(SETUP, prefill_s=prefill_s, points=(pt,), max_batch=batch)


def test_aggregated_rate_meets_the_ttft_target_under_poisson_load():
    p = _agg_profile()
    c = aggregated(space(ttft_s=1.0), p)[0]
    full = 32 / 40.0
    # a lone request's TTFT (0.3 s) at full load would claim B / e2e(B): a queue without bound
    assert c.request_rate < full
    assert c.ttft_s > p.prefill_s                     # fails when TTFT ignores load
    assert c.ttft_s <= 1.0 + 1e-9
    # its own pass, the step in progress and the prefill backlog (queueing.bulk_ttft_quantile_s) plus the slot wait
    # (M/D/B): more than a lone prefill plus the slot wait (session 70 CC; was equal to it)
    assert c.ttft_s > p.prefill_s + wait_quantile_s(c.request_rate, 40.0, 32, ATTAINMENT)
    assert c.tok_s_per_gpu == pytest.approx(c.request_rate * 1000 / SETUP.gpus)
    # no TTFT target: full load, a closed loop of B clients (closed_loop_ttft.py), at least a lone request's TTFT
    free = aggregated(space(), p)[0]
    assert free.request_rate == pytest.approx(full) and free.ttft_s == p.prefill_s   # (this profile's passes: 0.24 s)
    slow = aggregated(space(), ReplicaProfile(SETUP, prefill_s=0.3, max_batch=32,
                                              points=(BatchPoint(32, 8.0, 0.04, 48.0, 32 * 1000 / 48.0),)))[0]
    assert slow.ttft_s == pytest.approx(0.5 * (2 - 1 / 16))    # 16 passes of 2 prompts, 0.5 s each: a train
    assert slow.ttft_s + 999 * slow.tpot_s == pytest.approx(48.0)


def test_disaggregated_prefill_queue_bounds_the_rate():
    pre = ReplicaProfile(SETUP, prefill_s=0.45, prefill_rps=1 / 0.45, kv_send_node_s=0.01, kv_send_net_s=0.02)
    pt = BatchPoint(128, 9.0, 0.025, 34.0, 128 * 1000 / 34.0)
    dec = ReplicaProfile(SETUP, prefill_s=0.45, points=(pt,), max_batch=128)
    rows = {(c.prefill_replicas, c.replicas): c for c in disaggregated(space(ttft_s=1.0), pre, dec)}
    c = rows[(1, 1)]
    assert c.request_rate < 1 / 0.45                  # fails when the prefill server runs at full load
    assert 0.46 < c.ttft_s <= 1.0 + 1e-9
    rows_free = {(r.prefill_replicas, r.replicas): r for r in disaggregated(space(), pre, dec)}
    assert rows_free[(1, 1)].request_rate == pytest.approx(1 / 0.45) and rows_free[(1, 1)].ttft_s == pytest.approx(0.46)


def test_disaggregated_decode_slots_wait_in_ttft():
    # the first token comes from the decode pool: a full decode pool (batch 8, slots held 999 steps) queues too
    pre = ReplicaProfile(SETUP, prefill_s=0.3, prefill_rps=1 / 0.3, kv_send_node_s=0.01, kv_send_net_s=0.02)
    pt = BatchPoint(8, 2.0, 0.012, 12.3, 8 * 1000 / 12.3)
    dec = ReplicaProfile(SETUP, prefill_s=0.3, points=(pt,), max_batch=8)
    c = {(r.prefill_replicas, r.replicas): r for r in disaggregated(space(ttft_s=1.0), pre, dec)}[(1, 1)]
    decode_rps = 8 / (999 * 0.012)
    assert c.request_rate < decode_rps                # fails when the decode pool runs at full load
    d_wait = wait_quantile_s(c.request_rate, 999 * 0.012, 8)
    assert d_wait > 0 and c.ttft_s == pytest.approx(0.31 + wait_quantile_s(c.request_rate, 0.3, 1) + d_wait)
    assert c.ttft_s <= 1.0 + 1e-9
