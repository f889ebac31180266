"""Attention-DP in the simulator (simulator/rank_group.py): each rank its own scheduler, batch and KV pool, the ranks
stepping together; `estimate` and `simulate` agree on a steady state."""
from __future__ import annotations

import statistics

import pytest

import whatif
from whatif.simulator.cluster import _iteration_times
from whatif.simulator.config import SchedulerConfig
from whatif.inputs import scenario_from_inputs

KW = dict(kernel_engine="sglang", tp=8, ep=8, dp_attention=True, quantization="fp8")


@pytest.fixture(scope="module")
def closed_loop():
    return whatif.simulate("deepseek-v3", "dgx-b200", traffic=dict(concurrency=64, requests=192), prompt=1024,
                           output=256, **KW)


def test_estimate_and_simulate_agree_on_a_steady_decode(closed_loop):
    """64 clients over 8 ranks: the simulator's decode steps (8 sequences a rank) cost the estimate's TPOT."""
    est = whatif.estimate("deepseek-v3", "dgx-b200", batch=64, prompt=1024, output=256, with_max_batch=False, **KW)
    gaps = [g for r in closed_loop.records for g in r.inter_token_s]
    assert statistics.median(gaps) == pytest.approx(est.estimate.tpot_s, rel=0.02)


def test_each_rank_holds_its_own_sequences_and_blocks(closed_loop):
    assert "8 attention-DP ranks stepping together" in closed_loop.setup["cluster"]
    # 64 clients round-robin over 8 ranks: 8 a rank, the whole batch running at once, every block a rank's own
    assert max(closed_loop.log.columns["decode_seqs"]) == 64
    assert all(r.status == "finished" for r in closed_loop.records)


def test_a_step_takes_its_slowest_rank():
    """One rank prefilling 16k tokens beside seven decoding ranks: the step is that rank's prefill (with every
    rank's tokens through the experts), not the group's decodes and prompt priced on one GPU."""
    given = {k: v for k, v in KW.items() if k != "quantization"}
    sc = scenario_from_inputs(None, dict(model="deepseek-v3", hardware="dgx-b200", **given), quantization="fp8")
    times = _iteration_times(sc, sc.parallel, SchedulerConfig.for_engine(sc.engine_spec()), 2048)
    decoding = (256, 2048, [])
    prefill_rank = times.group_time([(0, 0, [(16384, 0)])])
    decode_ranks = times.group_time([decoding] * 8)
    mixed = times.group_time([decoding] * 7 + [(0, 0, [(16384, 0)])])
    assert prefill_rank <= mixed < 1.2 * prefill_rank
    assert decode_ranks < mixed
    # the prompt on a rank that also decodes costs about its two parts
    both = times.group_time([decoding] * 7 + [(256, 2048, [(16384, 0)])])
    assert both < 1.2 * (prefill_rank + decode_ranks)


@pytest.mark.parametrize("engine, per_rank", [("sglang", True), ("trtllm", False)])
def test_a_ranks_limits_follow_its_engine(engine, per_rank):
    """SGLang divides --max-running-requests and --chunked-prefill-size over its DP ranks; TensorRT-LLM's
    max_batch_size and max_num_tokens are each rank's own."""
    from whatif.simulator.rank_group import rank_scheduler
    given = {k: v for k, v in KW.items() if k not in ("quantization", "kernel_engine")}
    sc = scenario_from_inputs(None, dict(model="deepseek-v3", hardware="dgx-b200", kernel_engine=engine, **given),
                              quantization="fp8")
    cfg = SchedulerConfig.for_engine(sc.engine_spec())
    rank = rank_scheduler(cfg, sc.resolved().pass_setup(), 8)
    expect = (cfg.max_batch // 8, cfg.token_budget // 8) if per_rank else (cfg.max_batch, cfg.token_budget)
    assert (rank.max_batch, rank.token_budget) == expect
