"""The frontier re-check runs its candidates layout by layout: a worker process is handed every candidate of a
replica setup and chunk, so the simulator's step prices of that layout (simulator/cluster.py's _TIMES) are worked
out once, not once in each worker; the answer is the one-process answer."""
from __future__ import annotations

from concurrent.futures import Future

import pytest

import whatif
from whatif.config_search import backends
from whatif.config_search import recheck as rc
from whatif.config_search.result import sampled_frontier

REQUESTS = 40


@pytest.fixture(scope="module")
def small():
    """Two chunks, both modes: six candidates in three layouts (two of them two candidates each)."""
    r = whatif.search("llama-3-8b", "h100-sxm", gpus=2, prompt=512, output=32, batches=[1, 8], ttft=0.5,
                      tpot=0.03, prefill_chunks=(256, 512))
    shown = sampled_frontier(r.frontier)
    return r, shown, rc.candidates(r.space, r.ranked, list(shown), 2)


def test_a_layout_group_is_one_replica_setup_and_chunk_the_costliest_first(small):
    r, _, todo = small
    groups = rc.layout_groups(r.space, todo, REQUESTS)
    assert sorted(i for g in groups for i in g) == list(range(len(todo)))
    assert any(len(g) > 1 for g in groups) and len(groups) > 1
    for g in groups:
        assert len({(todo[i].replica, todo[i].chunk) for i in g}) == 1
    keys = {(todo[g[0]].replica, todo[g[0]].chunk) for g in groups}
    assert len(keys) == len(groups)                # one group a layout
    costs = [sum(rc.run_cost(r.space, todo[i], REQUESTS) for i in g) for g in groups]
    assert costs == sorted(costs, reverse=True)
    # a 512-token prompt is 2 passes of chunk 256, 1 of chunk 512
    assert {rc.run_cost(r.space, c, REQUESTS) for c in todo if c.chunk == 256} == {2 * REQUESTS}
    assert {rc.run_cost(r.space, c, REQUESTS) for c in todo if c.chunk == 512} == {REQUESTS}


class _Inline:
    """A stand-in pool that runs each task at once, here, and records what it was handed."""

    def __init__(self, workers: int):
        self.workers, self.tasks = workers, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        self.tasks.append((fn, args))
        f = Future()
        f.set_result(fn(*args))
        return f


def test_the_pool_is_handed_whole_layouts_and_answers_as_one_process(small, monkeypatch):
    r, shown, todo = small
    one = rc.recheck(r.space, r.ranked, 2, REQUESTS, shown, jobs=1)
    pools = []
    monkeypatch.setattr(backends, "fork_pool", lambda workers: pools.append(_Inline(workers)) or pools[-1])
    two = rc.recheck(r.space, r.ranked, 2, REQUESTS, shown, jobs=2)
    assert two == one                                  # every figure, note and the order
    (pool,) = pools
    assert pool.workers == 2
    handed = [[c for c in args[1]] for fn, args in pool.tasks]
    assert all(fn is rc.recheck_group for fn, _ in pool.tasks)
    assert handed == [[todo[i] for i in g] for g in rc.layout_groups(r.space, todo, REQUESTS)]
    assert max(len(h) for h in handed) > 1             # (main handed out one candidate a task)


def test_one_layout_runs_in_this_process(small, monkeypatch):
    r, _, todo = small
    same = [c for c in todo if (c.replica, c.chunk) == (todo[0].replica, todo[0].chunk)]
    monkeypatch.setattr(backends, "fork_pool", lambda workers: pytest.fail("no pool for one layout"))
    rows = rc.recheck(r.space, same, 2, REQUESTS, (), jobs=2)
    assert [row["config"] for row in rows] and all((row["config"].replica, row["config"].chunk)
                                                  == (todo[0].replica, todo[0].chunk) for row in rows)
