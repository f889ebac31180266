"""A fused MoE's cost per touched expert whatever its slice (session 69 N, validate/moe_fit.EXPERT_COST_KERNELS): the
TRTLLM-Gen MXFP4 x MXFP8 kernel's small-M regime is fitted with it, the serving path charges it per touched expert."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from whatif.roofline.kernel_models import moe
from whatif.roofline.kernel_models.fitted_roofline import RooflineParams
from whatif.specs.profiles import read_yaml
from whatif.validate import moe_fit as mf


# the blocks of EXPERT_COST_KERNELS' kernels: TRTLLM-Gen MXFP4 x MXFP8 (session 69 N) and TRTLLM-Gen NVFP4 as vLLM and
# SGLang call it (session 70 A); vLLM's Marlin blocks not (its serving rows got worse)
CARRYING = {"trtllm_gen_mxfp8/blackwell/fp4", "vllm/blackwell/fp4", "sglang/blackwell/fp4"}


def test_only_the_named_kernels_small_m_regime_carries_it():
    blocks = read_yaml(moe.FIT_FILE)["blocks"]
    carrying = {k for k, b in blocks.items() if "expert_s" in b.get("small_m", {}) or "expert_s" in b}
    assert carrying == CARRYING
    for key in carrying:   # (small-M only, seconds an expert)
        assert 0 < blocks[key]["small_m"]["expert_s"] < 1e-6 and "expert_s" not in blocks[key]
        assert {(blocks[key]["fitted_on"]["kernel_source"], blocks[key]["fitted_on"]["moe_dtype"])} <= \
            mf.EXPERT_COST_KERNELS
    small = moe.moe_params("blackwell", "fp4", "trtllm_gen_mxfp8", "small")
    assert small.expert_s == blocks["trtllm_gen_mxfp8/blackwell/fp4"]["small_m"]["expert_s"]
    assert moe.moe_params("blackwell", "fp4", "trtllm_gen_mxfp8").expert_s == 0.0   # (large-M: none)


def test_the_fitter_recovers_a_cost_per_touched_expert():
    rng = np.random.default_rng(0)
    n = 400
    rows = pd.DataFrame({"t_c": rng.uniform(1e-7, 3e-5, n), "t_m": rng.uniform(1e-6, 2e-4, n), "t_l2": 0.0,
                         "tiles_per_sm": rng.uniform(0.5, 60, n), "touched": rng.integers(1, 129, n).astype(float)})
    truth = RooflineParams(15e-6, 0.1, 0.9, 4.0, item_s=1e-7, expert_s=2e-7)
    rows["latency_s"] = moe.moe_time(rows.t_c, rows.t_m, rows.t_l2, truth, rows.tiles_per_sm, rows.touched)
    got = mf.fit_moe(rows, expert_cost=True)
    assert got.expert_s == pytest.approx(2e-7, rel=0.05) and got.floor_s == pytest.approx(15e-6, rel=0.05)
    assert mf.fit_moe(rows).expert_s == 0.0   # (the other blocks' form: no such term)


def test_the_score_that_admits_a_kernel_sees_a_cost_per_touched_expert_out_of_sample():
    """moe_fit.expert_cost_scores (accuracy_moe.py --expert-cost): rows with such a cost on two GPUs score lower
    with the term than without, in-sample and left out."""
    rng = np.random.default_rng(1)
    n = 300
    truth = RooflineParams(15e-6, 0.1, 0.9, 4.0, item_s=1e-7, expert_s=3e-7)
    frames = []
    for gpu in ("b200_sxm", "h100_sxm"):
        rows = pd.DataFrame({"gpu": gpu, "rows_per_expert": 2.0, "t_c": rng.uniform(1e-7, 3e-5, n),
                             "t_m": rng.uniform(1e-6, 2e-4, n), "t_l2": 0.0, "tiles_per_sm": rng.uniform(0.5, 60, n),
                             "touched": rng.integers(1, 257, n).astype(float)})
        rows["latency_s"] = moe.moe_time(rows.t_c, rows.t_m, rows.t_l2, truth, rows.tiles_per_sm, rows.touched)
        frames.append(rows)
    scores = mf.expert_cost_scores(pd.concat(frames, ignore_index=True))
    assert [s["out_of_sample"] for s in scores] == ["gpu", "gpu"]
    for s in scores:
        assert s["in_with"] < 1.0 < s["in_without"] and s["out_with"] < 1.0 < s["out_without"]


def test_the_serving_path_charges_it_per_touched_expert(monkeypatch):
    from whatif.roofline import kernel_timing as kt
    from whatif.roofline.ops import gemm
    from whatif.specs.hardware import load_system
    from whatif.specs.op_kinds import OpRole
    gpu = load_system("b200").gpu
    base = gemm("experts", 4 * 32, 3072, 3072, 1, 1, "fp4", role=OpRole.EXPERT_UP)
    op = replace(base, shape=replace(base.shape, groups=32.0))
    p = replace(moe.moe_params("blackwell", "fp4", "sglang", "small"), expert_s=0.0)   # (the block carries one)
    monkeypatch.setattr(kt, "moe_params", lambda *a, **k: p)
    without = kt.expert_gemm_seconds(op, gpu, engine="sglang")[3]
    monkeypatch.setattr(kt, "moe_params", lambda *a, **k: replace(p, expert_s=1e-7))
    assert kt.expert_gemm_seconds(op, gpu, engine="sglang")[3] == pytest.approx(without + 1e-7 * 32 / 2)


def test_mxfp4_experts_stream_the_kernels_bytes_not_the_stand_ins():
    """The nvfp4 stand-in op of the TRTLLM-Gen MXFP4 x MXFP8 experts carries 0.5625 B a weight; the kernel (and the
    fit's rows) read MXFP4's 0.53125 (expert_fits.FIT_WEIGHT_BYTES)."""
    from whatif.roofline.expert_fits import FIT_WEIGHT_BYTES, stand_in_weight_excess
    from whatif.roofline.ops import gemm
    from whatif.specs.op_kinds import OpRole
    base = gemm("experts", 128, 5760, 2880, 0.5, 0.5625, "fp4", role=OpRole.EXPERT_UP)
    op = replace(base, shape=replace(base.shape, groups=80.0))
    assert FIT_WEIGHT_BYTES["trtllm_gen_mxfp8"] == 0.53125
    assert stand_in_weight_excess(op, "trtllm_gen_mxfp8") == pytest.approx(80 * 5760 * 2880 * (0.5625 - 0.53125))
    assert stand_in_weight_excess(op, "sglang") == 0.0
