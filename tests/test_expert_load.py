"""Expert load across EP ranks (roofline/expert_load.py): routing skew makes the busiest rank slower, EPLB's
redundant experts even it out and cost memory; uniform routing without EPLB changes nothing."""
from __future__ import annotations

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.expert_load import busiest_rank_factor, popularity
from whatif.roofline.graph import forward_ops
from whatif.roofline.memory import layer_weight_bytes
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole

V3 = load_model("deepseek-v3")


def test_uniform_is_one_and_skew_grows_with_ep():
    assert busiest_rank_factor(256, 8, 0.0) == 1.0 and busiest_rank_factor(256, 1, 1.0) == 1.0
    assert popularity(4, 0.0).tolist() == [0.25] * 4
    f = [busiest_rank_factor(256, ep, 0.8) for ep in (2, 8, 32)]
    assert 1.0 < f[0] < f[1] < f[2] <= 32


def test_eplb_redundant_experts_even_the_load():
    skewed = busiest_rank_factor(256, 32, 1.0)
    balanced = busiest_rank_factor(256, 32, 1.0, 32)
    assert balanced < 1.1 < skewed
    # slots are whole experts: 288 slots over 72 ranks hold 4 each while the mean is 256/72
    assert busiest_rank_factor(256, 72, 0.0, 32) == pytest.approx(4 / (256 / 72) * (1 / 1), rel=0.01)


def test_the_busiest_rank_sets_the_expert_gemms_and_dispatch():
    prec, fb = Precision(weight="fp8"), ForwardBatch.decode(256, 2048)

    def role_sum(par, roles, key):
        return sum(getattr(op, key) if key != "link" else op.bytes["link"]
                   for op in forward_ops(V3, fb, par, prec) if op.role in roles)
    flat = Parallelism(tp=8, ep=8, dp_attention=True)   # (attention DP: the tokens reach the experts by all-to-all)
    skew = Parallelism(tp=8, ep=8, dp_attention=True, expert_skew=1.0)
    factor = busiest_rank_factor(256, 8, 1.0)
    assert role_sum(skew, {OpRole.EXPERT_UP}, "flops") == pytest.approx(factor * role_sum(flat, {OpRole.EXPERT_UP},
                                                                                          "flops"))
    assert role_sum(skew, {OpRole.MOE_DISPATCH}, "link") == pytest.approx(
        factor * role_sum(flat, {OpRole.MOE_DISPATCH}, "link"))
    # a large attention-DP batch (compute on the busiest rank matters; at small batches EPLB's copies cost reads)
    kw = dict(tp=8, ep=8, dp_attention=True, quantization="fp8", batch=2048, with_max_batch=False)
    slow = whatif.estimate("deepseek-v3", "hgx-h200", expert_skew=1.0, **kw)
    base = whatif.estimate("deepseek-v3", "hgx-h200", **kw)
    fixed = whatif.estimate("deepseek-v3", "hgx-h200", expert_skew=1.0, redundant_experts=32, **kw)
    assert base.tpot_s < fixed.tpot_s < slow.tpot_s


def test_redundant_experts_cost_memory_and_make_uneven_counts_valid():
    prec = Precision(weight="fp8")
    plain, eplb = (layer_weight_bytes(V3, Parallelism(tp=8, ep=8, redundant_experts=r), prec, 0) for r in (0, 32))
    routed = 256 * V3.dense_mlp_params(V3.moe.expert_intermediate_size) * sum(
        V3.is_moe_layer(i) for i in range(V3.num_layers)) * prec.weight_bytes / 8
    assert eplb - plain == pytest.approx(routed * 32 / 256, rel=1e-6)
    with pytest.raises(WhatifError, match="--ep: 48 does not divide the 256 experts.*--redundant-experts"):
        whatif.estimate("deepseek-v3", "dgx-h100", nodes=6, tp=48, ep=48, dp_attention=True, quantization="fp8")
    r = whatif.estimate("deepseek-v3", "dgx-h100", nodes=6, tp=48, ep=48, dp_attention=True, redundant_experts=32,
                        quantization="fp8", batch=48, with_max_batch=False)
    assert r.fits


@pytest.mark.parametrize("kwargs, message", [
    (dict(model="llama-3.1-8b", tp=2, expert_skew=0.5), "--expert-skew: only an expert-parallel layout"),
    (dict(model="deepseek-v3", tp=8, redundant_experts=8), "--redundant-experts: only an expert-parallel layout"),
])
def test_refused_without_expert_parallelism(kwargs, message):
    with pytest.raises(WhatifError, match=message):
        whatif.estimate(hardware="hgx-h200", quantization="fp8", **kwargs)


def test_bad_values_name_the_flag():
    with pytest.raises(WhatifError, match="--expert-skew"):
        Parallelism(tp=8, ep=8, expert_skew=-1)
    with pytest.raises(WhatifError, match="--redundant-experts"):
        Parallelism(tp=8, ep=8, redundant_experts=1.5)
