"""Block-scaled fp8 experts are priced by the fused-MoE kernel the engine runs for them (expert_fits.expert_fit_engine):
vLLM on Blackwell runs 128x128 block-FP8 experts through FlashInfer's trtllm-gen DeepSeek-FP8 MoE, whose corpus rows
are SGLang's (sglang/blackwell/fp8), not the ModelOpt per-tensor kernel its own fp8 fit measured."""
from dataclasses import replace

from whatif.roofline.expert_fits import expert_fit_engine
from whatif.roofline.kernel_timing import op_seconds
from whatif.roofline.ops import gemm
from whatif.specs.hardware import load_system
from whatif.specs.op_kinds import OpRole

B200, H100 = load_system("b200").gpu, load_system("h100-sxm").gpu


def expert_op(block_scaled: bool, rows_per_expert: int = 230, experts: int = 256):
    base = gemm("experts_gate_up", rows_per_expert * experts, 768, 3072, 1, 1, "fp8", role=OpRole.EXPERT_UP)
    return replace(base, shape=replace(base.shape, groups=float(experts)), block_scaled=block_scaled)


def test_vllm_block_fp8_experts_on_blackwell_take_the_trtllm_gen_block_kernel_fit():
    assert expert_fit_engine(expert_op(True), B200, "vllm") == "sglang"
    assert expert_fit_engine(expert_op(False), B200, "vllm") == "vllm"      # per-tensor: its own kernel's fit
    assert expert_fit_engine(expert_op(True), H100, "vllm") == "vllm"       # no such rule on Hopper
    assert expert_fit_engine(expert_op(True), B200, "sglang") == "sglang"


def test_the_block_kernel_prices_block_fp8_experts_slower_than_the_per_tensor_one():
    # the corpus's trtllm-gen block-FP8 MoE runs at about half the per-tensor kernel's fitted compute efficiency
    block, tensor = (op_seconds(expert_op(b), B200, "vllm")[0] for b in (True, False))
    assert 1.5 < block / tensor < 3.0


def test_block_scale_ops_mark_the_expert_gemms_of_a_block_fp8_checkpoint():
    import whatif.api as api
    est = api.estimate("MiniMaxAI/MiniMax-M2.5", "dgx-b200", tp=4, gpus=4, batch=1, prompt=1024, output=2).estimate
    ops = {t.op.name: t.op for t in est.prefill[0][0].op_times}
    assert ops["experts_gate_up"].block_scaled and ops["experts_down"].block_scaled and ops["qkv_proj"].block_scaled


def test_vllm_block_fp8_experts_on_hopper_take_the_cutlass_fit_under_expert_parallelism_only():
    # vLLM's fp8 MoE oracle: "On Hopper for Block Fp8, prefer Triton for TP and FI CUTLASS for EP" (vllm#34249)
    ep = replace(expert_op(True), expert_parallel=True)
    assert expert_fit_engine(ep, H100, "vllm") == "flashinfer_cutlass"
    assert expert_fit_engine(expert_op(True), H100, "vllm") == "vllm"       # TP only: Triton, per-class
    assert expert_fit_engine(replace(expert_op(False), expert_parallel=True), H100, "vllm") == "vllm"
    assert expert_fit_engine(ep, H100, "trtllm") == "trtllm"                # TensorRT-LLM's own stay per-class


def test_expert_parallel_layouts_mark_their_expert_gemms():
    import whatif.api as api
    for ep in (1, 4):
        est = api.estimate("MiniMaxAI/MiniMax-M2.5", "dgx-h100", tp=4, ep=ep, gpus=4, batch=8, prompt=1024,
                           output=2).estimate
        ops = {t.op.name: t.op for t in est.prefill[0][0].op_times}
        assert ops["experts_gate_up"].expert_parallel == (ep > 1) and not ops["qkv_proj"].expert_parallel
