"""A closed-loop load (`--concurrency N`, simulator/closed_loop.py): N clients, each sending its next request
when its last one is answered. Checked on the schedule it produces, against a lone request, and on what it
refuses."""
import pytest

from whatif.errors import WhatifError
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.workload import WorkloadSpec

SC = Scenario(model="llama-3.1-8b", hardware="h100-sxm")


def run(clients: int, requests: int, lengths: str = "fixed", **cfg):
    spec = WorkloadSpec(requests=requests, prompt=1000, output=64, lengths=lengths, concurrency=clients, seed=3)
    return simulate(SimConfig(SC, spec, SchedulerConfig.for_engine(SC.engine_spec()), **cfg))


@pytest.mark.parametrize("clients, lengths", [(1, "fixed"), (3, "fixed"), (8, "sharegpt")])
def test_each_request_is_sent_when_a_client_is_answered(clients, lengths):
    res = run(clients, 40, lengths)
    recs = sorted(res.records, key=lambda r: r.request.id)
    assert all(r.finish_s is not None for r in recs)
    assert [r.request.sent_s for r in recs[:clients]] == [0.0] * clients
    finishes = sorted(r.finish_s for r in recs)
    for k, r in enumerate(recs[clients:]):
        assert r.request.sent_s == finishes[k]               # the k-th answer frees the client that sends it
        assert r.first_scheduled_s >= r.request.arrival_s - 1e-9
    # never more than `clients` requests between their send and their answer
    for r in recs:
        t = r.request.sent_s
        assert sum(q.request.sent_s <= t < q.finish_s for q in recs) <= clients


def test_the_front_end_takes_one_request_at_a_time():
    """Requests sent together reach the engine one front-end time apart (one tokenizer thread), and the client's
    TTFT counts from the send: the front end's queue and work, then the engine's TTFT."""
    res = run(4, 4)
    fe = res.frontend
    recs = sorted(res.records, key=lambda r: r.request.id)
    assert [r.request.arrival_s for r in recs] == pytest.approx([fe.seconds(1000) * (k + 1) for k in range(4)])
    for r in recs:
        assert r.served_ttft_s(fe) == pytest.approx(r.first_token_s - r.request.sent_s)
        assert r.served_ttft_s(fe) == pytest.approx(r.ttft_s + r.request.arrival_s - r.request.sent_s)
    assert res.summary()["latency"]["served_ttft_s"]["max"] == pytest.approx(max(r.served_ttft_s(fe) for r in recs))


def test_a_disaggregated_cluster_fronts_requests_on_each_prefill_workers_server():
    """Each prefill worker's server (or Dynamo's multi-threaded frontend) tokenizes its own requests: four requests
    sent together over two prefill workers reach the engines two at a time, one front-end time apart."""
    res = run(4, 4, cluster=ClusterConfig(replicas=1, prefill_replicas=2))
    fe = res.frontend
    arrivals = sorted(r.request.arrival_s for r in res.records)
    assert arrivals == pytest.approx([fe.seconds(1000)] * 2 + [2 * fe.seconds(1000)] * 2)


def test_one_client_sees_no_queue():
    """At concurrency 1 every request runs alone: its TTFT is a lone request's."""
    closed = run(1, 5)
    alone = simulate(SimConfig(SC, WorkloadSpec(requests=1, prompt=1000, output=64, seed=3),
                               SchedulerConfig.for_engine(SC.engine_spec())))
    lone = alone.records[0].ttft_s
    assert [r.ttft_s for r in closed.records] == pytest.approx([lone] * 5, rel=1e-9)


def test_more_clients_wait_longer_for_their_first_token():
    means = []
    for clients in (1, 16):
        recs = sorted(run(clients, clients * 5).records, key=lambda r: r.request.id)[clients:]
        means.append(sum(r.ttft_s for r in recs) / len(recs))
    assert means[1] > means[0]


def test_lengths_in_a_range_keep_clients_out_of_lockstep():
    """Fixed lengths keep a closed loop's clients finishing together (they start in one burst); lengths drawn in
    [0.8 L, L], as InferenceX's client draws them, spread the answers, so each prompt finds fewer others queued."""
    def ttft(ratio: float) -> float:
        spec = WorkloadSpec(requests=64, prompt=1000, output=64, concurrency=16, seed=3, range_ratio=ratio)
        recs = sorted(simulate(SimConfig(SC, spec, SchedulerConfig.for_engine(SC.engine_spec()))).records,
                      key=lambda r: r.request.id)[32:]
        return sum(r.ttft_s for r in recs) / len(recs)
    assert ttft(0.8) < 0.8 * ttft(1.0)


def test_rejected_requests_answer_at_once():
    """A request the engine can never serve is refused when it reaches the engine; its client sends the next one
    then."""
    spec = WorkloadSpec(requests=6, prompt=200_000, output=8, concurrency=2)
    res = simulate(SimConfig(SC, spec, SchedulerConfig.for_engine(SC.engine_spec())))
    recs = sorted(res.records, key=lambda r: r.request.id)
    assert all(r.status == "rejected" for r in recs)
    assert [r.request.sent_s for r in recs[2:]] == [r.request.arrival_s for r in recs[:-2]]


@pytest.mark.parametrize("spec, cfg, message", [
    (dict(duration_s=10.0), {}, "drop --duration"),
    (dict(turns=2), {}, "drop --turns"),
    ({}, dict(horizon_s=5.0), "drop --horizon"),
])
def test_what_a_closed_loop_refuses(spec, cfg, message):
    w = WorkloadSpec(concurrency=4, **({"requests": 20} if "duration_s" not in spec else {}), **spec)
    with pytest.raises(WhatifError, match=message):
        simulate(SimConfig(SC, w, SchedulerConfig.for_engine(SC.engine_spec()), **cfg))


@pytest.mark.parametrize("cluster", [ClusterConfig(replicas=2), ClusterConfig(replicas=1, prefill_replicas=1)])
def test_clients_drive_replicas_and_disaggregated_pools(cluster):
    """Several engines serve the loop: the clients send each next request when one is answered, through the
    routers (and a disaggregated hand-off), never more than N in flight."""
    clients = 4
    res = run(clients, 24, cluster=cluster)
    recs = sorted(res.records, key=lambda r: r.request.id)
    assert all(r.status == "finished" for r in recs)
    assert [r.request.sent_s for r in recs[:clients]] == [0.0] * clients   # (they reach the engine after the front end)
    finishes = sorted(r.finish_s for r in recs)
    assert sorted(r.request.sent_s for r in recs[clients:]) == pytest.approx(finishes[:len(recs) - clients])
    for r in recs:
        t = r.request.sent_s
        assert sum(q.request.sent_s <= t < q.finish_s for q in recs) <= clients


