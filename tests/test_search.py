"""`whatif.search`: the best configuration matches a brute-force loop over `whatif.estimate`, no configuration
exceeds the GPU budget, the frontier is exactly the non-dominated set, and pruning drops only what cannot fit."""
from __future__ import annotations

import math

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.config_search.configs import DOES_NOT_FIT, INVALID, OK, Config, pairs_within
from whatif.config_search.pareto import frontier
from whatif.config_search.space import ReplicaSetup

MODEL, HARDWARE = "llama-3.1-8b", "dgx-h100"
PROMPT, OUTPUT = 8000, 200
TPS, BATCHES, BUDGET = (1, 2, 4), (1, 8, 64, 512), 4
TTFT, TPOT = 0.4, 0.015


@pytest.fixture(scope="module")
def small():
    return whatif.search(MODEL, HARDWARE, gpus=BUDGET, prompt=PROMPT, output=OUTPUT, ttft=TTFT, tpot=TPOT,
                         tp=TPS, pp=(1,), batches=BATCHES, modes=("aggregated",))


def brute_force_best():
    """Every (tp, batch) through whatif.estimate, scored as the search's aggregated model says (configs.py)."""
    from whatif.config_search.queueing import bulk_ttft_quantile_s, max_rate_under, wait_quantile_s
    best = None
    for tp in TPS:
        one = whatif.estimate(MODEL, HARDWARE, tp=tp, batch=1, prompt=PROMPT, output=OUTPUT, with_max_batch=False)
        for b in BATCHES:
            est = whatif.estimate(MODEL, HARDWARE, tp=tp, batch=b, prompt=PROMPT, output=OUTPUT,
                                  with_max_batch=False)
            if not est.fits or b > est.max_batch:     # memory, or the engine's max_num_seqs
                continue
            # the cycle under Poisson arrivals (poisson_stall.py): its decode steps and B passes of one 8,000-token
            # prompt each (one a pass of the 8,192-token budget), each carrying a decode step (vLLM's mixed steps)
            e2e = est.e2e_s - est.ttft_s + b * max(one.ttft_s - est.tpot_s, 0.0)
            tpot = (e2e - one.ttft_s) / (OUTPUT - 1)
            if one.ttft_s > TTFT or tpot > TPOT:
                continue
            # under Poisson arrivals within the TTFT target (queueing.py): the prefill queue (a pass carries a decode
            # step) plus the wait for one of the replica's B slots, each held e2e(B)
            def quantile(rate, est=est, b=b, pass_s=one.ttft_s + est.tpot_s, e2e=e2e):
                return bulk_ttft_quantile_s(rate, pass_s, pass_s, 1, est.tpot_s) + wait_quantile_s(rate, e2e, b)
            rate = max_rate_under(quantile, TTFT, b / e2e)
            replicas = BUDGET // tp
            score = (rate * OUTPUT / tp, replicas * rate * OUTPUT)
            if best is None or score > best[0]:
                best = (score, tp, b, replicas)
    return best


def test_search_finds_the_brute_force_best(small):
    score, tp, batch, replicas = brute_force_best()
    best = small.best
    assert (best.replica.tp, best.batch, best.replicas) == (tp, batch, replicas)
    assert best.tok_s_per_gpu == pytest.approx(score[0], rel=1e-12)
    assert best.tok_s == pytest.approx(score[1], rel=1e-12)


def test_pruned_batches_are_exactly_those_that_do_not_fit(small):
    """A batch the search skips (above the max batch) does not fit when estimated; one it keeps does."""
    for c in small.configs:
        if c.replicas > 1:
            continue
        est = whatif.estimate(MODEL, HARDWARE, tp=c.replica.tp, batch=c.batch, prompt=PROMPT, output=OUTPUT,
                              with_max_batch=False)
        assert (c.batch <= est.max_batch) == c.feasible, c.label()
        if c.status != INVALID:      # above the engine's max_num_seqs: invalid whether or not memory holds it
            assert est.fits == (c.status != DOES_NOT_FIT), c.label()
    assert any(c.status == DOES_NOT_FIT for c in small.configs)   # the space reaches past the max batch


@pytest.mark.parametrize("budget", [3, 5, 8])
def test_no_configuration_needs_more_gpus_than_the_budget(budget):
    r = whatif.search("llama-3.1-70b", HARDWARE, gpus=budget, prompt=PROMPT, output=OUTPUT, ttft=1.0, tpot=0.05,
                      batches=(1, 16, 128))
    feasible = [c for c in r.configs if c.feasible]
    assert feasible
    for c in feasible:
        assert c.gpus <= budget
        pre = c.prefill.gpus * c.prefill_replicas if c.prefill else 0
        assert c.gpus == pre + c.replicas * c.replica.gpus
        assert c.replica.gpus <= 8           # a replica inside one node
    assert r.best is None or r.best.gpus <= budget


def test_pairs_within_the_budget():
    assert pairs_within(5, 2, 1) == [(1, 1), (1, 2), (1, 3), (2, 1)]
    assert pairs_within(1, 1, 1) == []


def _config(user: float, per_gpu: float, tok_s: float = 1.0) -> Config:
    key = ReplicaSetup(HARDWARE, 1, 1, 1, "bf16", "bf16")
    return Config("aggregated", HARDWARE, key, 1, 1, 1, tok_s=tok_s, tok_s_per_gpu=per_gpu, tok_s_per_user=user)


def test_frontier_is_the_non_dominated_set():
    pts = [(u, g) for u in (1.0, 2.0, 3.0, 5.0) for g in (1.0, 4.0, 2.0)] + [(2.5, 3.5), (4.0, 1.5), (0.5, 10.0)]
    configs = [_config(u, g) for u, g in pts]
    got = {(c.tok_s_per_user, c.tok_s_per_gpu) for c in frontier(configs)}
    want = {p for p in pts if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q in pts)}
    assert got == want


def test_frontier_of_a_search_is_non_dominated(small):
    feasible = [c for c in small.configs if c.feasible]
    front = small.frontier
    assert front
    for c in front:
        assert not any(o.tok_s_per_user >= c.tok_s_per_user and o.tok_s_per_gpu >= c.tok_s_per_gpu and
                       (o.tok_s_per_user, o.tok_s_per_gpu) != (c.tok_s_per_user, c.tok_s_per_gpu) for o in feasible)
    for c in feasible:   # every feasible configuration is matched or beaten by one on the frontier
        assert any(f.tok_s_per_user >= c.tok_s_per_user and f.tok_s_per_gpu >= c.tok_s_per_gpu for f in front)


def test_rejections_say_why(small):
    reasons = small.reasons()
    assert reasons and all(n > 0 for _, n, _ in reasons)
    miss = [c for c in small.configs if c.status == "misses SLO"]
    assert miss and all(("TTFT" in c.reason) or ("TPOT" in c.reason) for c in miss)
    assert all(c.status == OK for c in small.ranked)


def test_disaggregated_figures():
    """xPyD: TTFT includes the KV transfer; the cluster serves the slower pool's rate."""
    r = whatif.search("llama-3.1-70b", HARDWARE, gpus=8, prompt=4000, output=1000, tp=(2, 4), pp=(1,),
                      batches=(16, 64), modes=("disaggregated",))
    cs = [c for c in r.configs if c.feasible]
    assert cs and all(c.mode == "disaggregated" for c in cs)
    by_x = {}
    for c in cs:
        key = (c.prefill, c.replica, c.batch, c.replicas)
        by_x.setdefault(key, []).append(c)
    for group in by_x.values():   # more prefill replicas never serve less
        group.sort(key=lambda c: c.prefill_replicas)
        assert all(a.tok_s <= b.tok_s for a, b in zip(group, group[1:]))
    for c in cs:
        assert c.tok_s == pytest.approx(c.request_rate * 1000)
        assert c.e2e_s == pytest.approx(c.ttft_s + 999 * c.tpot_s)
        assert math.isclose(c.tok_s_per_user, 1 / c.tpot_s)


def test_moe_layouts_include_expert_parallel():
    r = whatif.search("mixtral-8x7b", HARDWARE, gpus=4, prompt=1000, output=100, tp=(2,), pp=(1,), batches=(8,),
                      modes=("aggregated",))
    assert {c.replica.ep for c in r.configs} == {1, 2}


def test_bad_input_is_one_line_error():
    with pytest.raises(WhatifError, match="--gpus"):
        whatif.search(MODEL, HARDWARE, gpus=0)
    with pytest.raises(WhatifError, match="--modes"):
        whatif.search(MODEL, HARDWARE, gpus=2, modes=("both",))
    with pytest.raises(WhatifError, match="--weight-dtype"):
        whatif.search(MODEL, HARDWARE, gpus=2, weight_dtypes=("bf17",))
    with pytest.raises(WhatifError, match="kivvi"):
        whatif.search(MODEL, HARDWARE, gpus=2, techniques=["kivvi"])
    with pytest.raises(WhatifError, match="--backend"):
        whatif.search(MODEL, HARDWARE, gpus=2, tp=(1,), batches=(1,), backend="spark")
