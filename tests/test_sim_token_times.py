"""Token times stored by iteration (simulator/token_times.py) and what the simulator derives from them: a
decoding request holds a few runs of its engine's iteration ends, not a float per token; inter-token latency is
measured between chunks; runs and points read back as the per-token times they stand for."""
from __future__ import annotations

from array import array

import numpy as np
import pytest

from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.request import Request
from whatif.simulator.token_times import TokenTimes


def test_points_and_runs_read_back_as_per_token_times():
    ends = array("d", [1.0, 2.0, 3.0, 4.0, 5.0])
    t = TokenTimes([0.5])
    t.add_run(ends, 1, 4)            # tokens at 2, 3, 4
    t.add(6.0, 3)                    # a chunk of three tokens
    t.add_run(ends, 2, 2)            # an empty run adds nothing
    assert t.tolist() == [0.5, 2.0, 3.0, 4.0, 6.0, 6.0, 6.0]
    assert len(t) == 7 and t.first == 0.5 and t.last == 6.0
    assert [t.count_until(x) for x in (0.0, 0.5, 2.5, 4.0, 5.9, 6.0)] == [0, 1, 2, 4, 4, 7]
    assert t.chunk_times().tolist() == [0.5, 2.0, 3.0, 4.0, 6.0]
    assert np.allclose(t.chunk_gaps(), [1.5, 1.0, 1.0, 2.0])


def test_a_decoding_request_keeps_a_few_runs_not_a_time_per_token():
    reqs = [Request(i, 0.01 * i, 100 + 10 * i, 300) for i in range(20)]
    res = simulate(SimConfig(Scenario(), None, SchedulerConfig(), ClusterConfig(), SLO()), requests=reqs)
    for rec in res.records:
        assert len(rec.emitted) == rec.request.output == len(rec.token_times)
        if rec.preemptions == 0:
            assert len(rec.emitted.pieces) <= 3     # the first token, then the run(s) of decode iterations
        times = rec.token_times
        assert times[0] == rec.first_token_s and times[-1] == rec.finish_s
        assert np.allclose(rec.inter_token_s, np.diff(times))   # plain decoding: one token a chunk


def test_pooled_gaps_give_the_statistics_of_every_gap():
    from whatif.simulator.metrics import counted_stats, stats
    from whatif.simulator.token_times import pooled_gaps
    rng = np.random.default_rng(0)
    ends = array("d", np.cumsum(rng.uniform(0.001, 0.05, 400)).tolist())
    records = []
    for _ in range(60):
        t = TokenTimes()
        lo = int(rng.integers(0, 350))
        t.add(ends[lo] - 0.1)                              # a first token out of prefill
        hi = lo + int(rng.integers(1, 40))
        t.add_run(ends, lo, hi)
        if rng.random() < 0.3:                             # preempted, recomputed, decoding again
            t.add(ends[hi] + 0.2, int(rng.integers(1, 3)))
            t.add_run(ends, hi + 5, min(hi + 5 + int(rng.integers(0, 30)), 400))
        records.append(t)
    pooled = counted_stats(*pooled_gaps(records))
    direct = stats(np.concatenate([t.chunk_gaps() for t in records]))
    for key, value in direct.items():
        assert pooled[key] == pytest.approx(value, rel=1e-12), key
    assert counted_stats(*pooled_gaps([])) == stats([])
