"""Capacity search with fake runs (no engine): a known threshold is found within tolerance, every probe is
logged, vacuous and impossible SLOs are reported, non-monotone attainment is handled conservatively."""
import pytest

from whatif.errors import WhatifError
from whatif.simulator.certain_miss import Judged
from whatif.simulator.capacity import compare_capacity, compare_text, max_rate
from whatif.simulator.config import SLO
from whatif.simulator.log import IterationLog
from whatif.simulator.metrics import SimulationResult
from whatif.simulator.request import FINISHED, Record, Request
from whatif.simulator.token_times import TokenTimes

SLO_1S = SLO(ttft_s=1.0, tpot_s=0.1, attainment=0.9)
N = 20


def fake_result(rate: float, passing: bool) -> SimulationResult:
    """N requests at `rate`; all within the SLO when `passing`, else every other one misses TTFT (attainment 0.5)."""
    records = []
    for i in range(N):
        arrival = i / rate
        ttft = 0.5 if passing or i % 2 else 2.0
        times = [arrival + ttft + 0.05 * k for k in range(4)]
        records.append(Record(Request(i, arrival, 64, 4), FINISHED, first_scheduled_s=arrival,
                              first_token_s=times[0], finish_s=times[-1], emitted=TokenTimes(times)))
    return SimulationResult(records, IterationLog(), [], records[-1].finish_s, SLO(), {}, {})


class FakeRun:
    """run(rate) that passes where `ok(rate)` and remembers the rates it was called with."""

    def __init__(self, ok):
        self.ok, self.calls = ok, []

    def __call__(self, rate):
        self.calls.append(rate)
        return fake_result(rate, self.ok(rate))


def test_finds_the_threshold_within_tolerance_and_logs_every_probe():
    run = FakeRun(lambda r: r <= 7.3)
    res = max_rate(run, SLO_1S, rel_tol=0.02)
    assert res.rate_rps <= 7.3 and 7.3 - res.rate_rps <= 0.02 * res.rate_rps
    assert [p.rate_rps for p in res.probes] == run.calls
    for p in res.probes:
        assert p.passed == (p.rate_rps <= 7.3)
        assert p.attainment == (1.0 if p.passed else 0.5)
        assert p.ttft_p90_s == pytest.approx(0.5 if p.passed else 2.0)
        assert p.tpot_p90_s == pytest.approx(0.05)
        assert p.goodput_rps > 0
    assert res.to_dict()["probes"][0]["rate_rps"] == run.calls[0]
    assert "req/s" in res.text() and str(len(res.probes)) in res.text()


def test_tighter_tolerance_takes_more_runs_and_lands_closer():
    coarse = max_rate(FakeRun(lambda r: r <= 7.3), SLO_1S, rel_tol=0.1)
    fine = max_rate(FakeRun(lambda r: r <= 7.3), SLO_1S, rel_tol=0.001)
    assert len(fine.probes) > len(coarse.probes)
    assert 7.3 - fine.rate_rps <= 7.3 - coarse.rate_rps


def test_threshold_below_the_first_guess_is_found_by_halving():
    res = max_rate(FakeRun(lambda r: r <= 0.3), SLO_1S)
    assert res.rate_rps <= 0.3 and 0.3 - res.rate_rps <= 0.02 * res.rate_rps


def test_a_vacuous_slo_is_an_error():
    # runs that meet the SLO at every rate and are long enough to judge it (a lean verdict, certain_miss.Judged)
    with pytest.raises(WhatifError, match="vacuous"):
        max_rate(lambda rate: Judged(1.0), SLO_1S)


def test_an_slo_met_only_by_a_burst_is_a_lower_bound_not_vacuous():
    # 20 requests lasting 0.65 s each meet the SLO at any rate, but above 19 / (2 x 0.65) = 14.6 req/s they all
    # arrive within two request latencies: a burst absorbed (run_length.py), so the search stops there
    res = max_rate(FakeRun(lambda r: True), SLO_1S)
    assert 7.3 < res.rate_rps <= 14.7
    assert any(p.short for p in res.probes) and "lower bound" in res.note and "--requests" in res.note


def test_no_slo_is_an_error_naming_the_flags():
    with pytest.raises(WhatifError, match="--slo-ttft"):
        max_rate(FakeRun(lambda r: True), SLO())


def test_all_failing_gives_rate_zero_and_a_note():
    run = FakeRun(lambda r: False)
    res = max_rate(run, SLO_1S)
    assert res.rate_rps == 0.0 and "fails" in res.note
    assert len(res.probes) == len(run.calls) <= 24 and not any(p.passed for p in res.probes)
    res = max_rate(FakeRun(lambda r: False), SLO_1S, lo=2.0)     # the given lower bound fails
    assert res.rate_rps == 0.0 and len(res.probes) == 1


def test_non_monotone_attainment_reports_a_pass_below_the_lowest_failure():
    # passes up to 5, fails in (5, 9), passes again in [9, 10]: the island above a failure is not capacity
    run = FakeRun(lambda r: r <= 5 or 9 <= r <= 10)
    res = max_rate(run, SLO_1S)
    lowest_fail = min(p.rate_rps for p in res.probes if not p.passed)
    assert res.rate_rps < lowest_fail and res.rate_rps in [p.rate_rps for p in res.probes if p.passed]
    assert 5 - res.rate_rps <= 0.02 * res.rate_rps


def test_given_bracket_and_run_budget():
    res = max_rate(FakeRun(lambda r: r <= 7.3), SLO_1S, lo=1.0, hi=4.0)
    assert res.rate_rps == 4.0 and "higher" in res.note                   # the top of the bracket passed
    res = max_rate(FakeRun(lambda r: r <= 7.3), SLO_1S, rel_tol=1e-9, max_runs=6)
    assert len(res.probes) == 6 and "max_runs" in res.note and res.rate_rps <= 7.3
    with pytest.raises(WhatifError):
        max_rate(FakeRun(lambda r: True), SLO_1S, lo=3.0, hi=2.0)


def test_compare_capacity_side_by_side():
    results = compare_capacity({"small": FakeRun(lambda r: r <= 3.0), "big": FakeRun(lambda r: r <= 7.3)}, SLO_1S)
    assert results["small"].rate_rps < results["big"].rate_rps
    text = compare_text(results)
    assert "small" in text and "big" in text and "req/s" in text and "TTFT <= 1 s" in text
