"""The search proposes only deployments `simulate` runs, and its answer agrees with the simulator: every
configuration it emits runs in the simulator as priced (the prefill pool keeps the decode pool's EP and attention
DP, as the simulator's cluster does), a budget above what a system holds is capped with a note, the re-check's
best is in the printed frontier, and a goodput every run passed is marked as a lower bound."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

import whatif
from whatif.config_search import recheck as rc
from whatif.config_search.configs import MISSES_SLO, Config
from whatif.config_search.pareto import frontier, ranked
from whatif.config_search.result import SearchResult
from whatif.config_search.space import ReplicaSetup, SearchSpace, SLOTargets
from whatif.simulator.cluster import check_fits, simulate
from whatif.simulator.config import SLO


def _shapes(result) -> list[Config]:
    """One feasible configuration per (mode, replica setups, replica counts): what a simulation distinguishes."""
    seen: dict = {}
    for c in result.configs:
        if c.feasible:
            seen.setdefault((c.mode, c.replica, c.prefill, c.replicas, c.prefill_replicas), c)
    return list(seen.values())


def _runs_in_simulate(result, requests: int = 2) -> None:
    for c in _shapes(result):
        cfg = rc.sim_config(result.space, c, requests)
        check_fits(cfg)            # what `whatif simulate` checks before it runs
        sim = simulate(cfg)
        assert len(sim.finished()) == requests, c.label()


def test_every_emitted_moe_configuration_runs_in_simulate():
    r = whatif.search("mixtral-8x7b", "dgx-h100", gpus=8, tp=(2, 4), pp=(1,), batches=(1, 16), ttft=2.0, tpot=0.1)
    disagg = [c for c in r.configs if c.mode == "disaggregated"]
    assert disagg and any(c.replica.dp_attention for c in disagg)
    # each pool its own layout: prefill pools not taking the decode pool's EP / attention-DP are enumerated too
    assert any((c.prefill.ep, c.prefill.dp_attention) != (c.replica.ep, c.replica.dp_attention) for c in disagg)
    _runs_in_simulate(r)
    for c in disagg:    # and simulated as priced: the prefill pool's own layout
        par = rc.sim_config(r.space, c, 2).cluster.prefill_parallel(c.replica)
        assert (par.tp, par.ep, par.moe_tp, par.attention_dp) == \
            (c.prefill.tp, c.prefill.ep, c.prefill.moe_tp, c.prefill.attention_dp)
    # attention-DP ranks fewer than the group's GPUs (tp4 ep4 over 2 ranks), in either pool
    assert any(c.prefill.attention_dp == 2 for c in disagg) and any(c.replica.attention_dp == 2 for c in disagg)


@pytest.mark.slow
def test_every_emitted_configuration_runs_in_simulate_full_spaces():
    for model, hw, gpus, kw in (("mixtral-8x7b", "dgx-h100", 8, {}),
                                ("deepseek-v3", "hgx-h200", 16, {"weight_dtypes": ("fp8",)})):
        r = whatif.search(model, hw, gpus=gpus, batches=(1, 64), ttft=2.0, tpot=0.05, **kw)
        assert r.configs and max(c.gpus for c in r.configs) <= 8
        _runs_in_simulate(r)


def test_budget_is_capped_at_what_a_system_holds():
    one_node = whatif.search("llama-3.2-1b", "hgx-h200", gpus=16, tp=(4, 8), pp=(1,), batches=(8,), tpot=0.1)
    assert max(c.gpus for c in one_node.configs) == 8
    note = [x for x in one_node.text().splitlines() if x.startswith("note: --gpus 16")]
    assert len(note) == 1 and "holds 8 GPUs" in note[0] and "multi-node" in note[0]
    assert one_node.to_dict()["notes"] == note
    two_nodes = whatif.search("llama-3.2-1b", "2x-dgx-h100-ib", gpus=16, tp=(4, 8), pp=(1,), batches=(8,),
                              tpot=0.1)
    assert max(c.gpus for c in two_nodes.configs) == 16 and "note:" not in two_nodes.text()
    _runs_in_simulate(two_nodes)
    bare = whatif.search("llama-3.2-1b", "h200-sxm", gpus=16, tp=(8,), pp=(1,), batches=(8,), tpot=0.1)
    assert max(c.gpus for c in bare.configs) == 16       # a bare GPU: as many as asked for


class _Run:
    """A stand-in simulation: every request attains the SLO below `limit` req/s, none above."""

    def __init__(self, rate: float, limit: float):
        self.ok = rate <= limit

    def attainment(self, slo):
        return 1.0 if self.ok else 0.0

    def goodput_rps(self, slo):
        return None

    def latency(self):
        return {"ttft_s": {"p90": 0.1}, "tpot_s": {"p90": 0.01}}

    def overloaded(self):     # capacity.probe's verdicts on a run that meets the SLO: a sustained one here
        return False

    def long_enough(self):
        return True


def test_goodput_raises_the_top_and_marks_a_lower_bound():
    slo, calls = SLO(ttft_s=1.0), []

    def run(limit):
        return lambda rate: calls.append(rate) or _Run(rate, limit)

    res, runs, capped = rc.goodput(run(3.0), slo, predicted_rps=1.0)     # the top, 1.25, passes: raised
    assert not capped and 3.0 * (1 - rc.REL_TOL) <= res.rate_rps <= 3.0
    assert runs == len(set(calls)) == len(calls)                          # a rate is simulated once
    res, runs, capped = rc.goodput(run(math.inf), slo, predicted_rps=1.0)
    assert capped and res.rate_rps == rc.HEADROOM * 2 ** rc.MAX_RAISES and runs == rc.MAX_RAISES + 1
    res, _, capped = rc.goodput(run(0.5), slo, predicted_rps=1.0)
    assert not capped and 0.5 * (1 - rc.REL_TOL) <= res.rate_rps <= 0.5


def test_runs_fill_the_deployment():
    c = Config("aggregated", "dgx-h100", ReplicaSetup("dgx-h100", 1, 1, 1, "bf16", "bf16"), 64, 8, 8)
    assert rc.run_requests(c, None) == rc.FILLS * 512 and rc.short_run_note(c, rc.FILLS * 512) == ""
    assert rc.run_requests(c, 100) == 100 and "optimistic" in rc.short_run_note(c, 100)


def _config(mode, tp, batch, per_gpu, per_user, gpus=8):
    e = ReplicaSetup("dgx-h100", tp, 1, 1, "bf16", "bf16")
    return Config(mode, "dgx-h100", e, batch, gpus // tp, gpus, ttft_s=0.1, tpot_s=1 / per_user, e2e_s=10.0,
                  request_rate=per_gpu * gpus / 1000, tok_s=per_gpu * gpus, tok_s_per_gpu=per_gpu,
                  tok_s_per_user=per_user, prefill=e if mode == "disaggregated" else None,
                  prefill_replicas=1 if mode == "disaggregated" else 0)


def test_best_of_each_mode_and_the_frontier_are_rechecked_and_the_best_is_printed_in_the_frontier():
    space = SearchSpace("llama-3.1-8b", ("dgx-h100",), 8, slo=SLOTargets(tpot_s=0.1))
    disagg = _config("disaggregated", 2, 128, 2700, 56)
    agg_off = _config("aggregated", 2, 128, 2550, 40)           # dominated by disagg in the steady-state model
    fast = _config("aggregated", 8, 1, 44, 350)
    configs = [disagg, agg_off, fast]
    good = ranked(configs)
    front = frontier(configs)
    assert agg_off not in front
    picked = rc.candidates(space, good, front, top=1)
    assert picked == [agg_off, disagg, fast]                   # the best of each mode, then the frontier
    assert rc.candidates(space, good, front, top=2) == [agg_off, fast, disagg]
    result = SearchResult(space, configs, front, good)
    sims = {id(disagg): 2545.0, id(agg_off): 2690.0, id(fast): 5.6}
    result.rechecked = sorted(({"config": c, "predicted_req_s": c.request_rate, "goodput_req_s": sims[id(c)] * 8 / 1000,
                                "goodput_per_gpu_tok_s": sims[id(c)], "goodput_tok_s": sims[id(c)] * 8,
                                "capped": c is fast, "runs": 6, "note": "", "caveat": ""} for c in picked),
                              key=rc.recheck_key)
    assert result.best is agg_off
    miss = replace(_config("aggregated", 8, 256, 413, 13), status=MISSES_SLO, reason="TPOT 77 ms > 50 ms")
    result.rechecked.insert(0, {**result.rechecked[0], "config": miss, "goodput_per_gpu_tok_s": 3000.0})
    assert result.best is agg_off       # a frontier row missing the SLOs is re-checked to be shown, not proposed
    text = result.text()
    starred = [x for x in text.splitlines() if x.startswith("*")]
    assert len(starred) == 1 and "*agg" in starred[0] and "(off the frontier)" in starred[0]
    assert "2,690" in starred[0] and "* = best" in text
    assert ">= 5.6" in text and "give --slo-ttft" in text        # the capped goodput, marked and why
    assert "simulated goodput 21.5 req/s = 2,690 tok/s/GPU" in text
    assert result.to_dict()["best_by"] == "simulator"
    result.rechecked = [{**r, "goodput_req_s": 0.0, "goodput_per_gpu_tok_s": 0.0, "goodput_tok_s": 0.0}
                        for r in result.rechecked]
    assert result.best is None and "none of the 4 configurations re-checked" in result.text()


def test_heterogeneous_pools_pair_two_system_types_and_run_in_simulate():
    """A pool of two GPU types: a prefill pool on one and a decode pool on the other (heterogeneous P/D), each
    within what its own system holds and both within the budget, the KV sent over the network between them, and
    simulated so (--prefill-hardware)."""
    from whatif.config_search.configs import pool_pairs
    space = SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100", "dgx-b200"), gpu_budget=12)
    a, b = ReplicaSetup("dgx-h100", 4, 1, 1, "bf16", "bf16"), ReplicaSetup("dgx-b200", 4, 1, 1, "bf16", "bf16")
    assert pool_pairs(space, a, b) == [(1, 1), (1, 2), (2, 1)]      # 8 GPUs a system, 12 in all
    assert pool_pairs(space, a, replace(a, tp=2)) == [(1, 1), (1, 2)]   # one system type: within its 8 GPUs
    r = whatif.search("llama-3.1-8b", ["h100-sxm", "b200"], gpus=4, tp=(1, 2), pp=(1,), batches=(8,),
                      modes=("disaggregated",), prompt=2000, output=200)
    het = [c for c in r.configs if c.prefill.hardware != c.hardware]
    assert het and all(f"] on {c.prefill.hardware} + " in c.label() for c in het)
    c = het[0]
    assert c.row()["prefill_hardware"] == c.prefill.hardware
    cfg = rc.sim_config(r.space, c, 2)
    assert (cfg.cluster.prefill_hardware, cfg.cluster.kv_link) == (c.prefill.hardware, "rdma-400g")
    check_fits(cfg)
    assert len(simulate(cfg).finished()) == 2
