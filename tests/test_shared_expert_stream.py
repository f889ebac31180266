"""TensorRT-LLM's DeepSeek MoE runs its shared expert on a second CUDA stream beside the routed experts, in CUDA-graph
passes only (engine profile `kernels.shared_expert_stream`, roofline/shared_expert_stream.py): a decode step costs
less by what the shorter chain hides, an eager prefill nothing, and the overlap never goes below the pair's HBM
traffic back to back."""
from dataclasses import replace

import pytest

from whatif import api
from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.roofline.shared_expert_stream import hidden_shared_s, runs_shared_expert_stream
from whatif.roofline.timing import OpTime
from whatif.specs.engines import VERSION_DIR, engine_from_mapping
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole
from whatif.specs.profiles import read_yaml


class _Op:
    def __init__(self, role, count=58):
        self.role, self.count = role, count


def op_time(role, time_s, memory_s=0.0, compute_s=0.0):
    return OpTime(op=_Op(role), time_s=time_s, compute_s=compute_s, memory_s=memory_s, overhead_s=0.0, bound="memory")


def test_the_shorter_chain_is_hidden_up_to_the_pairs_traffic():
    routed = [op_time(OpRole.ROUTER, 5e-6), op_time(OpRole.EXPERT_UP, 20e-6), op_time(OpRole.EXPERT_DOWN, 15e-6)]
    shared = [op_time(OpRole.SHARED_EXPERT_UP, 10e-6), op_time(OpRole.SHARED_EXPERT_DOWN, 7e-6)]
    assert hidden_shared_s(routed + shared, 0.0) == pytest.approx(17e-6 * 58)
    assert hidden_shared_s(routed + shared, 1e-6) == pytest.approx(19e-6 * 58)   # its kernels' gaps hide too
    assert hidden_shared_s(routed, 0.0) == 0.0                                     # no shared expert: nothing
    # latency-bound at small batch, bandwidth-bound at large: HBM traffic of both back to back bounds the overlap
    busy = [op_time(OpRole.EXPERT_UP, 40e-6, memory_s=38e-6), op_time(OpRole.SHARED_EXPERT_UP, 20e-6, memory_s=18e-6)]
    assert hidden_shared_s(busy, 0.0) == pytest.approx((60e-6 - 56e-6) * 58)


def test_only_graph_passes_of_the_listed_families_overlap():
    trt, vllm = engine_spec("trtllm"), engine_spec("vllm")
    deepseek, llama = load_model("deepseek-ai/DeepSeek-R1"), load_model("llama-3.1-70b")
    assert "deepseek_v3" in trt.shared_expert_stream and not vllm.shared_expert_stream
    assert runs_shared_expert_stream(trt, deepseek, True)
    assert not runs_shared_expert_stream(trt, deepseek, False)     # eager prefill: one stream
    assert not runs_shared_expert_stream(vllm, deepseek, True)
    assert not runs_shared_expert_stream(trt, llama, True)          # dense: no shared expert


def _estimate(**kw):
    return api.estimate(model="deepseek-ai/DeepSeek-R1", hardware="dgx-b200", kernel_engine="trtllm", tp=8,
                        quantization="fp8", kv_dtype="fp8", batch=4, prompt=1024, output=256, **kw)


def test_deepseek_decode_on_trtllm_is_faster_by_the_hidden_shared_expert(monkeypatch):
    on = _estimate()
    from whatif.roofline import forward_pass
    monkeypatch.setattr(forward_pass, "runs_shared_expert_stream", lambda *a: False)
    off = _estimate()
    assert on.tpot_s < off.tpot_s - 0.5e-3      # ~18 us of shared expert a layer, 58 MoE layers
    assert on.ttft_s == pytest.approx(off.ttft_s)   # the prefill runs eagerly: no second stream


def test_a_bad_shared_expert_stream_names_the_field():
    data = read_yaml(VERSION_DIR.parent / "trtllm.yaml")
    data["kernels"]["shared_expert_stream"] = {**data["kernels"]["shared_expert_stream"], "value": "deepseek_v3"}
    with pytest.raises(WhatifError, match="shared_expert_stream: expected a non-empty list of model family names"):
        engine_from_mapping(data, "bad.yaml")
    assert replace(engine_spec("trtllm"), shared_expert_stream=()).shared_expert_stream == ()


def test_sglang_runs_deepseeks_shared_expert_on_its_alt_stream():
    """SGLang 0.5's DeepseekV2MoE.forward_normal_dual_stream (no fused shared expert under flashinfer_trtllm or EP, no
    all-to-all backend): the shared expert beside the routed experts, priced in graph passes; the 0.5 profile too."""
    deepseek = load_model("deepseek-ai/DeepSeek-R1")
    for name in ("sglang", "sglang-0.5"):
        assert runs_shared_expert_stream(engine_spec(name), deepseek, True)
        assert not runs_shared_expert_stream(engine_spec(name), deepseek, False)
