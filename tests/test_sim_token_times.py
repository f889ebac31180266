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


def _gather_one_by_one(emissions):
    """gather()'s answer the way it was worked out before session 67 (one record at a time): each engine's common
    pieces, in the order records first name the engine, then every other record's gaps loose."""
    n = len(emissions)
    firsts, lasts = np.full(n, np.nan), np.full(n, np.nan)
    engines, loose = {}, []
    rest = []
    for i, t in enumerate(emissions):
        p = t.pieces
        if len(p) == 2 and len(p[0]) == 2 and len(p[1]) == 3 and p[0][1] > 0:
            engines.setdefault(id(p[1][0]), [p[1][0], [], []])[1].append((i, p[0][0], p[1][1], p[1][2]))
        else:
            rest.append(i)
    for i in rest:
        t = emissions[i]
        if t.first is not None:
            firsts[i], lasts[i] = t.first, t.last
        prev = None
        for p in t.pieces:   # gaps between pieces loose; runs' own gaps counted on their engine
            if len(p) == 2 and p[1] == 0:
                continue
            start, stop = (p[0], p[0]) if len(p) == 2 else (p[0][p[1]], p[0][p[2] - 1])
            if len(p) == 3 and p[2] - p[1] > 1:
                engines.setdefault(id(p[0]), [p[0], [], []])[2].append((p[1], p[2]))
            if prev is not None:
                loose.append(start - prev)
            prev = stop
    values, weights = [np.asarray(loose, dtype=float)], [np.ones(len(loose))]
    for ends, common, runs in engines.values():
        e = np.array(ends, dtype=float)
        runs = list(runs)
        for i, t0, lo, hi in common:
            firsts[i], lasts[i] = t0, e[hi - 1]
            runs.append((lo, hi))
        values.append(np.array([e[lo] - t0 for _, t0, lo, _ in common]))
        weights.append(np.ones(len(common)))
        per_gap = np.zeros(max(len(e) - 1, 0))
        for lo, hi in runs:
            per_gap[lo:hi - 1] += 1
        values.append(np.diff(e))
        weights.append(per_gap)
    counts = np.array([t.count for t in emissions], dtype=np.int64)
    return firsts, lasts, counts, np.concatenate(values), np.concatenate(weights)


def test_gather_reads_common_pieces_as_columns_with_the_same_bits_and_order():
    """gather() takes its common records (a first token, then one run) column by column (session 67): the same
    arrays, float for float and in the same order, as one record at a time, with two engines, records of other
    shapes between them (speculative chunks, a preemption's two runs, no tokens, a zero-token point) and ends the
    records name in an order other than their engines' creation."""
    from whatif.simulator.token_times import gather
    a, b = [0.5, 1.0, 1.25, 2.0, 2.5, 3.5], array("d", [0.75, 1.5, 2.25, 3.0])
    shapes = []
    for i in range(40):
        t = TokenTimes()
        kind = i % 7
        if kind in (0, 1, 2):   # common: first token, one run on engine b (named first), then a
            t.add(0.1 * i + 0.01)
            t.add_run(b if kind == 0 else a, i % 2, 2 + i % 3)
        elif kind == 3:   # speculative chunks
            t.add(0.2, 1)
            t.add(0.9, 3)
        elif kind == 4:   # preempted: two runs
            t.add(0.3)
            t.add_run(a, 0, 2)
            t.add_run(a, 3, 6)
        elif kind == 5:   # a zero-token point first: not common
            t.add(0.4, 0)
            t.add_run(b, 1, 4)
        shapes.append(t)   # (kind 6: no tokens at all)
    got, want = gather(shapes), _gather_one_by_one(shapes)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w, equal_nan=True)
    assert all(len(x) == 0 for x in gather([])[:3])
