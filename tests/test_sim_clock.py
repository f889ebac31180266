"""Iterations that end before any other event move the clock without queueing a wait (replica.advance):
the run is the same, iteration for iteration, as one that waits on the clock every time."""
from __future__ import annotations

import pytest

from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import cluster, replica
from whatif.simulator.clock import Clock
from whatif.simulator.config import ClusterConfig, SimConfig
from whatif.simulator.workload import WorkloadSpec

CONFIGS = [SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=300, seed=3, rate=20.0)),
           SimConfig(Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2)),
                     WorkloadSpec(lengths="sharegpt", requests=200, seed=3, rate=30.0)),
           SimConfig(Scenario(hardware="dgx-h100"), WorkloadSpec(lengths="sharegpt", requests=200, seed=3, rate=30.0),
                     cluster=ClusterConfig(replicas=2, prefill_replicas=1))]


def run(cfg):
    r = cluster.simulate(cfg)
    return {k: list(v) for k, v in r.log.columns.items()}, [(x.first_token_s, x.finish_s) for x in r.records]


@pytest.mark.parametrize("cfg", CONFIGS, ids=["mixed", "pp2", "disaggregated"])
def test_advancing_the_clock_changes_nothing(cfg, monkeypatch):
    skipped = []
    real = replica.advance

    def counted(env, delay):
        moved = real(env, delay)
        skipped.append(moved)
        return moved
    monkeypatch.setattr(replica, "advance", counted)
    fast = run(cfg)
    monkeypatch.setattr(replica, "advance", lambda env, d: False)
    assert fast == run(cfg)
    assert any(skipped) and not all(skipped)   # both ways were taken


def test_advance_waits_for_an_earlier_or_tied_event():
    env = Clock()
    env.at(1.0, lambda _: None)
    assert not replica.advance(env, 1.0)      # a tie: the queue's order decides
    assert not replica.advance(env, 2.0)
    assert replica.advance(env, 0.5) and env.now == 0.5
