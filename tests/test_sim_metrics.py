"""SimulationResult metrics on hand-made records and logs (no engine): percentiles, SLO attainment and goodput,
throughput window, KV-memory and busy fractions, CSV files and the text face."""
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from whatif.errors import WhatifError
from whatif.simulator.config import SLO
from whatif.simulator.log import IterationLog, ReplicaInfo
from whatif.simulator.metrics import SimulationResult, attains
from whatif.simulator.request import FINISHED, QUEUED, REJECTED, RUNNING, Record, Request
from whatif.simulator.token_times import TokenTimes


def finished(i, arrival, ttft, tpot, tokens, prompt=100, queue=0.0, cached=0, preemptions=0):
    """A finished request whose tokens come out at a steady `tpot` after the first at arrival + ttft."""
    times = [arrival + ttft + k * tpot for k in range(tokens)]
    return Record(Request(i, arrival, prompt, tokens), FINISHED, replica=0, first_scheduled_s=arrival + queue,
                  first_token_s=times[0], finish_s=times[-1], emitted=TokenTimes(times), cached_tokens=cached,
                  preemptions=preemptions)


def unfinished(i, arrival, status, reason="", tokens=0, prompt=100):
    times = [arrival + 0.1 * (k + 1) for k in range(tokens)]
    started = status == RUNNING
    return Record(Request(i, arrival, prompt, 50), status, reason=reason,
                  first_scheduled_s=arrival if started else None,
                  first_token_s=times[0] if times else None, emitted=TokenTimes(times))


NO_SLO = SLO()


def result(records, slo=NO_SLO, log=None, replicas=(), end_s=None):
    end = end_s if end_s is not None else max([r.finish_s or 0 for r in records] + [1.0])
    return SimulationResult(records, log or IterationLog(), list(replicas), end, slo, {"model": "toy"}, {"hits": 3})


def random_records(seed, n=40):
    rng = np.random.default_rng(seed)
    return [finished(i, float(i) * 0.5, float(rng.uniform(0.05, 2.0)), float(rng.uniform(0.01, 0.1)),
                     int(rng.integers(1, 30)), queue=float(rng.uniform(0, 0.05))) for i in range(n)]


# ---------------------------------------------------------------- latency percentiles

def test_percentiles_match_numpy_and_itls_are_pooled():
    recs = random_records(1)
    lat = result(recs).summary()["latency"]
    ttft = [r.ttft_s for r in recs]
    assert [lat["ttft_s"][k] for k in ("p50", "p90", "p95", "p99")] == pytest.approx(
        np.percentile(ttft, [50, 90, 95, 99]))
    assert lat["ttft_s"]["max"] == pytest.approx(max(ttft)) and lat["ttft_s"]["mean"] == pytest.approx(np.mean(ttft))
    itls = np.concatenate([np.diff(r.token_times) for r in recs])
    assert lat["itl_s"]["p99"] == pytest.approx(np.percentile(itls, 99))
    # one-token requests have no TPOT: they are left out of its percentiles, not counted as zero
    tpots = [r.tpot_s for r in recs if len(r.token_times) > 1]
    assert lat["tpot_s"]["p50"] == pytest.approx(np.percentile(tpots, 50))
    assert lat["queue_s"]["max"] == pytest.approx(max(r.queue_s for r in recs))


def test_latency_is_none_when_nothing_finished():
    s = result([unfinished(0, 0.0, QUEUED), unfinished(1, 0.2, REJECTED, "prompt too long")]).summary()
    assert all(v is None for v in s["latency"]["ttft_s"].values())
    assert s["throughput"]["finished_rps"] is None and s["throughput"]["window_s"] is None
    json.dumps(s)


# ---------------------------------------------------------------- SLO, goodput, throughput

def test_rejected_and_unfinished_requests_are_slo_misses():
    recs = [finished(0, 0.0, 0.1, 0.01, 10), finished(1, 1.0, 0.1, 0.01, 10),
            unfinished(2, 1.5, REJECTED, "prompt longer than KV capacity"), unfinished(3, 1.6, QUEUED),
            unfinished(4, 1.7, RUNNING, tokens=3)]
    s = result(recs, SLO(ttft_s=1.0, tpot_s=0.05)).summary()
    assert s["slo"]["attaining"] == 2 and s["slo"]["attainment"] == pytest.approx(2 / 5)
    c = s["requests"]
    assert (c["arrived"], c[FINISHED], c[QUEUED], c[RUNNING], c[REJECTED]) == (5, 2, 1, 1, 1)
    assert c["rejected_reasons"] == {"prompt longer than KV capacity": 1}


def test_one_token_request_passes_tpot_but_not_a_slow_ttft():
    slo = SLO(ttft_s=0.5, tpot_s=1e-6)
    assert attains(finished(0, 0.0, 0.2, 10.0, 1), slo)
    assert not attains(finished(0, 0.0, 0.2, 0.01, 2), slo)       # TPOT checked once there is a second token
    assert not attains(finished(0, 0.0, 0.6, 0.0, 1), slo)         # TTFT still checked
    assert attains(finished(0, 0.0, 9.0, 0.01, 5), SLO(tpot_s=0.02))  # a missing objective is not checked


def test_goodput_counts_only_attaining_requests_over_the_busy_window():
    recs = [finished(0, 2.0, 0.1, 0.01, 5), finished(1, 3.0, 5.0, 0.01, 5), finished(2, 4.0, 0.1, 0.2, 5),
            finished(3, 5.0, 0.1, 0.01, 5)]
    slo = SLO(ttft_s=1.0, tpot_s=0.1)
    s = result(recs, slo).summary()
    window = max(r.finish_s for r in recs) - 2.0                   # first arrival to last finish
    assert s["throughput"]["window_s"] == pytest.approx(window)
    assert s["slo"]["goodput_rps"] == pytest.approx(2 / window)
    assert s["throughput"]["finished_rps"] == pytest.approx(4 / window)
    assert s["throughput"]["output_tok_s"] == pytest.approx(20 / window)
    assert s["throughput"]["input_tok_s"] == pytest.approx(400 / window)


def test_without_an_slo_attainment_and_goodput_are_none():
    s = result(random_records(2, 5)).summary()["slo"]
    assert s["attainment"] is None and s["goodput_rps"] is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 3.0), st.floats(0.001, 0.2), st.integers(1, 8), st.booleans()),
                min_size=1, max_size=12),
       st.floats(0.05, 2.0), st.floats(0.005, 0.1))
def test_attainment_and_goodput_are_bounded_by_completion(rows, ttft_slo, tpot_slo):
    recs = [finished(i, float(i), ttft, tpot, n) if done else unfinished(i, float(i), QUEUED)
            for i, (ttft, tpot, n, done) in enumerate(rows)]
    s = result(recs, SLO(ttft_s=ttft_slo, tpot_s=tpot_slo)).summary()
    share_finished = s["requests"][FINISHED] / len(recs)
    assert 0 <= s["slo"]["attainment"] <= share_finished
    if s["slo"]["goodput_rps"] is not None:
        assert s["slo"]["goodput_rps"] <= s["throughput"]["finished_rps"] + 1e-12


# ---------------------------------------------------------------- iterations: KV, batch, busy

def two_replica_log():
    log = IterationLog()
    # replica, start, duration, decode, prefill seqs, prefill tokens, kv used, waiting, running, preempted, swap
    log.append(0, 0.0, 1.0, 0, 2, 300, 10, 0, 2, 0, 0.0)
    log.append(0, 1.0, 3.0, 2, 0, 0, 50, 0, 2, 0, 0.0)
    log.append(1, 0.0, 2.0, 4, 1, 100, 20, 1, 5, 1, 0.0)
    replicas = [ReplicaInfo(0, "mixed", 1, 100, 16, 1e5), ReplicaInfo(1, "mixed", 2, 40, 16, 1e5)]
    return log, replicas


def test_kv_fractions_are_time_weighted_per_replica_and_maxed_over_replicas():
    log, replicas = two_replica_log()
    s = result(random_records(3, 3), log=log, replicas=replicas, end_s=8.0).summary()
    r0, r1 = s["replicas"]
    assert r0["kv_peak_fraction"] == pytest.approx(0.5)
    assert r0["kv_mean_fraction"] == pytest.approx((0.1 * 1 + 0.5 * 3) / 4)   # weighted by duration
    assert r1["kv_peak_fraction"] == r1["kv_mean_fraction"] == pytest.approx(0.5)
    assert (r0["busy_fraction"], r1["busy_fraction"]) == (pytest.approx(4 / 8), pytest.approx(2 / 8))
    assert s["kv_memory"]["peak_fraction"] == pytest.approx(0.5)
    assert s["kv_memory"]["mean_fraction"] == pytest.approx(0.5)
    assert s["batch"] == {"mean_seqs": pytest.approx(3.0), "max_seqs": 5, "mean_tokens": pytest.approx(406 / 3)}
    assert s["iterations"] == 3 and s["setup"] == {"model": "toy"} and s["lookup_stats"] == {"hits": 3}
    json.dumps(s)


def test_preemptions_and_prefix_hits_are_counted():
    recs = [finished(0, 0.0, 0.1, 0.01, 3, prompt=200, cached=150, preemptions=2),
            finished(1, 0.5, 0.1, 0.01, 3, prompt=200, cached=0, preemptions=0),
            unfinished(2, 0.6, QUEUED, prompt=1000)]                  # never admitted: not in the hit rate
    s = result(recs).summary()
    assert s["preemptions"] == {"total": 2, "requests_preempted": 1}
    assert s["prefix_cache"]["hit_rate"] == pytest.approx(150 / 400)


# ---------------------------------------------------------------- frames, CSV, text

def test_csv_has_one_row_per_request_and_per_iteration(tmp_path):
    log, replicas = two_replica_log()
    recs = random_records(4, 7) + [unfinished(7, 9.0, REJECTED, "too long")]
    paths = result(recs, log=log, replicas=replicas).write_csv(str(tmp_path / "out"))
    requests, iterations = (pd.read_csv(p) for p in paths)
    assert list(requests["id"]) == list(range(8))
    assert list(requests["status"])[-1] == REJECTED and pd.isna(requests["ttft_s"].iloc[-1])
    assert requests["tokens"].tolist() == [len(r.token_times) for r in recs]
    assert len(iterations) == len(log)
    assert (iterations["end_s"] == iterations["start_s"] + iterations["duration_s"]).all()
    assert (iterations["tokens"] == iterations["decode_seqs"] + iterations["prefill_tokens"]).all()


def test_csv_dir_that_is_a_file_is_a_user_error(tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    with pytest.raises(WhatifError, match="--csv-dir"):
        result(random_records(5, 2)).write_csv(str(f))


def test_text_has_units_and_counts():
    log, replicas = two_replica_log()
    recs = random_records(6, 9) + [unfinished(9, 5.0, REJECTED, "prompt too long"), unfinished(10, 5.1, QUEUED)]
    text = result(recs, SLO(ttft_s=1.0, tpot_s=0.05), log=log, replicas=replicas).text()
    assert "model: toy" in text
    assert "11 arrived, 9 finished, 1 still queued, 0 still running, 1 rejected (1 prompt too long)" in text
    header = next(line for line in text.splitlines() if line.startswith("latency"))
    assert all(f" {column}" in header for column in ("TTFT", "TPOT", "ITL", "E2EL", "queue"))
    for row in ("p50", "p99", "mean", "max"):
        assert any(line.startswith(row) and ("ms" in line or " s" in line) for line in text.splitlines())
    assert "req/s" in text and "tok/s" in text and "goodput" in text and "%" in text
    assert "SLO" not in result(recs).text()          # no SLO given, no attainment line


# ---------------------------------------------------------------- steady state, offered rate, rejections

def steady_records(n: int, rate: float, e2e: float) -> list[Record]:
    """Requests arriving every 1/rate s, each done `e2e` s later (one token a second after the first)."""
    return [finished(i, i / rate, e2e - 1.0, 1.0, 2) for i in range(n)]


def test_steady_state_throughput_is_the_offered_rate_when_nothing_queues():
    recs = steady_records(100, rate=10.0, e2e=5.0)
    t = result(recs).summary()["throughput"]
    assert t["offered_rps"] == pytest.approx(10.0)
    assert t["steady"]["finished_rps"] == pytest.approx(10.0)
    assert t["steady"]["output_tok_s"] == pytest.approx(20.0, rel=0.05)   # two tokens a request
    assert t["finished_rps"] < 0.7 * 10.0          # the busy window counts the drain: it understates


def test_steady_state_throughput_past_capacity_is_the_service_rate():
    # arrivals at 10/s, served one at a time every 0.25 s: completions at 4/s
    recs = [finished(i, i / 10.0, 0.25 * (i + 1) - i / 10.0 - 0.01, 0.01, 2) for i in range(200)]
    assert result(recs).summary()["throughput"]["steady"]["finished_rps"] == pytest.approx(4.0)
    assert "steady state" in result(recs).text()


@given(st.integers(2, 30), st.floats(0.1, 50.0), st.floats(0.01, 20.0))
@settings(max_examples=40, deadline=None)
def test_goodput_is_never_above_the_offered_rate(n, rate, e2e):
    res = result(steady_records(n, rate, e2e + 1.0), slo=SLO(ttft_s=1e9))
    s = res.summary()
    assert s["slo"]["goodput_rps"] <= s["throughput"]["offered_rps"] * (1 + 1e-12)


def test_context_window_rejections_are_one_summary_with_the_longest_and_a_remedy():
    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
    from whatif.scenario import Scenario
    reqs = [Request(i, 0.01 * i, 9000 + 100 * i, 10) for i in range(50)] + [Request(50, 1.0, 100, 10)]
    res = simulate(SimConfig(Scenario(), None, SchedulerConfig(), ClusterConfig(), SLO()), requests=reqs)
    c = res.summary()["requests"]
    assert c["rejected"] == 50 and len(c["rejected_reasons"]) == 1
    line = [x for x in res.text().splitlines() if x.startswith("requests:")][0]
    assert "50 prompt + output exceeds the context window (8192 tokens)" in line
    assert "longest rejected request is 13910 tokens" in line and "--context-window" in line


def test_latency_in_one_pass_is_each_records_own_figures():
    """latency() reads TTFT, TPOT and the served TTFT in one pass over the records (first and last token read
    from the pieces directly): the same stats as each record's properties, on a real run with the engine spec's
    front end, speculative rounds (several tokens a chunk) and a closed loop's send times."""
    from whatif.scenario import Scenario
    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import SimConfig
    from whatif.simulator.metrics import stats
    from whatif.simulator.workload import WorkloadSpec
    for cfg in (SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=300, seed=3, rate=30.0)),
                SimConfig(Scenario(techniques=("eagle3",)), WorkloadSpec(requests=60, seed=3, rate=10.0)),
                SimConfig(Scenario(), WorkloadSpec(requests=120, seed=3, concurrency=8, through_server=True))):
        res = simulate(cfg)
        assert res.frontend is not None
        done = res.finished()
        lat = res.latency()
        assert lat["ttft_s"] == stats([r.ttft_s for r in done])
        assert lat["tpot_s"] == stats([r.tpot_s for r in done if r.tpot_s is not None])
        assert lat["served_ttft_s"] == stats([r.served_ttft_s(res.frontend) for r in done])


def test_percentiles_match_numpy_float_for_float():
    """order_stats.percentiles (a sort and numpy's _lerp, no numpy.ma import) answers np.percentile's linear method."""
    from whatif.simulator.order_stats import PERCENTILES, percentiles
    rng = np.random.default_rng(7)
    cases = [np.array([1.0]), np.array([2.0, 1.0]), np.array([1.0, np.nan, 3.0])]
    cases += [rng.random(n) * 10 for n in range(1, 120)] + [rng.lognormal(0, 2, 5001)]
    cases += [rng.integers(0, 4, n).astype(float) * 1e-3 for n in (7, 64, 999)]   # ties
    for a in cases:
        assert np.array_equal(percentiles(a), np.percentile(a, PERCENTILES), equal_nan=True), len(a)
