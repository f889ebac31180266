"""The engine spec's custom all-reduce limit reaches the collective timing: an engine version built without one
runs NCCL for every all-reduce, and TensorRT-LLM's workspace caps its kernel by TP size."""
import pytest

from whatif.roofline.engines import engine_spec
from whatif.scenario import Scenario
from whatif.specs.hardware import load_system


def test_trtllm_custom_allreduce_workspace_shrinks_above_tp2():
    # tensorrt_llm/plugin/plugin.py max_workspace_size_auto: 16_000_000 B at tp <= 2, 8_000_000 above
    trt = engine_spec("trtllm")
    assert [trt.custom_allreduce_cap(tp) for tp in (1, 2, 4, 8)] == [16e6, 16e6, 8e6, 8e6]
    assert engine_spec("trtllm-0.6").custom_allreduce_cap(4) == 0   # built without --use_custom_all_reduce
    assert engine_spec("vllm").custom_allreduce_cap(8) == engine_spec("vllm").custom_allreduce_max_bytes


def test_scenario_carries_the_engine_cap_to_the_collective_timing():
    sc = Scenario(model="llama-2-70b", hardware="h100-sxm", gpus=4, kernel_engine="trtllm-0.6")
    assert sc.resolve()[3].custom_allreduce_max_bytes == 0
    sc = Scenario(model="llama-2-70b", hardware="h100-sxm", gpus=4, kernel_engine="trtllm")
    assert sc.resolve()[3].custom_allreduce_max_bytes == 8e6


def test_engine_without_custom_allreduce_pays_nccl_for_small_messages():
    from whatif.roofline import collective_timing
    link = load_system("h100-sxm", 4).gpu_link
    small = 2 * 2**20   # a TP4 decode all-reduce: below every fitted custom-kernel threshold
    custom = collective_timing.collective_seconds("all_reduce", small, 4, link, "trtllm")
    nccl_only = collective_timing.collective_seconds("all_reduce", small, 4, link, "trtllm", custom_max=0)
    plain = collective_timing.collective_seconds("all_reduce", small, 4, link, "trtllm", cuda_graphs=False)
    assert nccl_only == pytest.approx(plain) and nccl_only > custom
    big = 64 * 2**20    # above every threshold: NCCL either way
    assert collective_timing.collective_seconds("all_reduce", big, 4, link, "trtllm", custom_max=0) == pytest.approx(
        collective_timing.collective_seconds("all_reduce", big, 4, link, "trtllm"))
