"""The host time of an eager pass in the Python engines (engine kernels.eager_launch_s): SGLang and vLLM V0 run
prefill eagerly, one Python-dispatched op per layer kernel, at the per-op host time the corpus measures
(benchmarks/eager_host_cost.py). A deep model's short prefill then waits on the host; a shallow one does not."""
import json
from pathlib import Path

import pandas as pd
import pytest

from whatif.cli import main
from whatif.errors import WhatifError
from whatif.roofline.config import Parallelism
from whatif.roofline.engines import engine_spec
from whatif.roofline.estimate import Workload
from whatif.scenario import Scenario
from whatif.specs.engines import load_engine
from tests.benchmark_module import load_benchmark

eager_host_cost = load_benchmark("eager_host_cost")


def prefill(model: str, hardware: str, tp: int, engine: str, launch_us: float | None = None):
    sc = Scenario(model=model, hardware=hardware, parallel=Parallelism(tp=tp), kernel_engine=engine,
                  workload=Workload(batch=1, prompt=225, output=2), launch_us=launch_us)
    (p, _), = sc.run().prefill
    return p


@pytest.mark.parametrize("name", ["sglang", "sglang-0.3", "vllm-0.2", "vllm-0.6"])
def test_python_engines_with_eager_prefill_charge_a_measured_host_time_per_op(name):
    e = engine_spec(name)
    assert 10e-6 < e.eager_launch_s < 100e-6
    assert e.sources["kernels.eager_launch_s"].startswith("measured:") and not e.graph_prefill
    assert f"eager kernels {e.eager_launch_s * 1e6:.3g} us each on the host (measured)" in e.summary()
    assert e.to_dict()["eager_launch_s"] == e.eager_launch_s


@pytest.mark.parametrize("name, ampere_us", [("sglang-0.3", 41.4), ("vllm-0.6", 44.7)])
def test_the_host_time_is_the_one_measured_on_that_gpu_generations_hosts(name, ampere_us, tmp_path):
    """An A100 scenario takes the A100 hosts' figure, a B200 one the B200 hosts'; H100 and H200 (and a generation
    the corpus has no clean figure for, Ada) the H100 hosts'; --launch-us still overrides it."""
    h100 = engine_spec(name).eager_launch_s
    def host_us(hardware, launch_us=None):
        sc = Scenario(model="llama-3.1-8b", hardware=hardware, kernel_engine=name, launch_us=launch_us)
        return sc.resolve()[1].gpu.launch_overhead.value * 1e6
    assert host_us("a100-sxm-80gb") == pytest.approx(ampere_us)
    assert host_us("h100-sxm") == host_us("h200-sxm") == host_us("l40s") == pytest.approx(h100 * 1e6)
    assert host_us("b200") < host_us("h100-sxm") < host_us("a100-sxm-80gb")
    assert host_us("a100-sxm-80gb", launch_us=7.0) == pytest.approx(7.0)
    a100 = Scenario(model="llama-3.1-8b", hardware="a100-sxm-80gb", kernel_engine=name).engine_spec()
    assert "the ampere GPUs' hosts" in a100.sources["kernels.eager_launch_s"]
    assert f"eager kernels {ampere_us:.3g} us each on the host (measured)" in a100.summary()
    bad = tmp_path / "bad.yaml"
    versions = Path(__file__).resolve().parents[1] / "whatif" / "engine_profiles" / "versions"
    text = (versions / f"{name}.yaml").read_text()
    bad.write_text(text.replace("{ampere:", "{amper:"))
    with pytest.raises(WhatifError, match="eager_launch_by_arch: 'amper' is not valid; valid: turing"):
        load_engine(str(bad))


def test_the_cpp_runtime_and_piecewise_graphed_vllm_keep_the_gpus_launch_cost():
    assert engine_spec("trtllm-engine").eager_launch_s is None and engine_spec("vllm").eager_launch_s is None
    assert "eager kernels" not in engine_spec("vllm").summary()


def test_tensorrt_llms_pytorch_flow_takes_the_python_engines_host_time_assumed():
    """TensorRT-LLM 1.x's PyTorch flow runs context and mixed steps eagerly from Python modules: it takes vLLM's
    measured per-op host time (the lower of the two Python engines measured), marked assumed (its own is not in
    the corpus), per GPU generation's hosts alike; its C++ TensorRT-engine runtime keeps the GPU's launch cost."""
    trt, vllm = engine_spec("trtllm"), engine_spec("vllm-0.6")
    assert trt.eager_launch_s == vllm.eager_launch_s < engine_spec("sglang").eager_launch_s
    assert dict(trt.eager_launch_by_arch) == dict(vllm.eager_launch_by_arch)
    assert trt.sources["kernels.eager_launch_s"].startswith("assumed:") and not trt.graph_prefill
    assert "eager kernels 22 us each on the host (assumed)" in trt.summary()
    deep = prefill("llama-3.1-70b", "h100-sxm", 4, "trtllm")
    assert deep.launch_s == pytest.approx(deep.kernels * trt.eager_launch_s)
    assert prefill("llama-3.1-70b", "h100-sxm", 4, "trtllm-engine").launch_s < 0.3 * deep.launch_s


def test_a_deep_models_short_prefill_waits_on_the_host():
    deep = prefill("llama-3.1-70b", "h100-sxm", 4, "sglang-0.3")
    host = deep.kernels * engine_spec("sglang-0.3").eager_launch_s
    assert deep.time_s >= host > deep.gpu_s
    assert prefill("llama-3.1-70b", "h100-sxm", 4, "sglang-0.3", launch_us=4.0).time_s < 0.8 * deep.time_s


def test_a_shallow_models_prefill_stays_gpu_bound():
    shallow = prefill("llama-3.1-8b", "a100-sxm-80gb", 1, "sglang-0.3")
    assert shallow.kernels * engine_spec("sglang-0.3").eager_launch_s < shallow.gpu_s
    assert shallow.time_s < 1.1 * shallow.gpu_s


def test_the_table_reads_the_host_bound_eager_calls_apart_from_the_graphed_ones():
    frame = pd.DataFrame({
        "gpu": ["h100_sxm"] * 4, "framework": ["sglang"] * 4, "op_name": ["all_reduce"] * 4,
        "kernel_source": ["SGLang_CustomAllReduce_eager", "SGLang_CustomAllReduce_graph",
                          "SGLang_CustomAllReduce_eager", "SGLang_CustomAllReduce_eager"],
        "bytes": [8192, 8192, 65536, 8 << 20], "latency_ms": [0.030, 0.003, 0.032, 0.060]})
    table = eager_host_cost.host_cost_table(frame)
    assert table.loc[("h100_sxm", "sglang", "eager"), "median"] == 31.0      # the 8 MiB call is not host-bound
    assert table.loc[("h100_sxm", "sglang", "graph"), "count"] == 1


def test_estimate_says_when_a_pass_waits_on_the_host(capsys):
    args = ["estimate", "--model", "llama-3.1-70b", "--tp", "4", "--engine", "sglang-0.3", "--prompt", "225"]
    assert main(args) == 0
    text = capsys.readouterr().out
    prefill = next(line for line in text.splitlines() if line.startswith("prefill pass"))
    assert "host-bound: 1126 eager launches x 31 us" in prefill
    assert "host-bound" not in next(line for line in text.splitlines() if line.startswith("decode step"))
    assert main(args + ["--json"]) == 0
    passes = json.loads(capsys.readouterr().out)["passes"]
    assert passes["prefill"]["host_bound"] and passes["prefill"]["host_launch_s"] > passes["prefill"]["gpu_s"]
    assert not passes["decode"]["host_bound"] and passes["decode"]["host_launch_s"] == 0.0   # a CUDA graph
