"""A deployment's fused-MoE kernels priced by the rows that timed them (roofline/moe_kernels.py): TensorRT-LLM's
TRTLLM MoE backend runs the TRTLLM-Gen kernels SGLang's flashinfer_trtllm rows measured on B200; off by default."""
import json
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.efficiency import load_efficiency
from whatif.roofline.kernel_timing import covers, fit_engine
from whatif.roofline.kernel_models.moe import moe_fit_source
from whatif.roofline.moe_kernels import moe_fit_engine
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.scenario import Scenario
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole

B200 = load_system("b200").gpu


def expert_op(rows_per_expert: int, dtype: str, experts: int = 256):
    base = gemm("experts", rows_per_expert * experts, 512, 7168, 1, 1, dtype, role=OpRole.EXPERT_UP)
    return replace(base, shape=replace(base.shape, groups=float(experts)))


def test_names_and_architectures():
    assert moe_fit_engine(None, "blackwell") is None
    assert moe_fit_engine("trtllm-gen", "blackwell") == "sglang"
    with pytest.raises(WhatifError, match="valid: marlin, triton, trtllm-gen"):
        moe_fit_engine("deepgemm", "blackwell")
    with pytest.raises(WhatifError, match="blackwell GPUs only"):
        moe_fit_engine("trtllm-gen", "hopper")
    assert moe_fit_engine("marlin", "hopper") is None   # the deployment's own engine's (weight-only) fit


@pytest.mark.parametrize("dtype", ("fp8", "fp4"))
def test_trtllm_experts_take_the_kernels_fit_only_when_named(dtype):
    eff = load_efficiency("default", B200, engine="trtllm")
    op = expert_op(8, dtype)   # (decode-size: past SMALL_M rows the dense GEMM fit prices them, test_dense_fit_experts)
    assert not covers(op, B200, "trtllm")   # no TensorRT-LLM FP8/NVFP4 MoE rows on B200: the per-class model
    own = time_op(op, B200, eff, None)
    named = replace(eff, moe_engine="sglang")
    assert fit_engine(op, named) == "sglang" and fit_engine(op, eff) == "trtllm"
    priced = time_op(op, B200, named, None)
    assert priced.time_s == time_op(op, B200, load_efficiency("default", B200, engine="sglang"), None).time_s
    assert priced.time_s != own.time_s
    dense = gemm("o_proj", 1024, 7168, 2048, 1, 1, dtype)   # a dense GEMM keeps the engine's own fit
    assert time_op(dense, B200, named, None).time_s == time_op(dense, B200, eff, None).time_s


def test_scenario_setting_defaults_off_and_checks_the_gpu():
    base = dict(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", kernel_engine="trtllm")
    assert Scenario(**base).resolved().efficiency.moe_engine is None
    assert Scenario(**base, moe_kernels="trtllm-gen").resolved().efficiency.moe_engine == "sglang"
    with pytest.raises(WhatifError, match="not hopper"):
        Scenario(**{**base, "hardware": "dgx-h100"}, moe_kernels="trtllm-gen").resolved()


def test_triton_experts_take_the_triton_block_fp8_fit_on_hopper_and_blackwell_only():
    """moe_kernels triton (session 72 B2): vLLM's Triton fused MoE over 128x128 block-FP8 experts, priced by the fit
    of the corpus's Triton block-FP8 rows; 16-bit experts (no such fit) keep the engine's own pricing."""
    assert moe_fit_engine("triton", "blackwell") == moe_fit_engine("triton", "hopper") == "fused_moe_triton"
    with pytest.raises(WhatifError, match="not ampere"):
        moe_fit_engine("triton", "ampere")
    eff = load_efficiency("default", B200, engine="vllm")
    named = replace(eff, moe_engine="fused_moe_triton")
    block = replace(expert_op(64, "fp8"), block_scaled=True)
    assert fit_engine(block, named) == "fused_moe_triton"
    triton = time_op(block, B200, named, None).time_s
    assert moe_fit_source("blackwell", "fp8", "fused_moe_triton") == "sglang_fused_moe_triton"
    assert triton != time_op(block, B200, eff, None).time_s   # (vLLM's default: FlashInfer's TRTLLM-Gen fit)
    bf16 = expert_op(64, "bf16")
    assert time_op(bf16, B200, named, None).time_s == time_op(bf16, B200, eff, None).time_s
    base = dict(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", kernel_engine="vllm")
    assert Scenario(**base, moe_kernels="triton").resolved().efficiency.moe_engine == "fused_moe_triton"


def test_the_fused_layers_routing_and_activation_are_not_priced_twice():
    """The TRTLLM-Gen layer does top-k routing, SwiGLU and its input's fp8 quantization itself; the router GEMM (the
    model's gate) stays; TensorRT-LLM's own B200 block-fp8 experts (no fused fit: the per-class model, one kernel an
    op) keep every op; and the simulator's step price keeps equal to the forward pass's (step_price/token_ops.py)."""
    from whatif.roofline.config import ForwardBatch, Precision
    from whatif.roofline.forward_pass import engine_step, time_pass
    from whatif.roofline.step_price import StepPricer
    base = dict(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", kernel_engine="trtllm", gpus=8,
                precision=Precision.of_scheme("fp8-block"))
    batch = ForwardBatch(((1024, 0, 1),), 1)
    for kernels in (None, "trtllm-gen"):
        setup = Scenario(**base, moe_kernels=kernels).resolved().pass_setup()
        roles = {t.op.name for t in time_pass(setup, batch, False).op_times}
        fused = ("router_topk", "experts_act", "experts_gate_up_group_quant", "experts_down_group_quant")
        assert all(name in roles for name in fused) == (kernels is None)
        assert not any(name in roles for name in fused) == (kernels is not None)
        assert "shared_expert_gate_up_group_quant" in roles   # (the shared expert is a dense GEMM: its own kernels)
        assert "router" in roles
        for groups in (((1024, 0, 1),), ((1, 900, 8), (300, 0, 1)), ((1, 900, 8),)):
            step = ForwardBatch(groups)
            assert StepPricer(setup).seconds(step, True) == pytest.approx(engine_step(setup, step, True)[1],
                                                                           rel=1e-12)


def test_the_cli_flag_names_the_kernels_prices_them_and_says_so(capsys):
    from whatif.cli import main
    argv = ["estimate", "--model", "deepseek-v3", "--hardware", "dgx-b200", "--tp", "8", "--dtype", "fp8",
            "--engine", "trtllm", "--no-ops", "--json"]

    def ttft(*extra):
        assert main([*argv, *extra]) == 0
        out = json.loads(capsys.readouterr().out)
        return out["ttft_s"], out["efficiency"]["provenance"]
    base, prov = ttft()
    named, named_prov = ttft("--moe-kernels", "trtllm-gen")
    assert named > base and "trtllm-gen kernels" in named_prov and "trtllm-gen" not in prov
    assert main([*argv, "--moe-kernels", "deepgemm"]) == 2   # one line naming the flag and the valid kernels
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--moe-kernels" in err and "trtllm-gen" in err


def test_gpt_oss_b200_experts_take_the_mxfp4_mxfp8_fit_at_the_fp8_peak():
    """trtllm-gen-mxfp8 (session 61): gpt-oss's B200 experts (the nvfp4 stand-in's fp4 ops) are priced by the fit of
    the MXFP4 x MXFP8 TRTLLM-Gen rows, whose efficiencies are fractions of the fp8 peak and at most 1; Blackwell
    only; the plain trtllm-gen entry and other deployments keep their fits."""
    from whatif.roofline.kernel_models.moe import has_moe_fit, moe_params
    from whatif.roofline.kernel_timing import expert_gemm_seconds
    assert moe_fit_engine("trtllm-gen-mxfp8", "blackwell") == "trtllm_gen_mxfp8"
    with pytest.raises(WhatifError, match="blackwell GPUs only"):
        moe_fit_engine("trtllm-gen-mxfp8", "hopper")
    assert has_moe_fit("fp4", "blackwell", "trtllm_gen_mxfp8") and not has_moe_fit("fp4", "hopper", "trtllm_gen_mxfp8")
    for regime in ("small", "mid", "large"):
        p = moe_params("blackwell", "fp4", "trtllm_gen_mxfp8", regime)
        assert 0.0 < p.compute_eff <= 1.0 and 0.0 < p.memory_eff <= 1.0
    base = dict(model="openai/gpt-oss-120b", hardware="dgx-b200", kernel_engine="trtllm")
    eff = Scenario(**base, moe_kernels="trtllm-gen-mxfp8").resolved().efficiency
    assert eff.moe_engine == "trtllm_gen_mxfp8"
    op = expert_op(256, "fp4", experts=128)   # a prefill-size grouped GEMM: compute-bound
    assert fit_engine(op, eff) == "trtllm_gen_mxfp8" and covers(op, B200, "trtllm_gen_mxfp8")
    _, t_c, _, _ = expert_gemm_seconds(op, B200, engine="trtllm_gen_mxfp8")
    p = moe_params("blackwell", "fp4", "trtllm_gen_mxfp8", "large")
    padded = 2.0 * op.shape.m * op.shape.n * op.shape.k   # (256 rows per expert: already whole M tiles)
    assert t_c == pytest.approx(padded / (B200.peak_flops("fp8") * p.compute_eff), rel=1e-9)   # the fp8 peak
    stand_in = replace(eff, moe_engine="sglang")   # the nvfp4 stand-in the entry replaces prices it lower
    assert time_op(op, B200, eff, None).time_s > time_op(op, B200, stand_in, None).time_s


def test_trtllm_gen_mxfp4_experts_run_their_weights_padded_to_256():
    """Session 62: the engines lay MXFP4 experts out for the TRTLLM-Gen MoE padded to multiples of 256 (vLLM
    mxfp4.py round_up(intermediate_size_per_partition, 256), round_up(hidden_size, 256)): gpt-oss's TP8 slice (360)
    runs as 512 and its 2880 hidden size as 3072, each half of the gated gate+up GEMM padded; other fits unpadded."""
    from whatif.roofline.expert_fits import padded_nk
    from whatif.roofline.kernel_timing import expert_gemm_seconds
    up = gemm("experts_gate_up", 64, 2 * 360, 2880, 1, 1, "fp4", role=OpRole.EXPERT_UP)
    down = gemm("experts_down", 64, 2880, 360, 1, 1, "fp4", role=OpRole.EXPERT_DOWN)
    assert padded_nk(up, "trtllm_gen_mxfp8") == (1024.0, 3072.0)
    assert padded_nk(down, "trtllm_gen_mxfp8") == (3072.0, 512.0)
    assert padded_nk(up, "sglang") == (720.0, 2880.0)   # the nvfp4 stand-in's fit: the op's own shape
    op = replace(up, shape=replace(up.shape, groups=4.0))
    aligned = replace(op, shape=replace(op.shape, n=1024.0, k=3072.0))   # the same GEMM, already padded
    _, t_c, _, _ = expert_gemm_seconds(op, B200, engine="trtllm_gen_mxfp8")
    _, t_c_aligned, _, _ = expert_gemm_seconds(aligned, B200, engine="trtllm_gen_mxfp8")
    assert t_c == pytest.approx(t_c_aligned, rel=1e-12) and t_c_aligned > 0


def test_marlin_mxfp4_experts_run_hidden_padded_to_256_and_the_slice_to_128():
    """Session 65: vLLM's Mxfp4MoEMethod under Mxfp4Backend.MARLIN pads hidden to 256 and the per-GPU intermediate to
    128 (mxfp4.py create_weights): gpt-oss's TP8 slice (360) runs as 384 and 2880 as 3072; INT4 experts (the
    weight-only fit's own rows) and MXFP4 ones off Marlin keep their shape."""
    from whatif.roofline.expert_fits import padded_nk
    up = gemm("experts_gate_up", 64, 2 * 360, 2880, 1, 1, "bf16", role=OpRole.EXPERT_UP)
    down = gemm("experts_down", 64, 2880, 360, 1, 1, "bf16", role=OpRole.EXPERT_DOWN)
    marlin = {"fp4_weights": True, "weight_only_kernel": True}
    assert padded_nk(replace(up, **marlin), "vllm", "w4a16") == (768.0, 3072.0)
    assert padded_nk(replace(down, **marlin), "vllm", "w4a16") == (3072.0, 384.0)
    assert padded_nk(replace(up, int_weights=True), "vllm", "w4a16") == (720.0, 2880.0)
    assert padded_nk(replace(up, fp4_weights=True), "vllm", "bf16") == (720.0, 2880.0)


def test_every_fused_moe_fit_times_the_activation_and_its_collectors_top_k_inside_the_layer():
    """Sessions 65 B, M: where a fused-MoE fit prices the experts, the graph's ops for what the call its rows time does
    itself go: the activation (inside every fused MoE) and the top-k where the collector routed inside the call (vLLM
    0.24's FusedMoE module, the H100 weight-only and bf16 fits); vLLM 0.14's A100 rows timed fused_experts on
    precomputed top-k ids, so there the top-k stays; without a fused fit (L40S has no vLLM fp8 one) both stay."""
    from whatif.roofline.moe_kernels import fused_layer_ops
    h100, a100, l40s = (load_system(s).gpu for s in ("dgx-h100", "dgx-a100-80gb", "l40s"))
    up = replace(gemm("experts_gate_up", 4, 768, 7168, 1, 1, "bf16", role=OpRole.EXPERT_UP), int_weights=True)
    up = replace(up, shape=replace(up.shape, groups=4.0))
    act = replace(gemm("experts_act", 4, 1, 1, 1, 1, "bf16"), role=OpRole.EXPERT_ACT)
    topk = replace(gemm("router_topk", 4, 1, 1, 1, 1, "bf16"), role=OpRole.ROUTER_TOPK)
    router = replace(gemm("router", 4, 256, 7168, 1, 1, "bf16"), role=OpRole.ROUTER)
    def names(ops, gpu):
        return [o.name for o in fused_layer_ops(ops, load_efficiency("default", gpu, None, "vllm"), gpu)]
    plain = replace(up, int_weights=False)   # the 16-bit fit
    assert names([router, topk, up, act], h100) == ["router", "experts_gate_up"]
    assert names([router, topk, plain, act], h100) == ["router", "experts_gate_up"]
    assert names([router, topk, plain, act], a100) == ["router", "router_topk", "experts_gate_up"]
    fp8 = replace(plain, dtype="fp8")
    assert names([router, topk, fp8, act], l40s) == ["router", "router_topk", "experts_gate_up", "experts_act"]
    assert len(fused_layer_ops([topk, up, act], load_efficiency("default", h100, None, "vllm"))) == 3   # (no GPU)


def test_sglang_block_fp8_experts_run_a_narrow_slice_as_128():
    """Session 62 P: SGLang's B200 block-FP8 MoE rows stop falling at 128 intermediate columns a GPU (aiconfigurator's
    moe table: 7168 x 2048 at TP16 and TP32 within 1%), so its fit pads the slice to 128; its bf16 fit does not, and
    the slice of a TP32 DeepSeek expert (64) prices as TP16's (128)."""
    from whatif.roofline.expert_fits import padded_nk
    from whatif.roofline.kernel_timing import expert_gemm_seconds
    up = gemm("experts_gate_up", 64, 2 * 64, 7168, 1, 1, "fp8", role=OpRole.EXPERT_UP)
    down = gemm("experts_down", 64, 7168, 64, 1, 1, "fp8", role=OpRole.EXPERT_DOWN)
    assert padded_nk(up, "sglang") == (256.0, 7168.0)
    assert padded_nk(down, "sglang") == (7168.0, 128.0)
    assert padded_nk(replace(up, dtype="bf16"), "sglang") == (128.0, 7168.0)   # the bf16 (Triton) fit: unpadded
    op = replace(down, shape=replace(down.shape, m=512.0, groups=4.0))
    wide = replace(op, shape=replace(op.shape, k=128.0))   # the TP16 slice
    assert expert_gemm_seconds(op, B200, engine="sglang")[1] == pytest.approx(
        expert_gemm_seconds(wide, B200, engine="sglang")[1], rel=1e-12)


def test_triton_block_fp8_experts_pad_to_the_releases_tile_not_the_fit_rows():
    """The Triton kernel's M tile is its engine's default config (kernel_models/triton_moe_tile.py): the fit's SGLang
    rows ran BLOCK_SIZE_M 64 at every M and are fitted padded to it; vLLM 0.17.0 (vllm#34846) runs 16 at <= 64 tokens,
    64 above, so a decode step's experts pad to 16 rows and a prefill's to 64 whatever their rows per expert."""
    from whatif.roofline.kernel_models import moe
    from whatif.roofline.kernel_models.triton_moe_tile import fit_rows_block_m, triton_block_m
    from whatif.roofline.kernel_timing import padded_expert_rows
    from whatif.roofline.moe_kernels import fused_layer_ops
    assert [triton_block_m("vllm", t) for t in (1, 64, 65, 8192)] == [16, 16, 64, 64]
    assert triton_block_m("sglang", 1) == 64 and fit_rows_block_m("sglang_fused_moe_triton", "fp8_block") == 64
    assert fit_rows_block_m("sglang_fused_moe_triton", "bfloat16") == 0   # (its bf16 rows: the tuned tile_m)
    # the fit rows: 8 tokens x top 8 over 128 experts, one row each, padded to 64 where the tuned rule pads to 16
    assert moe.routing_stats(8, 8, 128, 1, "balanced", tile=64)[1] == 4 * moe.routing_stats(8, 8, 128, 1, "balanced")[1]
    assert moe.grid_m_tiles(1024, 8, 256, 64) < moe.grid_m_tiles(1024, 8, 256)   # fewer, fuller M tiles
    eff = replace(load_efficiency("default", B200, engine="vllm"), moe_engine="fused_moe_triton")
    for tokens, rows, tile in ((32, 1, 16), (256, 8, 64)):
        op = replace(expert_op(rows, "fp8", 128), block_scaled=True)
        op = replace(op, shape=replace(op.shape, tokens=float(tokens), topk=8.0, experts=128.0))
        (priced,) = fused_layer_ops([op], eff)
        assert priced.shape.block_m == tile and padded_expert_rows(priced) == 128 * tile
        assert priced.shape.grid_m == moe.grid_m_tiles(tokens, 8, 128, tile)   # (256 slots at 32 tokens: 128 + 8)
    (bf16,) = fused_layer_ops([replace(expert_op(1, "bf16", 128), shape=replace(expert_op(1, "bf16", 128).shape,
                                                                              tokens=32.0))], eff)
    assert bf16.shape.block_m == 0.0   # (16-bit experts keep the engine's own pricing)


def test_the_fit_rows_run_sglangs_shipped_tuned_config_where_one_names_their_shape_else_the_default():
    """SGLang 0.5.14 ships tuned block-FP8 configs for a few (GPU, E, N) shapes of the fit's table
    (kernel_models/sglang_moe_configs.py): its collector runs the file's config at the M key nearest the tokens,
    else get_default_config's 64 x 128 (session 73 E)."""
    from types import SimpleNamespace
    from whatif.roofline.kernel_models.moe import TILE_N, launched_tiles
    from whatif.roofline.kernel_models.sglang_moe_configs import DEFAULT_TILE, sglang_fit_row_tile
    from whatif.validate.moe_fit import fit_row_tile
    assert DEFAULT_TILE == (64, 128)
    assert sglang_fit_row_tile("b200_sxm", 256, 768, 8) == DEFAULT_TILE           # MiniMax TP2: no B200 file
    assert sglang_fit_row_tile("b200_sxm", 128, 384, 40) == (16, 256)             # 32 and 48 equally near: 32's
    assert sglang_fit_row_tile("b200_sxm", 128, 384, 8192) == (64, 128)           # beyond the last key: 4096's
    assert sglang_fit_row_tile("h100_sxm", 256, 384, 1) == (16, 64)
    assert sglang_fit_row_tile("a100_sxm", 256, 384, 1) == DEFAULT_TILE           # (no such device in the table)
    row = SimpleNamespace(kernel_source="sglang_fused_moe_triton", num_experts=256, moe_ep_size=2, inter_size=1536,
                          moe_tp_size=4, num_tokens=16)
    assert fit_row_tile(row, "b200_sxm", "fp8_block") == (16, 128)                # E 128, N 384 on the GPU
    assert fit_row_tile(row, "b200_sxm", "bfloat16") == (0, TILE_N)               # (its bf16 rows: tile_m's)
    assert launched_tiles(16, 8, 256, 3072, 384, tile=16, tile_n=256) < launched_tiles(16, 8, 256, 3072, 384, tile=16)
