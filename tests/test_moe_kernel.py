"""The fused-MoE kernel model (roofline/kernel_models/moe.py, experimental): routing, physics, the
fitted table, and its accuracy on the committed moe subset (in-sample and leave-one-GPU-out), pinned."""
import numpy as np
import pytest

from whatif.errors import WhatifError
from whatif.roofline.kernel_models import moe
from whatif.specs.profiles import read_yaml
from whatif.validate import moe_fit as mf
from whatif.validate.corpus import COMPACT_DIR, load_family


@pytest.mark.parametrize("tokens", (1, 3, 64, 1000))
def test_routings_place_every_assignment(tokens):
    assert moe.balanced_loads(tokens, 8, 128).sum() == tokens * 8
    loads = moe.power_law_loads(tokens, 8, 128, 8, 1.2, seed=0)
    assert loads.sum() == tokens * 8 and (loads >= 0).all()
    groups = loads.reshape(8, 16).sum(axis=1)
    assert groups[0] == groups.max()     # this GPU holds the most loaded EP group


def test_power_law_routing_is_capped_and_spread_over_ranks_as_the_collector_draws_it():
    # helper.py _generate_power_law_distribution: an expert takes at most T tokens; the rounding's shortfall goes
    # round-robin over the EP ranks, so 1 token's 22 picks of 512 experts put 3 on each of 8 ranks' busiest
    loads = moe.power_law_loads(1, 22, 512, 8, 1.2, seed=0)
    assert loads.sum() == 22 and loads.max() == 1 and loads[:64].sum() == 3
    assert all(moe.power_law_loads(2, 22, 512, 1, 1.2, seed=s).max() <= 2 for s in range(4))
    assert moe.routing_stats(2, 22, 512, 1, "power_law_1.2")[0] == 44.0
    # the older collector (no cap, shortfall onto the first experts): every pick on rank 0 (A100 vLLM 0.14.0's scan)
    assert moe.routing_stats(1, 22, 512, 8, "power_law_1.2_uncapped")[0] == 22.0
    assert mf.collector_distribution("vllm", "0.14.0", "power_law_1.2") == "power_law_1.2_uncapped"
    assert mf.collector_distribution("vllm", "0.24.0", "power_law_1.2") == "power_law_1.2"
    assert mf.collector_distribution("trtllm", "1.0.0", "power_law_1.01_eplb") == "power_law_1.01_eplb"


def test_routing_stats_are_bounded_and_deterministic():
    touched, padded, assigned = moe.routing_stats(64, 8, 256, 4, "power_law_1.01")
    assert 0 < touched <= 64 and padded >= assigned > 0
    assert moe.routing_stats(64, 8, 256, 4, "power_law_1.01") == (touched, padded, assigned)
    with pytest.raises(WhatifError, match="distribution 'zipf' is not valid"):
        moe.routing_stats(8, 2, 8, 1, "zipf")


def test_grouped_topk_keeps_topk_experts_in_topk_group_groups():
    picks = moe.balanced_selections(1000, 8, 256)
    sel = moe.grouped_selections(picks, 256, 8, 4)
    assert sel.shape == (1000, 8)
    assert all(len(set(row)) == 8 and len({e // 32 for e in row}) <= 4 for row in sel.tolist())


def test_collector_grouped_routing_keeps_deepseek_rows_on_rank_zero():
    # SGLang 0.5.14's DeepSeek rows: 8,192 tokens take the same time at EP 1 and EP 2, ~0.54x at EP 64
    _, _, ep1 = moe.routing_stats(8192, 8, 256, 1, "balanced", (8, 4))
    _, _, ep2 = moe.routing_stats(8192, 8, 256, 2, "balanced", (8, 4))
    _, _, ep64 = moe.routing_stats(8192, 8, 256, 64, "balanced", (8, 4))
    assert ep2 == ep1 and 0.45 < ep64 / ep1 < 0.55
    assert moe.routing_stats(8192, 8, 256, 2, "balanced")[2] == ep1 / 2   # plain top-k halves it
    assert mf.collector_groups("sglang", "0.5.14", 7168, 256, 8) == (8, 4)
    assert mf.collector_groups("trtllm", "1.3.0rc20", 7168, 256, 8) is None
    assert mf.collector_groups("sglang", "0.5.14", 7168, 384, 8) is None


def test_more_tokens_touch_more_weights():
    times = []
    for tokens in (1, 4, 16, 64):
        t_c, t_m, t_l2 = moe.moe_ideal_times(tokens, 4096, 1536, 8, 128, 1, 1, "balanced", 989e12, 3.35e12)
        times.append(moe.moe_time(t_c, t_m, t_l2, moe.moe_params("hopper")))
    assert all(b > a for a, b in zip(times, times[1:]))


def test_a_working_set_in_l2_reads_faster():
    """L40S (vllm/ada/bf16, an SM_RATE_L2_FITS block): a resident working set is read at the SMs' L2 rate, 142 SMs x
    2.52 GHz x 4 B = 1.43 TB/s at efficiency 1 (before its fitted l2_speedup), not at GDDR6's 864 GB/s."""
    from whatif.validate.corpus import corpus_gpu
    args = (1, 4096, 14336, 2, 8, 8, 1, "balanced", 362e12, 0.864e12)
    rate = mf.sm_l2_rate(corpus_gpu("l40s"))
    assert rate == pytest.approx(142 * 2.52e9 * 4.0)
    _, hbm_only, _ = moe.moe_ideal_times(*args, l2_bytes=0.0)
    _, t_m, at_hbm_rate = moe.moe_ideal_times(*args, l2_bytes=96e6)
    _, _, t_l2 = moe.moe_ideal_times(*args, l2_bytes=96e6, l2_rate=rate)
    p = moe.moe_params("ada")
    assert t_m == 0 and at_hbm_rate == hbm_only and t_l2 == pytest.approx(hbm_only * 0.864e12 / rate)
    assert moe.moe_time(0.0, 0.0, t_l2, p) < moe.moe_time(0.0, hbm_only, 0.0, p)


def test_every_fitted_efficiency_is_physical_and_sourced():
    blocks = read_yaml(moe.FIT_FILE)["blocks"]
    assert blocks
    for key, b in blocks.items():
        for v in (b, *(b[r] for r in ("small_m", "mid_m") if r in b)):   # every regime's set
            assert 0 < v["compute_eff"] <= 1 and 0 < v["memory_eff"] <= 1, key
            assert v["l2_speedup"] >= 1 and v["smooth"] >= 1
        assert b["fitted_on"]["rows"] > 0


def test_unfitted_architecture_falls_back_and_says_so():
    assert "has no fit: hopper's" in moe.moe_params("rubin").provenance
    with pytest.raises(WhatifError, match="moe dtype 'int3' is not valid"):
        moe.moe_params("hopper", "int3")


# MAPE (%) reached on the committed subset (vLLM bf16, small-M and large-M regimes fitted apart); worse by more than
# MARGIN points fails. (One regime had in-sample 20.4 / 21.8 / 25.2 / 45.1, leave-one-GPU-out 23.2 / 50.7 / 28.3 /
# 51.4: the split lowers every in-sample figure and L40S's left out, raises A100's, B200's and H100's left out.)
MARGIN = 2.0
# Session 64 G (L2-resident rows at the SMs' L2 rate): A100 left out 27.4 -> 22.1, H100 29.7 -> 28.9, B200 54.1 ->
# 64.2 (worse: its rows are TRTLLM-Gen, its donors Triton; validate/moe_kernel_loo scores it against its own kernel).
# Session 64 N (power-law routing capped and spread over ranks as the collector drew it; A100's rows uncapped):
# in-sample B200 21.7 -> 15.7, H100 23.7 -> 18.4, L40S 44.1 -> 20.3; left out A100 22.1 -> 23.9 (worse: its donors
# moved), B200 64.2 -> 61.2, H100 28.9 -> 24.2, L40S 47.3 -> 24.2.
PINNED = {"insample_s": {"a100_sxm": 19.8, "b200_sxm": 15.7, "h100_sxm": 18.4, "l40s": 20.3},
          "loo_s": {"a100_sxm": 23.9, "b200_sxm": 61.2, "h100_sxm": 24.2, "l40s": 24.2}}


@pytest.fixture(scope="module")
def accuracy():
    return mf.insample_and_loo(mf.moe_rows(load_family("moe", COMPACT_DIR)))


@pytest.mark.parametrize("column", sorted(PINNED))
def test_accuracy_is_pinned(accuracy, column):
    ape = (accuracy[column] / accuracy["latency_s"] - 1).abs() * 100
    reached = ape.groupby(accuracy["gpu"]).mean().to_dict()
    for gpu, pinned in PINNED[column].items():
        assert np.isfinite(reached[gpu]) and reached[gpu] <= pinned + MARGIN, (column, gpu, reached[gpu])


def test_vllms_quantized_expert_blocks_are_blackwells_and_price_its_expert_gemms():
    """vLLM's fp8 / NVFP4 fused-MoE blocks are fitted on B200 only (moe_fit.FITS): a B200 fp8 expert GEMM takes
    the vllm/blackwell/fp8 fit; Hopper's fp8 experts keep the per-class model (no block, no borrowed one)."""
    from dataclasses import replace
    from whatif.roofline.efficiency import load_efficiency
    from whatif.roofline.kernel_timing import covers
    from whatif.roofline.ops import gemm
    from whatif.roofline.timing import time_op
    from whatif.specs.hardware import load_system
    from whatif.specs.op_kinds import OpRole
    assert mf.FITS[("vllm", "fp8")] == (("fp8",), ("b200_sxm",))
    assert moe.has_moe_fit("fp8", "blackwell") and moe.has_moe_fit("fp4", "blackwell")
    assert not moe.has_moe_fit("fp8", "hopper") and moe.has_moe_fit("bf16", "hopper")
    b200, h100 = load_system("b200").gpu, load_system("h100-sxm").gpu
    base = gemm("experts", 64, 3072, 3072, 1, 1, "fp8", role=OpRole.EXPERT_UP)
    op = replace(base, shape=replace(base.shape, groups=16.0))   # 16 touched experts, 4 rows each
    assert covers(op, b200) and not covers(op, h100)
    p = moe.moe_params("blackwell", "fp8", regime="small")
    assert "vllm/blackwell/fp8" in p.provenance
    assert time_op(op, b200, load_efficiency("default", b200)).time_s > p.floor_s / 2
