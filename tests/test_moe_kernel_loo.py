"""validate/moe_kernel_loo: leave-one-GPU-out against donors of the held-out GPU's own kernel family (session 64 G)."""
import pytest

from whatif.validate.moe_kernel_loo import kernel_family, scored_family


@pytest.mark.parametrize("source, family", [
    ("vllm_unquantizedfusedmoe_flashinfer_trtllm_trtllmbf16experts", "trtllm-gen"),
    ("sglang_flashinfer_trtllm_moe", "trtllm-gen"),
    ("vllm_unquantizedfusedmoe_triton_tritonexperts", "triton"),
    ("sglang_fused_moe_triton", "triton"),
    ("vllm_fused_moe", "triton"),
    ("vllm_unquantizedfusedmoe_flashinfer_cutlass_flashinferexperts", "cutlass"),
    ("moe_torch_flow", "cutlass"), ("moe_torch_flow_cutlass", "cutlass"),
    ("something_new", "something_new")])
def test_kernel_family_of_the_corpus_kernels(source, family):
    assert kernel_family(source) == family


def test_a_gpu_is_scored_against_its_own_kernel_where_another_gpu_runs_it():
    pool = {("a100_sxm", "triton"): 0, ("h100_sxm", "triton"): 0, ("l40s", "triton"): 0,
            ("b200_sxm", "trtllm-gen"): 0, ("b200_sxm", "triton"): 0}
    assert scored_family(pool, "l40s", "triton") == ("triton", ["a100_sxm", "b200_sxm", "h100_sxm"])
    # B200's block kernel runs nowhere else: its Triton rows are scored against the Triton donors
    assert scored_family(pool, "b200_sxm", "trtllm-gen") == ("triton", ["a100_sxm", "h100_sxm", "l40s"])


def test_no_donor_of_any_kernel_the_gpu_has_means_no_leave_one_out_figure():
    pool = {("a100_sxm", "triton"): 0, ("h100_sxm", "triton"): 0, ("b200_sxm", "trtllm-gen"): 0,
            ("b200_sxm", "cutlass"): 0}
    assert scored_family(pool, "b200_sxm", "trtllm-gen") == ("trtllm-gen", [])
