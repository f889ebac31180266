"""An engine whose kernels launch with programmatic dependent launch (kernels.programmatic_launch: TensorRT-LLM under
TRTLLM_ENABLE_PDL=1, engine_profiles/versions/trtllm-pdl.yaml) pays no inter-kernel gap in a pass."""
from whatif.api import estimate
from whatif.specs.engines import load_engine


def _decode(engine: str):
    return estimate("openai/gpt-oss-120b", "dgx-b200", tp=2, batch=4, prompt=2048, output=2, kernel_engine=engine,
                    with_max_batch=False).estimate.decode


def test_the_pdl_profile_differs_from_trtllm_only_in_its_launch():
    pdl, base = load_engine("trtllm-pdl"), load_engine("trtllm")
    assert pdl.programmatic_launch and not base.programmatic_launch
    assert (pdl.max_num_batched_tokens, pdl.graph_sizes, pdl.cpu) == (base.max_num_batched_tokens, base.graph_sizes,
                                                                      base.cpu)


def test_a_pdl_decode_step_is_its_kernels_and_trtllms_adds_a_gap_a_kernel():
    pdl, base = _decode("trtllm-pdl"), _decode("trtllm")
    assert pdl.gpu_s == sum(t.total_s for t in pdl.op_times)   # no gap
    assert [t.total_s for t in pdl.op_times] == [t.total_s for t in base.op_times]   # the same kernels, same prices
    gaps = (base.gpu_s - pdl.gpu_s) / base.kernels
    assert abs(gaps - 1e-6) < 1e-9   # trtllm: efficiency_default.yaml's assumed 1 us a kernel
