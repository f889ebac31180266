"""Iterations that end before any other event move the clock without queueing a wait (clock.advance):
the run is the same, iteration for iteration, as one that waits on the clock every time (the run's
Stepping.advance given as a parameter: stepping.py)."""
from __future__ import annotations

import pytest

from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.clock import Clock, advance, run_until_mine
from whatif.simulator.config import ClusterConfig, SimConfig
from whatif.simulator.stepping import EXACT, Stepping, never_advance
from whatif.simulator.workload import WorkloadSpec

CONFIGS = [SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=300, seed=3, rate=20.0)),
           SimConfig(Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2)),
                     WorkloadSpec(lengths="sharegpt", requests=200, seed=3, rate=30.0)),
           SimConfig(Scenario(hardware="dgx-h100"), WorkloadSpec(lengths="sharegpt", requests=200, seed=3, rate=30.0),
                     cluster=ClusterConfig(replicas=2, prefill_replicas=1))]


def run(cfg, stepping=EXACT):
    r = cluster.simulate(cfg, stepping=stepping)
    return {k: list(v) for k, v in r.log.columns.items()}, [(x.first_token_s, x.finish_s) for x in r.records]


@pytest.mark.parametrize("cfg", CONFIGS, ids=["mixed", "pp2", "disaggregated"])
def test_advancing_the_clock_changes_nothing(cfg):
    skipped = []

    def counted(env, delay):
        moved = advance(env, delay)
        skipped.append(moved)
        return moved
    fast = run(cfg, Stepping(advance=counted))
    assert fast == run(cfg, Stepping(advance=never_advance))
    assert any(skipped) and not all(skipped)   # both ways were taken


def test_advance_waits_for_an_earlier_or_tied_event():
    env = Clock()
    env.at(1.0, lambda _: None)
    assert not advance(env, 1.0)      # a tie: the queue's order decides
    assert not advance(env, 2.0)
    assert advance(env, 0.5) and env.now == 0.5


def test_run_until_mine_makes_the_calls_a_wait_would_in_their_order():
    """A process that makes the calls due before its own end (decode_run's in-flight events) leaves the same trace,
    ties and sequence numbers included, as one that waits on the clock."""
    def trace(inline: bool):
        clock, log = Clock(), []

        def other():
            for _ in range(6):
                log.append(("other", clock.now))
                yield 0.25

        def me():
            for _ in range(4):
                log.append(("me", clock.now))
                if inline:
                    run_until_mine(clock, clock.now + 0.5)
                else:
                    yield 0.5
            log.append(("me done", clock.now))
            yield 0.0

        clock.start(other())
        clock.start(me())
        clock.at(0.5, lambda _: log.append(("call", clock.now)))   # (a tie with me's first end, queued before it)
        clock.run()
        return log, next(clock.eids)

    assert trace(True) == trace(False)
    assert ("call", 0.5) in trace(True)[0]
