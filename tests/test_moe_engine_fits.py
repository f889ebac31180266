"""Fused-MoE fits per engine (roofline/kernel_models/moe.py, validate/moe_fit.FITS): each engine's experts are
priced by a fit of its own kernels, the choice is said in the provenance, and the shipped blocks reproduce from
the corpus with the errors docs/accuracy.md quotes (slow: they refit from ../shared's full moe table)."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.kernel_models import moe
from whatif.roofline.kernel_timing import covers
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole
from whatif.specs.profiles import read_yaml
from whatif.roofline.expert_fits import FIT_PEAK_DTYPE
from whatif.validate import moe_fit as mf

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"
B200, H100 = load_system("b200").gpu, load_system("h100-sxm").gpu


def expert_op(rows_per_expert: int, dtype: str, experts: int = 16):
    base = gemm("experts", rows_per_expert * experts, 3072, 3072, 1, 1, dtype, role=OpRole.EXPERT_UP)
    return replace(base, shape=replace(base.shape, groups=float(experts)))


@pytest.mark.parametrize("key", sorted(read_yaml(moe.FIT_FILE)["blocks"]))
def test_each_block_is_fitted_on_its_own_engines_rows(key):
    engine, arch, dtype = key.split("/")
    block = read_yaml(moe.FIT_FILE)["blocks"][key]
    framework = mf.ROWS_FRAMEWORK.get(engine, engine)   # (a kernel another engine's collector measured)
    assert block["fitted_on"]["engine"] == framework
    # the peak the rows were fitted at is the one pricing uses (expert_fits.FIT_PEAK_DTYPE: MXFP4 x MXFP8's fp8)
    assert mf.DTYPE_BYTES[block["fitted_on"]["moe_dtype"]][2] == FIT_PEAK_DTYPE.get(engine, dtype)
    assert block["fitted_on"]["moe_dtype"] in mf.FITS[(engine, dtype)][0]
    gpu = block["fitted_on"]["gpu"]
    assert moe.moe_params(arch, dtype, engine).provenance.startswith(f"fitted on {gpu} {framework}")


@pytest.mark.parametrize("engine", ("vllm", "sglang", "trtllm"))
@pytest.mark.parametrize("arch", ("blackwell", "hopper", "ada", "ampere"))
@pytest.mark.parametrize("dtype", ("fp8", "fp4"))
def test_quantized_experts_never_take_another_engines_kernel(engine, arch, dtype):
    if moe.has_moe_fit(dtype, arch, engine):
        p = moe.moe_params(arch, dtype, engine)
        assert p.provenance.split(" rows (")[0].split()[3] == engine, p.provenance


def test_selection_by_engine_on_blackwell():
    sglang, vllm = moe.moe_params("blackwell", "fp8", "sglang"), moe.moe_params("blackwell", "fp8", "vllm")
    assert "sglang fp8_block rows (sglang/blackwell/fp8" in sglang.provenance
    assert "vllm fp8 rows (vllm/blackwell/fp8" in vllm.provenance
    # TensorRT-LLM's only B200 MoE rows (its MXFP4 x MXFP8 kernel, two shapes) are not fitted: per-class
    assert not any(moe.has_moe_fit(d, "blackwell", "trtllm") for d in ("fp8", "fp4"))
    assert "vllm's fused MoE stands in" in moe.moe_params("blackwell", "bf16", "trtllm").provenance
    op = expert_op(4, "fp8")
    times = {e: time_op(op, B200, load_efficiency("default", B200, engine=e)).time_s
             for e in ("vllm", "sglang", "trtllm")}
    assert len(set(times.values())) == 3 and not covers(op, B200, "trtllm")
    assert all(covers(op, B200, e) for e in ("vllm", "sglang"))


def test_hopper_fp8_experts_stay_per_class_for_every_engine():
    """No engine's own Hopper fp8 MoE rows are fitted (moe_fit.FITS says why): the per-class model prices them
    (vLLM's block-FP8 experts under EP take the CUTLASS kernel's fit: test_block_fp8_moe_kernel)."""
    op = expert_op(4, "fp8")
    assert not any(covers(op, H100, e) for e in ("vllm", "sglang", "trtllm"))
    assert covers(expert_op(4, "bf16"), H100, "trtllm")
    assert "trtllm bfloat16 rows (trtllm/hopper/bf16" in moe.moe_params("hopper", "bf16", "trtllm").provenance


def test_small_m_ops_take_the_small_m_regime():
    small, large = moe.moe_params("blackwell", "fp4", "sglang", "small"), moe.moe_params("blackwell", "fp4", "sglang")
    assert f"<= {moe.SMALL_M} rows per expert" in small.provenance and small != large
    eff = load_efficiency("default", B200, engine="sglang")
    t_small = time_op(expert_op(moe.SMALL_M, "fp4"), B200, eff)
    # (its floor and, session 70 A, its cost per touched expert, each split over the two grouped GEMMs)
    assert small.expert_s > 0 and t_small.overhead_s == pytest.approx((small.floor_s + small.expert_s * 16) / 2)
    assert time_op(expert_op(moe.SMALL_M + 1, "fp4"), B200, eff).overhead_s == pytest.approx(large.floor_s / 2)


def test_mid_m_regime_where_a_block_has_it():
    """Session 63: a block with `mid_m` prices 17-128 rows an expert (one partly filled M tile) by it and more by its
    top-level set; a block without it prices everything over SMALL_M by its top-level set, as before."""
    assert [moe.moe_regime(r) for r in (1, 16, 17, 128, 129)] == ["small", "small", "mid", "mid", "large"]
    mid, large = moe.moe_params("blackwell", "fp8", "sglang", "mid"), moe.moe_params("blackwell", "fp8", "sglang")
    assert f"{moe.SMALL_M}-{moe.TILE_M_CAP} rows per expert" in mid.provenance and mid != large
    assert f"> {moe.TILE_M_CAP} rows per expert" in large.provenance
    eff = load_efficiency("default", B200, engine="sglang")
    for rows, p in ((moe.SMALL_M + 1, mid), (moe.TILE_M_CAP, mid), (moe.TILE_M_CAP + 1, large)):
        assert time_op(expert_op(rows, "fp8"), B200, eff).overhead_s == pytest.approx(p.floor_s / 2)   # (no grid)
    two = moe.moe_params("blackwell", "fp4", "sglang")   # (no mid_m: one set over SMALL_M)
    assert moe.moe_params("blackwell", "fp4", "sglang", "mid") == two and f"> {moe.SMALL_M} rows" in two.provenance


# ---- refit from the full corpus (../shared), and the errors quoted in docs/accuracy.md ----
# MAPE % (in-sample; leave-one-GPU-out where a fit has two GPUs: none of the quantized ones, B200 only) reached by
# each engine's fit, by GPU; worse by more than MARGIN points fails.
MARGIN = 1.0
# session 64 N: power-law rows routed as the collector drew them (capped, spread over ranks; moe.power_law_loads):
# in-sample falls on every block (L40S 31.9 -> 19.2 vLLM, 35.2 -> 23.7 SGLang); A100 vLLM left out 24.5 -> 25.3 (worse).
PIN_MXFP8 = 13.5   # in-sample MAPE % of the trtllm_gen_mxfp8 block (<= 128 tokens 11.6, > 128 14.8)
PINNED = {("sglang", "fp8"): {"b200_sxm": (11.0, None)},   # 62 P: 18.2 -> 15.1 (slices padded to 128); 63 G: mid_m 12.0
          # session 63 F: 24.5 -> 18.2 (finalize, per-GEMM form); 70 A: 16.4 -> 15.3 (cost per touched expert)
          ("sglang", "fp4"): {"b200_sxm": (15.3, None)},
          ("vllm", "fp8"): {"b200_sxm": (15.2, None)},
          ("vllm", "fp4"): {"b200_sxm": (10.5, None)},   # session 63 F: 18.1 -> 13.3 (the same); 70 A: 11.7 -> 10.5
          # session 70 A: Marlin, as shipped (a cost per touched expert would reach 14.9 / 12.9 / 14.1 in, 38.8 / 26.5 /
          # 65.7 left out, but its serving rows got worse: not adopted)
          ("vllm", "w4a16"): {"b200_sxm": (15.2, 40.1), "h100_sxm": (13.8, 29.5), "l40s": (14.1, 66.1)},
          ("trtllm", "mxfp4"): {"h100_sxm": (12.7, None)},   # session 53: H100 only (no leave-one-out)
          ("flashinfer_cutlass", "fp8"): {"h100_sxm": (21.0, None)},   # session 54: H100 only (no leave-one-out)
          # session 69 N: a cost per touched expert in its small-M regime (B200 only: no leave-one-out)
          ("trtllm_gen_mxfp8", "fp4"): {"b200_sxm": (PIN_MXFP8, None)},
          # session 64 G: L2-resident rows at the SMs' L2 rate (SM_RATE_L2_FITS); L40S left out 37.4 -> 33.8 (vLLM),
          # 56.1 -> 37.9 (SGLang). B200's leave-one-out scores TRTLLM-Gen against Triton donors: not pinned.
          ("vllm", "bf16"): {"a100_sxm": (23.0, 25.3), "h100_sxm": (19.0, 23.2), "l40s": (19.2, 22.0)},
          ("sglang", "bf16"): {"a100_sxm": (32.6, 33.8), "h100_sxm": (21.5, 24.5), "l40s": (23.7, 26.4)}}


@pytest.fixture(scope="module")
def corpus():
    if not (CORPUS / "moe.parquet").exists():
        pytest.skip("the full corpus (../shared/reference/aiconfigurator) is not in this checkout")
    from whatif.validate.corpus import load_family
    return load_family("moe", CORPUS)


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(PINNED))
def test_engine_fits_reproduce_and_keep_their_accuracy(corpus, key):
    rows = mf.fit_rows(corpus, *key)
    shipped = read_yaml(moe.FIT_FILE)["blocks"]
    for name, block in mf.fit_document({key: rows})["blocks"].items():
        assert ("mid_m" in block) == ("mid_m" in shipped[name]) == (name in mf.MID_M_BLOCKS), name
        for field in ("floor_s", "compute_eff", "memory_eff", "smooth", "l2_speedup", "expert_s"):
            assert block.get(field, 0) == pytest.approx(shipped[name].get(field, 0), rel=2e-3), (name, field)
            for regime in ("small_m", "mid_m")[:1 + ("mid_m" in block)]:
                assert block[regime].get(field, 0) == pytest.approx(shipped[name][regime].get(field, 0),
                                                                    rel=2e-3), (name, field)
    out = mf.insample_and_loo(rows, mf.block_gpus_with_mid_m(rows, *key))
    for gpu, (insample, loo) in PINNED[key].items():
        mine = out[out["gpu"] == gpu]
        reached = float(((mine["insample_s"] / mine["latency_s"] - 1).abs() * 100).mean())
        assert reached <= insample + MARGIN, (key, gpu, reached)
        if loo is not None:
            reached = float(((mine["loo_s"] / mine["latency_s"] - 1).abs() * 100).mean())
            assert np.isfinite(reached) and reached <= loo + MARGIN, (key, gpu, reached)


def test_vllm_weight_only_experts_take_its_marlin_moe_fit():
    """INT4 weight-only experts (in-kernel dequant: alu_ops) under vLLM are priced by its Marlin MoE fit
    (vllm/<arch>/w4a16), slower than its bf16 FlashInfer MoE on Blackwell at prefill sizes (the corpus: 4.3 ms vs
    ~1.2 ms per Kimi-K2.5 layer at 8,192 tokens, TP8); engines without such a fit keep their bf16 one."""
    from whatif.roofline.expert_fits import WEIGHT_ONLY_MOE, moe_fit_dtype
    dequant = replace(expert_op(256, "bf16"), alu_ops=1e9, int_weights=True)
    assert moe_fit_dtype(dequant, B200, "vllm") == WEIGHT_ONLY_MOE and moe_fit_dtype(dequant, B200, "sglang") == "bf16"
    assert moe_fit_dtype(expert_op(256, "bf16"), B200, "vllm") == "bf16"          # plain 16-bit experts
    assert "vllm int4_wo rows (vllm/blackwell/w4a16" in moe.moe_params("blackwell", WEIGHT_ONLY_MOE, "vllm").provenance
    vllm = load_efficiency("default", B200, engine="vllm")
    assert time_op(dequant, B200, vllm).time_s > 2 * time_op(expert_op(256, "bf16"), B200, vllm).time_s
    mxfp4 = replace(expert_op(256, "bf16"), alu_ops=1e9)                    # MXFP4: vLLM's default kernels, 16-bit fit
    assert moe_fit_dtype(mxfp4, B200, "vllm") == "bf16"


def test_mxfp4_experts_take_an_engines_own_mxfp4_fit_where_it_has_one():
    """MXFP4 weights beside 16-bit activations (gpt-oss's checkpoint): TensorRT-LLM's Hopper MXFP4 MoE rows price
    them there (trtllm/hopper/mxfp4); vLLM (no fit of its own MXFP4 kernels) and Blackwell keep the 16-bit fit."""
    from whatif.roofline.expert_fits import moe_fit_dtype
    op = replace(expert_op(4, "bf16"), fp4_weights=True)
    assert moe_fit_dtype(op, H100, "trtllm") == "mxfp4"
    assert moe_fit_dtype(op, H100, "vllm") == "bf16" and moe_fit_dtype(op, B200, "trtllm") == "bf16"
    assert moe_fit_dtype(replace(op, fp4_weights=False), H100, "trtllm") == "bf16"
    assert "trtllm/hopper/mxfp4" in moe.moe_params("hopper", "mxfp4", "trtllm").provenance


def test_mxfp4_experts_on_marlin_take_the_weight_only_fit():
    """moe_kernels marlin (VLLM_MXFP4_USE_MARLIN=1): MXFP4 experts priced by vLLM's Marlin (w4a16) MoE fit; under it,
    as under the 16-bit fit, no top-k or activation op (session 65 B, M: vLLM 0.24's FusedMoE call the fits' rows time
    runs both); the router GEMM stays; on a CDNA GPU the named kernels are refused."""
    from whatif.api import estimate
    from whatif.errors import WhatifError

    def experts(**kw):
        r = estimate("openai/gpt-oss-120b", "dgx-h100", tp=8, gpus=8, batch=4, prompt=1024, output=64,
                     kernel_engine="vllm", **kw).to_dict()
        return {o["name"]: o["time_s"] for o in r["ops"]["decode"] if o["name"].startswith(("experts", "router"))}
    base, marlin = experts(), experts(moe_kernels="marlin")
    assert marlin["experts_gate_up"] != base["experts_gate_up"] and set(marlin) == set(base)
    assert "router" in base and not {"experts_act", "router_topk"} & set(base)
    from whatif.roofline.expert_fits import moe_fit_dtype
    op = replace(expert_op(4, "bf16"), fp4_weights=True, weight_only_kernel=True)
    assert moe_fit_dtype(op, H100, "vllm") == "w4a16"
    with pytest.raises(WhatifError, match="moe_kernels: 'marlin' runs on"):
        estimate("gpt-oss-120b", "mi300x", moe_kernels="marlin")
