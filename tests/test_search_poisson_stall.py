"""The search's cycle under a TTFT target (Poisson arrivals): each attention-DP rank's prefill pass is a lockstep step
of its own (config_search/poisson_stall.py), so a DP replica's claimed rate holds in the simulator's re-check."""
from __future__ import annotations

import pytest

import whatif
from whatif.config_search.poisson_stall import poisson_prefill_s
from whatif.config_search.queueing import pass_size


def test_unaligned_ranks_pay_a_pass_per_prompt_group():
    # 64 prompts over 4 ranks at a low rate: ~64 one-prompt passes, not the aligned 8 passes of 8 prompts
    lone, full, step = 0.125, 0.25, 0.024
    k, s = pass_size(1.8 / 4, lone, full, 2)
    assert k == pytest.approx(1.0, abs=0.03)
    mixed = poisson_prefill_s(64, 4, 1.8, lone, full, 2, step, prefill_first=False)
    assert mixed == pytest.approx(64 / k * (s - step))
    assert poisson_prefill_s(64, 4, 1.8, lone, full, 2, step, prefill_first=True) == pytest.approx(64 / k * s)
    assert mixed > 2 * 8 * full            # over twice the aligned 8 full passes (each 2 prompts a rank, 4 ranks)


def test_an_attention_dp_replica_serves_the_rate_the_search_claims():
    """DeepSeek-V3 NVFP4 on a DGX B200, TP4 EP4 with 4 attention-DP ranks, batch 64, 4,000 / 1,000 tokens, TTFT
    <= 1 s: the aligned passes claimed 2.07 req/s where the simulator's Poisson runs met the target at 1.61 (x0.78);
    the re-check's documented band is x0.9-1.2 (docs/search.md)."""
    res = whatif.search("deepseek-v3", "dgx-b200", gpus=4, prompt=4000, output=1000, ttft=1.0, tp=(4,), pp=(1,),
                        ep=(4,), dp_attention=(4,), batches=(64,), quantizations=("nvfp4",), modes=("aggregated",),
                        simulate_top=1, sim_requests=300, jobs=1)
    (row,) = [r for r in res.rechecked if r["config"].batch == 64]
    assert row["goodput_req_s"] >= 0.9 * row["predicted_req_s"], row
