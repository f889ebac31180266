"""A run judged only by its requests (the re-check's capacity probes) counts its iterations without storing them
(simulate(keep_log=False)) and answers as the full run; KV transfer times are memoized and equal the unmemoized
price; the re-check's Judged carries the attainment the capacity search reads."""
from dataclasses import replace

from whatif.roofline.context import HostPath
from whatif.scenario import Scenario
from whatif.simulator.decode_run import _span
from whatif.simulator.capacity import max_rate
from whatif.simulator.certain_miss import Judged
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SimConfig
from whatif.simulator.stepping import Stepping
from whatif.simulator.workload import WorkloadSpec

SLO_ = SLO(ttft_s=0.5, tpot_s=0.03, attainment=0.9)
# few requests with long outputs: decode stretches (decode_run._span) run with and without stored rows
CFG = SimConfig(Scenario(), WorkloadSpec(requests=60, seed=3, prompt=1000, output=400, range_ratio=0.5, rate=2.0))


def test_an_unkept_log_counts_the_same_iterations_and_the_requests_are_the_same():
    spans = []

    def counted(*args):
        out = _span(*args)
        spans.append(out[0])
        return out
    stepping = Stepping(span=counted)   # (the run's stretches, counted: stepping.py)
    full, lean = simulate(CFG, stepping=stepping), simulate(CFG, keep_log=False, stepping=stepping)
    assert sum(k > 0 for k in spans) >= 4   # stretches ran in both
    assert len(lean.log) == len(full.log) > 0
    assert len(lean.log.columns["start_s"]) == 0   # nothing stored
    assert [(r.first_token_s, r.finish_s, r.emitted.tolist()) for r in lean.records] == \
        [(r.first_token_s, r.finish_s, r.emitted.tolist()) for r in full.records]
    assert lean.attainment(SLO_) == full.attainment(SLO_)


def test_a_capacity_search_on_judged_runs_answers_as_on_full_ones():
    def at(rate):
        return replace(CFG, workload=replace(CFG.workload, rate=rate))
    full = max_rate(lambda rate: simulate(at(rate)), SLO_, hi=8.0, rel_tol=0.1)
    lean = max_rate(lambda rate: Judged.of(simulate(at(rate), keep_log=False), SLO_), SLO_, hi=8.0,
                    rel_tol=0.1)
    assert lean.rate_rps == full.rate_rps > 0
    assert [(p.rate_rps, p.attainment, p.passed) for p in lean.probes] == \
        [(p.rate_rps, p.attainment, p.passed) for p in full.probes]


def test_kv_send_times_are_memoized_by_path_and_tokens():
    cfg = SimConfig(Scenario(hardware="dgx-h100"), WorkloadSpec(requests=20, seed=1, rate=5.0),
                    cluster=ClusterConfig(prefill_replicas=1))
    from whatif.simulator.cluster import _TIMES
    simulate(cfg)
    times = next(t for t in _TIMES.values() if t.send_memos)
    path = next(iter(times.send_memos))[0]
    slow = HostPath(path.name, path.bandwidth / 2, path.latency, bandwidth_d2h=path.bandwidth_d2h / 2)
    for tokens in (1, 513, 4096):
        got = times.send_time(tokens, path)
        times.send_memos.clear()
        assert times.send_time(tokens, path) == got   # priced afresh: the same seconds
        assert times.send_time(tokens, slow) > got    # another path: its own memo
        assert times.send_time(tokens, path) == got
