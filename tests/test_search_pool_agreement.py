"""Search and simulate price a disaggregated configuration's pools alike (issue 37: "search and simulation can give
opposite answers"): the re-check launches the batch the search priced (an engine's limits read per attention-DP rank
or per group by one function, roofline/engines.py), and the search's prefill pool step is the simulator's."""
from __future__ import annotations

import pytest

from whatif.config_search.configs import disaggregated
from whatif.config_search.evaluate import (PREFILL_PROMPTS_PER_RANK, StepPricers, evaluate_replica, prefill_pool_rps,
                                          replica_scenario)
from whatif.config_search.recheck import sim_config
from whatif.config_search.space import ReplicaSetup, SearchSpace, SLOTargets
from whatif.roofline.config import Parallelism
from whatif.roofline.engines import engine_limit_for_group, rank_limit
from whatif.roofline.estimate import Workload, batch_times, memory_fit
from whatif.scenario import Scenario
from whatif.simulator.cluster import _iteration_times
from whatif.simulator.pools import prefill_scenario
from whatif.simulator.prefill_send_slots import SendSlots, steady_prompts_per_step
from whatif.simulator.rank_group import rank_scheduler
from whatif.specs.engines import load_engine

SPACE = SearchSpace(model="mixtral-8x7b", hardware=("dgx-h100",), gpu_budget=8, prompt=2000, output=64,
                    modes=("disaggregated",), batches=(16,), slo=SLOTargets(ttft_s=2.0, tpot_s=0.1))
DP4 = ReplicaSetup("dgx-h100", tp=4, pp=1, ep=4, weight="bf16", kv="bf16", attention_dp=4)


def _one_by_one():
    profile, = evaluate_replica(SPACE, DP4)
    c = next(c for c in disaggregated(SPACE, profile, profile) if (c.prefill_replicas, c.replicas) == (1, 1))
    return profile, c, sim_config(SPACE, c, 10)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
@pytest.mark.parametrize("group,dp", [(16, 4), (1, 4), (6, 4), (8, 1), (256, 8)])
def test_the_engine_limit_for_a_group_runs_that_group_on_the_ranks(engine, group, dp):
    spec = load_engine(engine)
    per_rank = rank_limit(spec, engine_limit_for_group(spec, group, dp), dp)
    assert per_rank == -(-group // dp)     # the estimate's ceil(batch / ranks) a rank (group_prefill_passes)


def test_the_recheck_launches_the_batch_the_search_priced():
    """vLLM's max_num_seqs is each DP engine's: before, a batch-16 configuration of 4 ranks ran 64 sequences."""
    _, c, cfg = _one_by_one()
    pre = prefill_scenario(cfg)
    decode_setup = cfg.scenario.resolved().pass_setup()
    prefill_setup = pre.resolved().pass_setup()
    assert rank_scheduler(cfg.scheduler, decode_setup, 4).max_batch * 4 == c.batch
    pre_sched = cfg.cluster.prefill_scheduler(cfg.scheduler)
    assert rank_scheduler(pre_sched, prefill_setup, 4).max_batch == PREFILL_PROMPTS_PER_RANK


def test_search_and_simulate_price_the_prefill_pool_step_alike():
    """A lone prompt and a group step of one prompt a rank, as the simulator's prefill pool of the re-check's
    configuration prices them (IterationTimes.group_time) and as the search does (its TTFT and its pool rate)."""
    profile, c, cfg = _one_by_one()
    pre = prefill_scenario(cfg)
    # the pool's own settings (pools.prefill_scenario: layout, GPU type, MoE kernels and transport) are the search's
    mine = replica_scenario(SPACE, c.prefill, c.chunk)
    assert (pre.parallel, pre.hardware, pre.moe_kernels, pre.kernel_engine) == \
        (mine.parallel, mine.hardware, mine.moe_kernels, mine.kernel_engine)
    sched = cfg.cluster.prefill_scheduler(cfg.scheduler)
    times = _iteration_times(pre, pre.parallel, sched, SPACE.prompt + SPACE.output)
    lone = times.group_time([(0, 0, [(SPACE.prompt, 0)])])
    group = times.group_time([(0, 0, [(SPACE.prompt, 0)])] * 4)
    assert profile.prefill_s == pytest.approx(lone, rel=1e-9)
    # (the simulator rounds the other ranks' expert rows to its context grid: within 1%)
    assert 4 / profile.prefill_rps == pytest.approx(group, rel=1e-2)
    assert profile.prefill_rps > 1.5 / profile.prefill_s   # four ranks side by side, not one prompt at a time


@pytest.mark.parametrize("slots,want", [(2, 1), (4, 2), (2, 0.5), (6, 1), (3, 1)])
def test_the_steady_send_slot_share_is_what_saturated_send_slots_admit(slots, want):
    """steady_prompts_per_step (the search's) against SendSlots (the simulator's) fed a rank that always has
    prompts: `want` new prompts a step (a fraction: a prompt that takes 1 / want steps)."""
    s, taken, owed = SendSlots(1, slots), 0, 0.0
    steps = 600
    for _ in range(steps):
        owed += want
        n = min(int(owed), s.caps()[0])
        owed -= n if n == int(owed) else 0   # (a prompt not admitted waits: its want is not carried twice)
        owed = min(owed, max(want, 1))
        s.record([n])
        taken += n
    assert taken / steps == pytest.approx(steady_prompts_per_step(slots, want), rel=0.02)


def test_an_sglang_prefill_pool_prices_its_send_slots():
    """SGLang's PD prefill rank holds 2 slots per running request: at one prompt a rank it prefills in 2 steps of 3;
    the same replica under vLLM (no slots) in every step."""
    rates = {}
    for engine in ("vllm", "sglang"):
        sc = Scenario(model="mixtral-8x7b", hardware="dgx-h100", kernel_engine=engine,
                      parallel=Parallelism(tp=4, ep=4, dp_attention=True, attention_dp=4),
                      workload=Workload(batch=1, prompt=2000, output=64, prefill_chunk=8192))
        resolved = sc.resolved()
        setup = resolved.pass_setup(sc.workload.shared_prefix)
        pricers = StepPricers()
        one = batch_times(setup, sc.workload, pricers.of(setup), sc.cuda_graphs)
        group = batch_times(setup, Workload(batch=4, prompt=2000, output=64, prefill_chunk=8192),
                            pricers.of(setup), sc.cuda_graphs).ttft_s
        rates[engine] = prefill_pool_rps(resolved, setup, sc, memory_fit(setup, sc.workload)[1], pricers, one) * group
    assert rates["vllm"] == pytest.approx(4.0)
    assert rates["sglang"] == pytest.approx(4 * 2 / 3)


def test_a_search_runs_the_engine_it_names_and_a_bad_one_is_a_one_line_error():
    from whatif.config_search.evaluate import replica_scenario
    from whatif.errors import WhatifError
    space = SearchSpace(model="mixtral-8x7b", hardware=("dgx-h100",), gpu_budget=8, engine="sglang")
    assert replica_scenario(space, DP4, 8192).engine_spec().base_engine == "sglang"
    with pytest.raises(WhatifError, match="^--engine: 'nope'"):
        SearchSpace(model="mixtral-8x7b", hardware=("dgx-h100",), gpu_budget=8, engine="nope")


def test_the_serve_command_launches_the_batch_the_search_priced():
    """vLLM's --max-num-seqs is each DP engine's: a batch-16 replica of 4 ranks is launched at 4; SGLang's
    --max-running-requests is the group's: 16. The prefill pool at one prompt a rank."""
    from whatif.queries.deployment import from_search
    _, c, _ = _one_by_one()
    for engine, decode, prefill in (("vllm", 4, 1), ("sglang", 16, 4)):
        d, _ = from_search(SearchSpace(**{**SPACE.__dict__, "engine": engine}), c)
        assert d.engine == engine
        assert [(p.role, p.max_num_seqs) for p in d.pools] == [("prefill", prefill), ("decode", decode)]


@pytest.mark.parametrize("engine,held", [("sglang", True), ("vllm", False)])
def test_an_sglang_tp_prefill_pool_runs_each_prompt_and_its_kv_send_in_series(engine, held):
    """SGLang's TP prefill server keeps a prompt's row until its KV is sent (simulator/prefill_rows.py): the search
    prices that pool's server as busy for prefill + send, as the simulator runs it; other engines overlap the send."""
    from dataclasses import replace
    space = replace(SPACE, engine=engine)
    tp = ReplicaSetup("dgx-h100", tp=4, pp=1, ep=1, weight="bf16", kv="bf16")
    profile, = evaluate_replica(space, tp)
    assert profile.prefill_rows_held is held
    c = next(c for c in disaggregated(space, profile, profile) if (c.prefill_replicas, c.replicas) == (1, 1))
    service = profile.prefill_servers / profile.prefill_rps
    cycle = service + profile.kv_send_node_s
    if held:
        assert c.request_rate <= profile.prefill_servers / cycle * (1 + 1e-9)
    flipped = replace(profile, prefill_rows_held=not held)
    other = next(c for c in disaggregated(space, flipped, flipped) if (c.prefill_replicas, c.replicas) == (1, 1))
    assert (c.request_rate < other.request_rate) is held    # the send in series costs rate; overlapped it does not


@pytest.mark.parametrize("chunk,runs", [(8192, False), (16384, True)])
def test_an_engine_that_computes_prompts_whole_runs_none_above_its_budget_in_search_or_simulate(chunk, runs):
    """TensorRT-LLM's default (chunked prefill off, engine_profiles/trtllm.yaml): a 10,000-token prompt above an
    8,192-token budget is rejected by the simulator (cluster.Cluster.rejection), so the search calls it invalid where
    it priced it in two chunks before; at a 16,384-token budget both run it."""
    from dataclasses import replace
    from whatif.config_search.configs import aggregated
    from whatif.simulator.cluster import simulate
    space = SearchSpace(model="llama-3.1-8b", hardware=("dgx-h100",), gpu_budget=1, prompt=10000, output=16,
                        modes=("aggregated",), batches=(2,), engine="trtllm", prefill_chunks=(chunk,))
    setup = ReplicaSetup("dgx-h100", tp=1, pp=1, ep=1, weight="bf16", kv="bf16")
    profile, = evaluate_replica(space, setup)
    assert (not profile.error) is runs
    if not runs:
        assert "computes a prompt whole in one step" in profile.error
        other, = evaluate_replica(replace(space, prefill_chunks=(16384,)), setup)
        c = aggregated(replace(space, prefill_chunks=(16384,)), other)[0]
        c = replace(c, chunk=chunk)      # the launch the search priced before: the 8,192-token budget
    else:
        c = aggregated(space, profile)[0]
    res = simulate(sim_config(space, c, 4), keep_log=False)
    assert all((r.status == "finished") is runs for r in res.records)
