"""A run judged only by an SLO stops once it fails for sure (certain_miss.py): it stops only runs that fail in
full, stops them before their end, never stops one that passes, and the re-check's capacity search answers the
same with the stop as without."""
from dataclasses import replace

import pytest

from whatif.scenario import Scenario
from whatif.simulator.capacity import max_rate
from whatif.simulator.certain_miss import FailedRun, SloFailed
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, SimConfig
from whatif.simulator.workload import WorkloadSpec

SLO_ = SLO(ttft_s=0.5, tpot_s=0.03, attainment=0.9)
CFG = SimConfig(Scenario(), WorkloadSpec(requests=200, seed=5, prompt=2000, output=200, range_ratio=0.8))


def at(rate: float) -> SimConfig:
    return replace(CFG, workload=replace(CFG.workload, rate=rate))


@pytest.mark.parametrize("rate", [4.0, 12.0, 16.0, 40.0])
def test_a_stopped_run_fails_in_full_and_a_passing_one_runs_to_its_end(rate):
    full = simulate(at(rate))
    passes = full.attainment(SLO_) >= SLO_.attainment
    try:
        stopped = simulate(at(rate), stop_failing=SLO_)
    except SloFailed as exc:
        assert not passes
        assert full.attainment(SLO_) <= exc.attainment < SLO_.attainment   # the bound holds
        return
    assert passes or rate < 40   # the overloaded run must have stopped
    assert stopped.attainment(SLO_) == full.attainment(SLO_)


def test_the_overloaded_run_stops_early():
    with pytest.raises(SloFailed):
        simulate(at(40.0), stop_failing=SLO_)


def test_capacity_search_answers_the_same_with_failing_runs_stopped():
    def stopping(rate):
        try:
            return simulate(at(rate), stop_failing=SLO_)
        except SloFailed as exc:
            return FailedRun(exc)
    full = max_rate(lambda rate: simulate(at(rate)), SLO_, hi=30.0, rel_tol=0.1)
    fast = max_rate(stopping, SLO_, hi=30.0, rel_tol=0.1)
    assert fast.rate_rps == full.rate_rps > 0
    assert [p.passed for p in fast.probes] == [p.passed for p in full.probes]
    assert [p for p in fast.probes if p.passed] == [p for p in full.probes if p.passed]
