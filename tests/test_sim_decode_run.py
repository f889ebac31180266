"""Runs of decode-only iterations in one loop (decode_run.py) change nothing: every configuration runs
the same, iteration for iteration and float for float, with the loop taken out (each iteration then goes
through the scheduler and a SimPy round trip as before). The loop also forms the decode-only iteration that
ends after another event and makes the events meanwhile itself (or leaves it to Replica._run to wait out);
taken out, the scheduler forms it and the clock makes them. The loop and its stretches are counted, and taken
out, through the run's Stepping (stepping.py), a parameter of simulate."""
from __future__ import annotations

import pytest

from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.decode_run import _span, decode_run
from whatif.simulator.stepping import EXACT, Stepping, no_decode_run, no_span
from whatif.simulator.workload import WorkloadSpec

SHAREGPT = WorkloadSpec(lengths="sharegpt", requests=300, seed=3, rate=20.0)
CONFIGS = {
    "chunked": SimConfig(Scenario(), SHAREGPT),
    "prefill-priority": SimConfig(Scenario(), SHAREGPT, SchedulerConfig(chunked_prefill=False)),
    "decode-priority": SimConfig(Scenario(), SHAREGPT, SchedulerConfig(chunked_prefill=False, priority="decode")),
    "static": SimConfig(Scenario(), SHAREGPT, SchedulerConfig(chunked_prefill=False, batching="static")),
    # (pp > 1 never takes the loop: its engines share the stages, simulator/pipeline_stages.py)
    "disaggregated": SimConfig(Scenario(hardware="dgx-h100"), SHAREGPT,
                               cluster=ClusterConfig(replicas=2, prefill_replicas=1)),
    "recompute": SimConfig(Scenario(memory_utilization=0.25), WorkloadSpec(lengths="sharegpt", requests=300, seed=3,
                                                                          rate=60.0)),
    "swap": SimConfig(Scenario(memory_utilization=0.25), WorkloadSpec(lengths="sharegpt", requests=300, seed=3,
                                                                     rate=60.0), SchedulerConfig(preemption="swap")),
    "recompute, prefill-priority": SimConfig(Scenario(memory_utilization=0.25), WorkloadSpec(
        lengths="sharegpt", requests=300, seed=3, rate=60.0), SchedulerConfig(chunked_prefill=False)),
    "max-batch": SimConfig(Scenario(), SHAREGPT, SchedulerConfig(max_batch=8)),
    "prefix-cache": SimConfig(Scenario(), WorkloadSpec(requests=300, seed=3, rate=20.0, prefix_groups=3,
                                                       prefix_tokens=300), SchedulerConfig(prefix_caching=True)),
    # the events during a decode step made by the run itself (clock.run_until_mine): other replicas' processes,
    # closed-loop clients sending as requests finish
    "two replicas": SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=300, seed=3, rate=40.0),
                              cluster=ClusterConfig(replicas=2)),
    "closed loop": SimConfig(Scenario(), WorkloadSpec(lengths="sharegpt", requests=300, seed=3, concurrency=32)),
    # light load, long outputs: stretches of hundreds of steps between events, taken as array updates (_span),
    # across price buckets and block phases, with a sequence joining mid-cycle; and the same tight on KV blocks
    "light load": SimConfig(Scenario(), WorkloadSpec(requests=40, seed=3, rate=0.3, prompt=3000, output=1500,
                                                     range_ratio=0.5)),
    "light load, few blocks": SimConfig(Scenario(memory_utilization=0.25), WorkloadSpec(
        requests=40, seed=3, rate=4.0, prompt=3000, output=1500, range_ratio=0.5)),
    "light load, two replicas": SimConfig(Scenario(), WorkloadSpec(requests=40, seed=3, rate=0.6, prompt=3000,
                                                                   output=1500, range_ratio=0.5),
                                          cluster=ClusterConfig(replicas=2)),
    # an engine whose CPU forms no step ahead (vLLM 0.6: no async scheduling): decode runs hold it too
    "not formed ahead": SimConfig(Scenario(kernel_engine="vllm-0.6"), SHAREGPT),
    "not formed ahead, light load": SimConfig(Scenario(kernel_engine="vllm-0.6"), WorkloadSpec(
        requests=40, seed=3, rate=0.3, prompt=3000, output=1500, range_ratio=0.5)),
}
SPANS = {"light load", "not formed ahead, light load", "light load, few blocks", "light load, two replicas"}


def run(cfg, stepping=EXACT):
    r = cluster.simulate(cfg, stepping=stepping)
    return ({k: list(v) for k, v in r.log.columns.items()},
            [(x.status, x.first_token_s, x.finish_s, x.preemptions, x.emitted.tolist()) for x in r.records])


@pytest.mark.parametrize("name", CONFIGS)
def test_decode_runs_change_nothing(name):
    cfg = CONFIGS[name]
    taken = []

    def counted(rep, engine):
        before = engine.step
        pending = decode_run(rep, engine)   # (a decode-only iteration left for the replica to wait out, or None)
        taken.append(engine.step - before)
        return pending
    spans = []

    def span(*args):
        out = _span(*args)
        spans.append(out[0])
        return out
    fast = run(cfg, Stepping(decode_run=counted, span=span))
    assert fast == run(cfg, Stepping(decode_run=no_decode_run))
    assert sum(taken) > 0   # the loop ran iterations
    if name in SPANS:   # and stretches of them as array updates (most of them at light load), which change nothing
        assert sum(spans) > (sum(taken) / 2 if name == "light load" else 0)
        assert fast == run(cfg, Stepping(span=no_span))


def test_a_bucket_span_is_every_context_of_that_bucket():
    """decode_run reprices only when the mean context leaves bucket_span: the span holds exactly the contexts
    that round to the same bucket (bucket never decreases with the context)."""
    from whatif.simulator.iteration_time import bucket, bucket_span
    buckets = [bucket(x) for x in range(1, 70000)]
    assert buckets == sorted(buckets)
    for x in list(range(1, 2000)) + list(range(2000, 65000, 97)):
        lo, hi = bucket_span(x)
        assert lo <= x <= hi
        assert bucket(lo) == bucket(hi) == bucket(x) != bucket(lo - 1) and bucket(hi + 1) != bucket(x)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_logged_iteration_is_one_price_lookup(name):
    """decode_run counts its memo hits as the steps it took less the steps it priced anew (its count starts at
    -step): lookups = logged iterations, with the run's loop and without it."""
    def lookups(cfg, stepping=EXACT):
        r = cluster.simulate(cfg, stepping=stepping)
        return r.lookup_stats["iteration_time_lookups"], len(r.log.columns["start_s"])
    looked, logged = lookups(CONFIGS[name])
    assert looked == logged
    assert lookups(CONFIGS[name], Stepping(decode_run=no_decode_run)) == (looked, logged)
