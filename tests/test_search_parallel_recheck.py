"""The frontier re-check (`--simulate-top`) in worker processes gives the answer it gives in one process."""
from __future__ import annotations

import whatif
from whatif.config_search import recheck as rc


def small_search(**kw):
    return whatif.search("llama-3-8b", "h100-sxm", gpus=2, prompt=512, output=32, batches=[1, 8], ttft=0.5,
                         tpot=0.03, **kw)


def test_recheck_in_two_processes_equals_one():
    r = small_search()
    from whatif.config_search.result import sampled_frontier
    shown = sampled_frontier(r.frontier)
    one = rc.recheck(r.space, r.ranked, 1, 40, shown, jobs=1)
    two = rc.recheck(r.space, r.ranked, 1, 40, shown, jobs=2)
    assert len(one) >= 3                 # several candidates: the pool really splits them
    assert rc._workers(2, len(one)) == 2
    assert two == one                    # every figure, note and the order


def test_search_passes_jobs_to_the_recheck(monkeypatch):
    seen = []
    monkeypatch.setattr(rc, "_in_pool", lambda space, todo, requests, jobs: seen.append(jobs) or
                        [rc.recheck_one(space, c, requests) for c in todo])
    r = small_search(simulate_top=1, sim_requests=20, jobs=2)
    assert seen == [2] and r.rechecked
