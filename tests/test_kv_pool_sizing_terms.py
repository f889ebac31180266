"""Two sourced terms of an engine's KV pool: the memory total it sizes from (the CUDA runtime's, below nvidia-smi's)
and MLA's q_a / kv_a down-projections, which vLLM, SGLang and TensorRT-LLM keep whole on every TP rank."""
from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism
from whatif.roofline.engines import engine_spec
from whatif.roofline.estimate import Workload
from whatif.roofline.memory import layer_weight_bytes, plan_memory, replicated_mla_down_bytes
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.specs.hardware import _parse_gpu, load_component
from whatif.specs.profiles import HARDWARE_DIR, profile_index, read_yaml

GIB = 2 ** 30


def _setup(model: str, hardware: str, engine: str | None, tp: int = 4):
    sc = Scenario(model=model, hardware=hardware, kernel_engine=engine or "vllm", parallel=Parallelism(tp=tp),
                  workload=Workload(batch=1, prompt=1024, output=64))
    m, system, par, eff = sc.resolve()
    return pass_setup(m, system, par, sc.precision, eff, sc.utilization(),
                      engine_spec=sc.engine_spec() if engine else None)


@pytest.mark.parametrize("gpu, runtime_gib, smi_gib", [("b200", 178.35, 179.06), ("h100-sxm", 79.11, 79.65)])
def test_engines_size_from_the_cuda_runtime_total_not_nvidia_smi(gpu, runtime_gib, smi_gib):
    g = resolve_gpu(gpu)
    assert g.engine_capacity_bytes / GIB == pytest.approx(runtime_gib)
    assert g.hbm_capacity.value / GIB == pytest.approx(smi_gib, abs=0.01)
    assert g.runtime_capacity.provenance == "measured" and "runtime" in g.runtime_capacity.source


def test_the_plan_takes_the_runtime_total_only_with_an_engine():
    with_engine = plan_memory(_setup("llama-3-8b", "h100-sxm", "vllm", tp=1), 1, 1088, 1024)
    bare = plan_memory(_setup("llama-3-8b", "h100-sxm", None, tp=1), 1, 1088, 1024)
    assert with_engine.capacity_bytes == pytest.approx(79.11 * GIB)
    assert bare.capacity_bytes == pytest.approx(81559 * 2 ** 20)


def test_a_gpu_without_a_runtime_total_keeps_its_driver_total():
    g = resolve_gpu("h100-pcie")   # (a100-sxm-80gb until session 73 Q gave it a runtime total)
    assert g.runtime_capacity is None and g.engine_capacity_bytes == g.hbm_capacity.value


def test_a_runtime_total_above_the_driver_total_is_a_one_line_error():
    data = dict(read_yaml_gpu("h100-sxm"), runtime_capacity={"value": 90, "unit": "GiB", "provenance": "measured",
                                                             "source": "x"})
    with pytest.raises(WhatifError, match="runtime_capacity"):
        _parse_gpu(data, "h100-sxm")


def read_yaml_gpu(name: str) -> dict:
    return read_yaml(profile_index(HARDWARE_DIR)[name])


def resolve_gpu(name: str):
    return load_component(name, "gpu")


def test_deepseek_down_projections_whole_on_each_tp_rank():
    """61 MLA layers x 7,168 x (1,536 + 512 + 64) fp8 weights: +3/4 of them at TP4, +7/8 at TP8, none at TP1 or
    under DP attention (attention_tp 1), where the split already keeps them whole."""
    s = _setup("deepseek-v3", "b200", "trtllm", tp=8)
    width = s.precision.module_weight_bytes("attention") if s.precision.per_module else s.precision.weight_bytes
    full = 61 * 7168 * (1536 + 512 + 64) * width
    for tp, share in ((4, 3 / 4), (8, 7 / 8), (1, 0.0)):
        assert replicated_mla_down_bytes(s.model, Parallelism(tp=tp), s.precision, 0) == pytest.approx(full * share)
    assert replicated_mla_down_bytes(s.model, Parallelism(tp=8, attention_dp=8), s.precision, 0) == 0.0
    assert full / width * 7 / 8 / GIB == pytest.approx(0.75, abs=0.01)   # at fp8's 1 B a weight (session 70 N)


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_each_engine_adds_them_to_its_weights_and_a_gqa_model_is_unmoved(engine):
    assert engine_spec(engine).mla_down_replicated
    s = _setup("deepseek-v3", "b200", engine, tp=8)
    plan = plan_memory(s, 1, 1088, 1024)
    split = plan_memory(replace(s, engine_spec=replace(s.engine_spec, mla_down_replicated=False)), 1, 1088, 1024)
    added = replicated_mla_down_bytes(s.model, s.parallel, s.precision, 0)
    assert plan.weights_bytes - split.weights_bytes == pytest.approx(added)
    g = _setup("llama-3-8b", "h100-sxm", engine, tp=2)
    assert replicated_mla_down_bytes(g.model, g.parallel, g.precision, 0) == 0.0
    assert layer_weight_bytes(g.model, g.parallel, g.precision, 0) > 0
