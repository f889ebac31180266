"""The serving simulator end to end, on hand-made seeded requests: KV and request invariants, agreement with the
roofline estimate for a lone request, and the mechanisms each engine/cluster setting is there for (chunked
prefill, saturation, preemption, prefix caching, disaggregation, static/decode-priority batching, routers,
rejections, pipeline parallelism). Each test compares runs or checks a law, not a recorded number."""
from __future__ import annotations

from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from whatif.errors import WhatifError
from whatif.specs.hardware import load_component
from whatif.roofline.config import Parallelism
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.request import FINISHED, QUEUED, REJECTED, RUNNING, STATUSES, Request

MODEL = "llama-3-8b"
BASE = Scenario(model=MODEL, hardware="h100-sxm")
DEFAULT_ENGINE, ONE_REPLICA = SchedulerConfig(), ClusterConfig()


# ---------------------------------------------------------------- helpers

def run(requests, scenario: Scenario = BASE, engine: SchedulerConfig = DEFAULT_ENGINE,
        cluster: ClusterConfig = ONE_REPLICA, horizon_s: float | None = None):
    return simulate(SimConfig(scenario, None, engine, cluster, SLO(), horizon_s), requests=requests)


def make_requests(arrivals, prompts, outputs, **extra) -> list[Request]:
    """Requests with ids 0..n-1 in arrival order."""
    order = np.argsort(arrivals, kind="stable")
    return [Request(i, float(arrivals[j]), int(prompts[j]), int(outputs[j]), **extra) for i, j in enumerate(order)]


def poisson(rng, n: int, rate: float, prompt=(50, 300), output=(20, 200)) -> list[Request]:
    """`n` requests at `rate` per second, prompt and output lengths uniform in the given inclusive ranges."""
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    return make_requests(arrivals, rng.integers(prompt[0], prompt[1] + 1, n),
                         rng.integers(output[0], output[1] + 1, n))


def kv_blocks(scenario: Scenario, engine: SchedulerConfig = DEFAULT_ENGINE) -> int:
    return run([], scenario, engine).replicas[0].kv_blocks


@cache
def small_kv(blocks: int, engine: SchedulerConfig = DEFAULT_ENGINE, scenario: Scenario = BASE) -> Scenario:
    """`scenario` with memory_utilization lowered until its replica holds `blocks` KV blocks (or a few more)."""
    lo, hi = 0.01, scenario.utilization()   # lo: no KV room at all; hi: the full cache
    for _ in range(40):
        mid = (lo + hi) / 2
        try:
            n = kv_blocks(replace(scenario, memory_utilization=mid), engine)
        except WhatifError:   # no room for any KV cache
            n = 0
        if n < blocks:
            lo = mid
        else:
            hi = mid
        if blocks <= n <= blocks * 1.1:
            break
    sc = replace(scenario, memory_utilization=hi)
    assert blocks <= kv_blocks(sc, engine) <= blocks * 1.1 + 2
    return sc


def check_kv_invariant(res, all_done: bool = True) -> None:
    """Blocks in use never exceed a replica's capacity; none are held at the end when every request finished."""
    used = np.asarray(res.log.columns["kv_blocks_used"])
    replica = np.asarray(res.log.columns["replica"])
    for info in res.replicas:
        mine = used[replica == info.index]
        assert (mine >= 0).all() and (mine <= info.kv_blocks).all(), (info, mine.max())
        assert 0 <= info.kv_blocks_held_end <= info.kv_blocks
        if all_done:
            assert info.kv_blocks_held_end == 0, info


def check_conservation(res, requests, horizon_s: float | None = None) -> None:
    """Every request that arrived (all of them, or those due before the horizon) has exactly one status and
    the counts add up; token times are consistent."""
    arrived = [r.request for r in res.records]
    assert arrived == list(requests[:len(arrived)])
    assert all(q.arrival_s <= (horizon_s if horizon_s is not None else np.inf) for q in arrived)
    assert all(q.arrival_s >= horizon_s for q in requests[len(arrived):])
    counts = res.summary()["requests"]
    assert counts["arrived"] == len(arrived) == sum(counts[s] for s in STATUSES)
    for rec in res.records:
        q, times = rec.request, rec.token_times
        assert rec.status in STATUSES
        assert all(a <= b for a, b in zip(times, times[1:]))
        if times:
            assert times[0] == rec.first_token_s and times[0] >= q.arrival_s
            assert rec.first_scheduled_s is not None and q.arrival_s <= rec.first_scheduled_s <= times[0]
        if rec.status == FINISHED:
            assert len(times) == q.output and times[-1] == rec.finish_s
        else:
            assert rec.finish_s is None and len(times) < q.output
        if rec.status == REJECTED:
            assert rec.reason and not times and rec.first_scheduled_s is None
        else:
            assert rec.reason == ""
        if rec.status == RUNNING:
            assert rec.first_scheduled_s is not None


def statuses(res) -> set[str]:
    return {r.status for r in res.records}


def mean(values) -> float:
    return float(np.mean(list(values)))


# ---------------------------------------------------------------- 1, 2: KV and request invariants

@pytest.mark.parametrize("preemption", ["recompute", "swap"])
def test_kv_blocks_stay_within_capacity_and_are_freed_under_preemption(preemption):
    engine = SchedulerConfig(preemption=preemption)
    sc = small_kv(64, engine)
    reqs = poisson(np.random.default_rng(1), 40, rate=80.0)
    res = run(reqs, sc, engine)
    assert statuses(res) == {FINISHED}
    assert sum(r.preemptions for r in res.records) > 0      # the load did push past the KV memory
    assert max(res.log.columns["kv_blocks_used"]) > 0.8 * res.replicas[0].kv_blocks
    check_kv_invariant(res)
    check_conservation(res, reqs)


def test_requests_are_conserved_when_the_horizon_cuts_the_run_short():
    reqs = poisson(np.random.default_rng(2), 60, rate=40.0)
    full = run(reqs)
    assert statuses(full) == {FINISHED}
    check_conservation(full, reqs)
    # cut just after an arrival while the replica is busy: that request is still waiting for an iteration
    horizon = min(r.arrival_s for r in reqs if r.arrival_s > 0.4 * max(r.finish_s for r in full.records)) + 1e-9
    cut = run(reqs, horizon_s=horizon)
    check_conservation(cut, reqs, horizon)
    assert len(cut.records) < len(reqs)          # those due after the horizon never arrived
    check_kv_invariant(cut, all_done=False)
    counts = cut.summary()["requests"]
    assert counts[FINISHED] > 0 and counts[QUEUED] + counts[RUNNING] > 0
    assert cut.end_s == pytest.approx(horizon)
    assert all(t <= horizon for r in cut.records for t in r.token_times)
    # the sequences still running hold blocks at the end
    assert cut.replicas[0].kv_blocks_held_end > 0
    # some requests had arrived and were still waiting for their first iteration
    assert any(r.status == QUEUED and r.first_scheduled_s is None for r in cut.records)


# ---------------------------------------------------------------- 3, 4: agreement with the roofline estimate

@pytest.mark.parametrize("prompt, output, tp, budget", [
    (512, 64, 1, 2048),
    (2048, 16, 1, 2048),
    (1024, 32, 2, 2048),
    (1024, 16, 1, 256),    # chunked prefill: the budget is the chunk
    (2048, 8, 2, 512),
])
def test_a_lone_request_reproduces_the_estimate(prompt, output, tp, budget):
    sc = replace(BASE, parallel=Parallelism(tp=tp),
                 workload=Workload(batch=1, prompt=prompt, output=output, prefill_chunk=budget))
    est = sc.run(with_max_batch=False)
    res = run([Request(0, 0.0, prompt, output)], sc, SchedulerConfig(token_budget=budget))
    rec = res.records[0]
    assert rec.status == FINISHED and rec.queue_s == 0.0
    assert rec.ttft_s == pytest.approx(est.ttft_s, rel=0.01)
    assert rec.tpot_s == pytest.approx(est.tpot_s, rel=0.01)
    assert len(res.log) == -(-prompt // budget) + output - 1     # prefill chunks, then one step per token


def test_at_a_low_rate_every_ttft_is_the_lone_prefill_time():
    rng = np.random.default_rng(4)
    n = 12
    reqs = make_requests(np.arange(n) * 10.0, rng.integers(1, 3000, n), rng.integers(1, 40, n))
    res = run(reqs)
    assert statuses(res) == {FINISHED}
    for rec in res.records:
        alone = run([replace(rec.request, id=0, arrival_s=0.0)])
        assert rec.queue_s == 0.0
        # TTFT is the prompt's prefill iterations (one per token-budget chunk), nothing else
        chunks = -(-rec.request.prompt // SchedulerConfig().token_budget)
        assert rec.ttft_s == pytest.approx(sum(alone.log.columns["duration_s"][:chunks]), rel=1e-9)
        assert rec.ttft_s == pytest.approx(alone.records[0].ttft_s, rel=1e-9)


@pytest.mark.parametrize("prompt", [517, 1534])
def test_a_lone_prefill_of_any_length_matches_the_estimate(prompt):
    chunk = SchedulerConfig().token_budget
    sc = replace(BASE, workload=Workload(batch=1, prompt=prompt, output=1, prefill_chunk=chunk))
    rec = run([Request(0, 0.0, prompt, 1)], sc).records[0]
    assert rec.ttft_s == pytest.approx(sc.run(with_max_batch=False).ttft_s, rel=0.01)


# ---------------------------------------------------------------- 5: chunked prefill against prefill priority

def test_chunked_prefill_lowers_p99_inter_token_latency():
    rng = np.random.default_rng(5)
    decoders = make_requests(rng.uniform(0.0, 0.05, 24), np.full(24, 64), np.full(24, 300))
    longs = [Request(0, 0.3 + 0.15 * k, 4000, 4) for k in range(10)]
    merged = sorted([*decoders, *longs], key=lambda r: r.arrival_s)
    reqs = [replace(r, id=i) for i, r in enumerate(merged)]
    chunked = run(reqs, engine=SchedulerConfig(chunked_prefill=True, token_budget=512))
    whole = run(reqs, engine=SchedulerConfig(chunked_prefill=False, priority="prefill"))
    assert statuses(chunked) == statuses(whole) == {FINISHED}
    p99 = {name: r.summary()["latency"]["itl_s"]["p99"] for name, r in (("chunked", chunked), ("whole", whole))}
    assert p99["chunked"] < 0.5 * p99["whole"]
    # the mechanism: without chunking, some iteration prefills a whole long prompt; with it, none exceeds the budget
    assert max(whole.log.columns["prefill_tokens"]) >= 4000
    assert max(chunked.log.columns["prefill_tokens"]) <= 512


# ---------------------------------------------------------------- 6: saturation past capacity

def test_past_capacity_throughput_saturates_and_queueing_grows_with_the_run():
    engine = SchedulerConfig(max_batch=16)
    rng = np.random.default_rng(6)
    n = 400
    prompts, outputs = rng.integers(64, 257, n), rng.integers(32, 97, n)
    burst = run(make_requests(np.zeros(n), prompts, outputs), engine=engine)
    capacity = burst.summary()["throughput"]["finished_rps"]     # requests/s with the queue never empty

    def at(rate: float, count: int):
        gaps = np.random.default_rng(7).exponential(1 / rate, count)
        reqs = make_requests(np.cumsum(gaps), prompts[:count], outputs[:count])
        res = run(reqs, engine=engine)
        assert statuses(res) == {FINISHED}
        s = res.summary()
        return s["throughput"]["output_tok_s"], s["latency"]["queue_s"]["mean"]

    tok2, queue2_short = at(2 * capacity, 200)
    tok4, _ = at(4 * capacity, 200)
    _, queue2_long = at(2 * capacity, 400)
    assert tok4 == pytest.approx(tok2, rel=0.1)                 # throughput saturates
    assert 1.6 < queue2_long / queue2_short < 2.4                # queueing grows with the number of requests
    # below capacity the queue stays short whatever the run's length
    tok_low, queue_low_short = at(0.5 * capacity, 200)
    _, queue_low_long = at(0.5 * capacity, 400)
    assert tok_low < 0.75 * tok2
    assert queue_low_long < 0.1 * queue2_long and queue_low_short < 0.1 * queue2_short


# ---------------------------------------------------------------- 7: preemption

def test_preemption_by_recompute_and_by_swap():
    rng = np.random.default_rng(8)
    reqs = poisson(rng, 30, rate=100.0, prompt=(100, 300), output=(100, 300))
    prompt_tokens = sum(r.prompt for r in reqs)
    runs = {}
    for mode in ("recompute", "swap"):
        # whole-prompt prefills: every sequence a decode preempts has its prompt (and more) in the cache
        engine = SchedulerConfig(preemption=mode, chunked_prefill=False, priority="prefill")
        res = run(reqs, small_kv(48, engine), engine)
        assert statuses(res) == {FINISHED}
        assert sum(r.preemptions for r in res.records) == sum(res.log.columns["preempted"]) > 0
        check_kv_invariant(res)
        runs[mode] = res
    rec, swap = runs["recompute"], runs["swap"]
    # recompute drops the KV and prefills prompt + generated tokens again
    redone = sum(r.preemptions * r.request.prompt for r in rec.records)
    assert sum(rec.log.columns["prefill_tokens"]) >= prompt_tokens + redone
    assert sum(rec.log.columns["swap_s"]) == 0.0
    # swap keeps it in host memory: nothing is prefilled twice, and each swap-out stalls its iteration
    col = swap.log.columns
    assert sum(col["prefill_tokens"]) == prompt_tokens
    assert all(s > 0 for s, p in zip(col["swap_s"], col["preempted"]) if p)
    assert all(d >= s for d, s in zip(col["duration_s"], col["swap_s"]))
    assert sum(s > 0 for s, p in zip(col["swap_s"], col["preempted"]) if not p) > 0   # swap-ins


# ---------------------------------------------------------------- 8: prefix caching

def shared_prefix_requests(rng, n: int = 12, prefix: int = 1024) -> list[Request]:
    suffixes = rng.integers(16, 100, n)
    return [Request(i, 0.5 * i, prefix + int(s), 8, prefix_id="system", prefix_tokens=prefix, shared_tokens=prefix)
            for i, s in enumerate(suffixes)]


def test_prefix_caching_serves_the_shared_prefix_and_lowers_ttft():
    reqs = shared_prefix_requests(np.random.default_rng(9))
    cached = run(reqs, engine=SchedulerConfig(prefix_caching=True))
    plain = run(reqs, engine=SchedulerConfig(prefix_caching=False))
    assert statuses(cached) == statuses(plain) == {FINISHED}
    assert all(r.cached_tokens == 0 for r in plain.records)
    assert cached.records[0].cached_tokens == 0                    # nothing cached yet
    size = SchedulerConfig().block_size
    for rec in cached.records[1:]:
        q = rec.request
        assert 0 < rec.cached_tokens <= min(q.prompt - 1, q.prefix_tokens)
        assert rec.cached_tokens % size == 0                       # whole blocks only
        assert rec.cached_tokens == q.prefix_tokens // size * size
    assert mean(r.ttft_s for r in cached.records[1:]) < 0.5 * mean(r.ttft_s for r in plain.records[1:])
    check_kv_invariant(cached)


def test_a_cached_prefix_never_covers_the_whole_prompt():
    # the prompt is all prefix: the last token must still be computed to produce the first output token
    reqs = [Request(i, float(i), 256, 4, prefix_id="p", prefix_tokens=256, shared_tokens=256) for i in range(3)]
    res = run(reqs, engine=SchedulerConfig(prefix_caching=True))
    assert statuses(res) == {FINISHED}
    assert [r.cached_tokens for r in res.records] == [0, 240, 240]   # (256 - 1) // 16 whole blocks


def test_a_session_turn_hits_the_previous_turns_blocks():
    rng = np.random.default_rng(10)
    size = SchedulerConfig().block_size
    reqs, history = [], 0
    for turn in range(4):
        prompt, output = history + int(rng.integers(50, 200)), int(rng.integers(40, 120))
        reqs.append(Request(turn, 5.0 * turn, prompt, output, prefix_id="session", prefix_tokens=history,
                            shared_tokens=prompt + output))
        history = prompt + output
    res = run(reqs, engine=SchedulerConfig(prefix_caching=True))
    assert statuses(res) == {FINISHED}
    for prev, rec in zip(res.records, res.records[1:]):
        assert prev.finish_s < rec.request.arrival_s
        # the previous turn's prompt and its generated tokens (all but the last, never computed) are cached
        p = prev.request
        assert rec.cached_tokens == (p.prompt + p.output - 1) // size * size
        assert rec.cached_tokens > p.prompt
    check_kv_invariant(res)


# ---------------------------------------------------------------- 9: disaggregation

def test_disaggregated_prefill_and_decode_pools():
    dgx = replace(BASE, hardware="dgx-h100")
    prompt = 2000
    reqs = [Request(i, 1.0 * i, prompt, 3) for i in range(5)]     # far apart: nothing queues
    prefill = mean(r.ttft_s for r in run(reqs, dgx).records)     # a lone prompt's prefill on one replica
    gaps = {}
    for link in (None, "pcie-gen4-x16"):
        res = run(reqs, dgx, cluster=ClusterConfig(replicas=1, prefill_replicas=1, kv_link=link))
        assert statuses(res) == {FINISHED}
        roles = {info.index: info.role for info in res.replicas}
        assert all(roles[r.replica] == "decode" for r in res.records)
        check_kv_invariant(res)
        # the first token reaches the client with the KV from the decode pool: TTFT = prefill + KV transfer
        transfer = mean(r.ttft_s for r in res.records) - prefill
        link_profile = load_component(link or "nvlink-4", "link", "--kv-link")
        kv_bytes = prompt * res.replicas[0].kv_bytes_per_token
        assert transfer >= kv_bytes / link_profile.bandwidth_for("d2h")     # no faster than the link's peak
        gaps[link] = transfer
    assert gaps["pcie-gen4-x16"] > 2 * gaps[None]


# ---------------------------------------------------------------- 10: static batching, decode priority

def test_static_batching_keeps_finished_rows_as_padding():
    rng = np.random.default_rng(11)
    n = 12
    reqs = make_requests(np.zeros(n), rng.integers(50, 150, n), rng.integers(10, 120, n))   # one batch
    static = run(reqs, engine=SchedulerConfig(batching="static"))
    cont = run(reqs, engine=SchedulerConfig())
    assert statuses(static) == statuses(cont) == {FINISHED}
    check_kv_invariant(static)
    assert mean(r.tpot_s for r in static.records) >= mean(r.tpot_s for r in cont.records)
    decode_rows = lambda res: [d for d, p in zip(res.log.columns["decode_seqs"],   # noqa: E731
                                                 res.log.columns["prefill_seqs"]) if not p]
    assert set(decode_rows(static)) == {n}                          # every decode step carries the whole batch
    assert min(decode_rows(cont)) == 1                              # continuous batching lets finished ones go
    # KV for the whole output is reserved at admission and held until the padded batch drains
    col = static.log.columns
    longest = max(r.finish_s for r in static.records)
    held = {u for u, t, d in zip(col["kv_blocks_used"], col["start_s"], col["duration_s"]) if t + d < longest}
    assert held == {sum(-(-(q.prompt + q.output - 1) // SchedulerConfig().block_size) for q in reqs)}


def test_decode_priority_delays_new_prefills():
    reqs = poisson(np.random.default_rng(12), 40, rate=20.0, prompt=(100, 400), output=(50, 150))
    decode_first = run(reqs, engine=SchedulerConfig(chunked_prefill=False, priority="decode"))
    prefill_first = run(reqs, engine=SchedulerConfig(chunked_prefill=False, priority="prefill"))
    assert statuses(decode_first) == statuses(prefill_first) == {FINISHED}
    check_kv_invariant(decode_first)
    # new requests wait for the running batch to drain (TTFT) instead of stalling its decodes (TPOT)
    assert mean(r.ttft_s for r in decode_first.records) > 5 * mean(r.ttft_s for r in prefill_first.records)
    assert mean(r.tpot_s for r in decode_first.records) < mean(r.tpot_s for r in prefill_first.records)


def test_static_batching_on_a_disaggregated_cluster():
    reqs = [Request(0, 0.0, 100, 5), Request(1, 0.0, 100, 5)]
    res = run(reqs, replace(BASE, hardware="dgx-h100"), SchedulerConfig(batching="static"),
              ClusterConfig(replicas=1, prefill_replicas=1))
    assert statuses(res) == {FINISHED}
    check_conservation(res, reqs)
    check_kv_invariant(res)


# ---------------------------------------------------------------- 11: routers

def test_round_robin_alternates_and_least_outstanding_uses_every_replica():
    reqs = poisson(np.random.default_rng(13), 40, rate=20.0)
    rr = run(reqs, cluster=ClusterConfig(replicas=2, router="round-robin"))
    assert [r.replica for r in rr.records] == [i % 2 for i in range(len(reqs))]
    lo = run(reqs, cluster=ClusterConfig(replicas=2, router="least-outstanding"))
    for res in (rr, lo):
        assert statuses(res) == {FINISHED}
        check_kv_invariant(res)
    share = np.bincount([r.replica for r in lo.records], minlength=2) / len(reqs)
    assert share.min() >= 0.3


def test_prefix_aware_routing_keeps_a_prefix_on_one_replica():
    rng = np.random.default_rng(14)
    ids = ["a", "b", "c", "d"]
    reqs = [Request(i, 0.05 * i, 600 + int(rng.integers(10, 50)), 10, prefix_id=ids[int(rng.integers(4))],
                    prefix_tokens=512, shared_tokens=512) for i in range(40)]
    res = run(reqs, engine=SchedulerConfig(prefix_caching=True),
              cluster=ClusterConfig(replicas=2, router="prefix-aware"))
    assert statuses(res) == {FINISHED}
    where = {}
    for rec in res.records:
        where.setdefault(rec.request.prefix_id, set()).add(rec.replica)
    assert all(len(replicas) == 1 for replicas in where.values())
    assert set().union(*where.values()) == {0, 1}                   # the prefixes are spread over both
    # each prefix misses once (on its replica) and hits there afterwards
    seen = set()
    for rec in res.records:
        assert (rec.cached_tokens > 0) == (rec.request.prefix_id in seen)
        seen.add(rec.request.prefix_id)


# ---------------------------------------------------------------- 12: rejections

def test_requests_that_can_never_fit_are_rejected_with_a_reason():
    engine = SchedulerConfig()
    sc = small_kv(40, engine)        # about 640 tokens of KV
    window = 8192                    # llama-3-8b's max_position_embeddings
    reqs = [Request(0, 0.0, 100, 20), Request(1, 0.1, window - 10, 20), Request(2, 0.2, 1200, 10),
            Request(3, 0.3, 200, 30)]
    res = run(reqs, sc, engine)
    check_conservation(res, reqs)
    check_kv_invariant(res)
    by_id = {r.request.id: r for r in res.records}
    assert by_id[1].status == REJECTED and "context window" in by_id[1].reason and str(window) in by_id[1].reason
    assert by_id[2].status == REJECTED and "KV blocks" in by_id[2].reason
    assert by_id[0].status == by_id[3].status == FINISHED
    counts = res.summary()["requests"]
    assert counts[REJECTED] == 2 and counts[FINISHED] == 2
    assert sum(counts["rejected_reasons"].values()) == 2


# ---------------------------------------------------------------- 13: pipeline parallelism

def test_pipeline_parallel_replica():
    sc = replace(BASE, hardware="dgx-h100", parallel=Parallelism(tp=1, pp=2))
    reqs = poisson(np.random.default_rng(15), 40, rate=30.0)
    res = run(reqs, sc)
    assert statuses(res) == {FINISHED}
    check_kv_invariant(res)
    check_conservation(res, reqs)
    info = res.replicas[0]
    assert info.gpus == 2 and info.engines == 2
    for row in res.summary()["replicas"]:
        assert 0 < row["busy_fraction"] <= 1


def test_pipeline_virtual_engines_sharing_kv_do_not_deadlock():
    engine = SchedulerConfig(token_budget=256)
    sc = small_kv(94, engine, replace(BASE, hardware="dgx-h100", parallel=Parallelism(tp=1, pp=2)))   # ~1,500 tokens
    reqs = [Request(0, 0.0, 1000, 4), Request(1, 0.0, 1000, 4)]   # each fits alone, not both
    res = run(reqs, sc, engine)
    assert statuses(res) == {FINISHED}


# ---------------------------------------------------------------- 14: random small workloads

HYPO_KV_TOKENS = 800    # KV memory of about 800 tokens: the largest request (660 tokens) fits, a few together do not
ENGINES = {
    "chunked": dict(chunked_prefill=True),
    "prefill": dict(chunked_prefill=False, priority="prefill"),
    "decode": dict(chunked_prefill=False, priority="decode"),
    "static": dict(batching="static"),
}


@st.composite
def workloads(draw):
    n = draw(st.integers(5, 30))
    gaps = draw(st.lists(st.floats(0.0, 0.05), min_size=n, max_size=n))
    arrivals = np.cumsum(gaps)
    reqs = []
    for i in range(n):
        prompt, output = draw(st.integers(1, 600)), draw(st.integers(1, 60))
        pid = draw(st.sampled_from([None, "a", "b"]))
        prefix = draw(st.integers(0, prompt)) if pid else 0
        shared = draw(st.integers(0, prompt + output)) if pid else 0
        reqs.append(Request(i, float(arrivals[i]), prompt, output, pid, prefix, shared))
    return reqs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reqs=workloads(), policy=st.sampled_from(sorted(ENGINES)), block_size=st.integers(1, 32),
       preemption=st.sampled_from(["recompute", "swap"]), prefix_caching=st.booleans(),
       token_budget=st.sampled_from([64, 512, 2048]), cut=st.sampled_from([None, 0.3, 0.7]))
def test_random_workloads_keep_the_invariants(reqs, policy, block_size, preemption, prefix_caching, token_budget,
                                              cut):
    engine = SchedulerConfig(block_size=block_size, preemption=preemption, prefix_caching=prefix_caching,
                          token_budget=token_budget, **ENGINES[policy])
    sc = small_kv(-(-HYPO_KV_TOKENS // block_size), SchedulerConfig(block_size=block_size, token_budget=token_budget))
    res = run(reqs, sc, engine)
    check_conservation(res, reqs)
    assert statuses(res) == {FINISHED}
    check_kv_invariant(res)
    for rec in res.records:   # the cache serves whole blocks, never the prompt's last token
        assert rec.cached_tokens % block_size == 0 and 0 <= rec.cached_tokens <= rec.request.prompt - 1
        assert prefix_caching or rec.cached_tokens == 0
    if cut is not None:   # the same run stopped part way
        part = run(reqs, sc, engine, horizon_s=cut * res.end_s)
        check_conservation(part, reqs, cut * res.end_s)
        check_kv_invariant(part, all_done=False)


def test_a_cluster_larger_than_its_system_is_an_error_naming_both_numbers():
    from whatif.simulator.cluster import check_fits

    def fits(scenario, cluster):
        check_fits(SimConfig(scenario, None, DEFAULT_ENGINE, cluster))
    dgx = replace(BASE, hardware="dgx-h100", parallel=Parallelism(tp=4))
    with pytest.raises(WhatifError, match=r"--replicas 3 x 4 GPUs .* = 12 GPUs, more than the 8 GPUs of system"):
        fits(dgx, ClusterConfig(replicas=3))
    fits(dgx, ClusterConfig(replicas=2))          # 8 of 8 fits
    # disaggregated pools are deployments of whole systems each: only a replica must fit one
    fits(dgx, ClusterConfig(replicas=2, prefill_replicas=3, prefill_tp=2))
    with pytest.raises(WhatifError, match=r"--prefill-hardware: a prefill replica of 16 GPUs is more than the 8"):
        fits(dgx, ClusterConfig(replicas=1, prefill_replicas=1, prefill_tp=8, prefill_pp=2))
    fits(BASE, ClusterConfig(replicas=3))         # a bare GPU profile has the GPUs asked for


def test_a_lone_request_on_an_engine_version_reproduces_its_estimate():
    """trtllm-0.6 reads a GQA model's cache once per query head (roofline/engine_kernels.py): the
    simulator's priced parts must run the same kernels as the estimate."""
    sc = replace(BASE, kernel_engine="trtllm-0.6", workload=Workload(batch=1, prompt=1024, output=32))
    est = sc.run(with_max_batch=False)
    res = run([Request(0, 0.0, 1024, 32)], sc, SchedulerConfig())
    assert res.records[0].tpot_s == pytest.approx(est.tpot_s, rel=0.01)
    # where the cache dominates a step (not one short sequence, where the kernels' floors do), the re-read
    # cache is slower than the shared one
    big = replace(sc, workload=Workload(batch=32, prompt=4096, output=32))
    assert big.run(with_max_batch=False).tpot_s > replace(big, kernel_engine="trtllm").run(with_max_batch=False).tpot_s


def test_a_request_is_rejected_exactly_when_its_kv_outgrows_a_replica():
    """The KV check at arrival (Cluster.rejection): a prompt, or a prompt plus all but the last output token,
    needing more blocks than a replica holds above its watermark is rejected; one token less is served."""
    from whatif.scenario import Scenario
    from whatif.simulator import cluster
    from whatif.simulator.config import SimConfig
    from whatif.simulator.request import Request
    from whatif.simulator.workload import WorkloadSpec
    cfg = SimConfig(Scenario(memory_utilization=0.25, context_window=200_000),
                    WorkloadSpec(lengths="fixed", prompt=10, output=1, requests=1, rate=1.0))
    info = cluster.simulate(cfg).replicas[0]
    usable = (info.kv_blocks - int(cfg.scheduler.watermark * info.kv_blocks)) * info.block_size
    assert usable < 200_000
    requests = [Request(0, 0.0, usable, 1), Request(1, 1.0, usable + 1, 1), Request(2, 2.0, usable - 5, 6),
                Request(3, 3.0, usable - 5, 7)]
    records = cluster.simulate(cfg, requests=requests).records
    assert [r.status for r in records] == ["finished", "rejected", "finished", "rejected"]
    assert records[1].reason.startswith("needs more KV blocks") and records[3].reason == records[1].reason
