"""A capacity answer whose own run was overloaded says so: a short run (few --requests) ends before its growing
queue misses the SLO, so a rate passes by the run's length (session 74 L: gpt-oss-120b mxfp4 on one H200, 1k/1k,
TTFT 1 s / TPOT 30 ms: 150 requests answered 81 req/s where the engine sustained 5.4 req/s; 2000 requests 7.25)."""
from whatif.simulator.capacity import max_rate
from whatif.simulator.config import SLO
from whatif.simulator.log import IterationLog
from whatif.simulator.metrics import SimulationResult
from whatif.simulator.request import FINISHED, Record, Request
from whatif.simulator.token_times import TokenTimes

SLO_1S = SLO(ttft_s=1.0, tpot_s=0.1, attainment=0.9)
N = 20


def burst(rate: float, service_s: float) -> SimulationResult:
    """N requests at `rate` served one per `service_s`: the wait for the first token grows by service_s a request
    when service_s > 1 / rate (a queue growing for the whole run), yet stays under 1 s for N = 20 at 40 ms."""
    records = []
    for i in range(N):
        arrival = i / rate
        first = max(arrival, i * service_s) + 0.05
        times = [first + 0.01 * k for k in range(4)]
        records.append(Record(Request(i, arrival, 64, 4), FINISHED, first_scheduled_s=arrival,
                              first_token_s=times[0], finish_s=times[-1], emitted=TokenTimes(times)))
    return SimulationResult(records, IterationLog(), [], records[-1].finish_s, SLO(), {}, {})


def test_an_answer_from_an_overloaded_run_is_flagged():
    # every rate up to 100 req/s passes on 20 requests, though the server does one per 40 ms (25 req/s)
    res = max_rate(lambda rate: burst(rate, 0.04) if rate <= 100 else burst(rate, 0.2), SLO_1S, hi=128.0)
    assert 90 < res.rate_rps <= 100
    assert res.note.startswith("OVERLOADED at the answer"), res.note
    assert "more --requests" in res.note
    assert next(p for p in res.probes if p.rate_rps == res.rate_rps).overloaded


def test_a_sustained_answer_carries_no_warning():
    # served faster than offered up to 10 req/s (one per 50 ms = 20 req/s), failing above
    res = max_rate(lambda rate: burst(rate, 0.05) if rate <= 10 else burst(rate, 0.2), SLO_1S, hi=16.0)
    assert 9 < res.rate_rps <= 10
    assert "OVERLOADED" not in res.note
    assert not any(p.overloaded for p in res.probes if p.passed)
