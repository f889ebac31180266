"""benchmarks/eager_call_cost.py: the light-load gap read as one host cost per eager call (docs/accuracy.md,
"Session 65 L"): the repricer is exact at the engine's own cost, monotone, and the committed rows refute one cost
per engine (it differs by model and prompt length, and a fit on one GPU does not carry to the other)."""
import pytest

from tests.benchmark_module import load_benchmark

ecc = load_benchmark("eager_call_cost")


@pytest.fixture(scope="module")
def trtllm_1k():
    """The TensorRT-LLM groups of the light-load 1k slice (both GPUs), priced once."""
    return ecc.price_groups([r for r in ecc.slice_rows(8, 1024) if r["engine"] == "trtllm"])


def test_the_engines_own_cost_reprices_to_no_change_and_more_costs_more(trtllm_1k):
    for g in trtllm_1k:
        assert g["delta_ms"](g["launch_us"]) == pytest.approx(0.0, abs=1e-9)
        assert g["delta_ms"](g["launch_us"] + 50) >= g["delta_ms"](g["launch_us"]) - 1e-9
        assert g["delta_ms"](400) > 0.0   # at 400 us a call every pass here is host-bound
        # host-bound at c: the queue takes at least c x calls (the launches are serial on the host)
        assert g["pass_ms"] + g["delta_ms"](400) >= 400e-3 * g["calls"] * (1 - 1e-9)


def test_host_calls_count_factors():
    class Op:
        def __init__(self, count):
            self.count, self.op_class, self.shape = count, None, None

    class T:
        def __init__(self, op):
            self.op = op
    a, b = Op(3), Op(2)
    times = [T(a), T(b)]
    assert ecc.host_calls(times, {}) == 5
    assert ecc.host_calls(times, {id(b): 4.0}) == 3 + 8


def test_deepseek_needs_twice_dense_llamas_per_call_cost_on_trtllm_b200(trtllm_1k):
    fits = {m.split("/")[-1]: c for e, gpu, m, n, c, *_ in ecc.per_model(trtllm_1k) if gpu == "b200_sxm"}
    assert fits["DeepSeek-R1"] > 1.6 * fits["Llama-3.1-70B"]   # no one per-call cost per engine


def test_a_per_call_cost_fitted_on_b200_does_not_carry_to_h100_trtllm(trtllm_1k):
    out = ecc.leave_one_gpu_out(trtllm_1k)
    b200_on_h100 = [o for o in out if o[1] == "b200_sxm" and o[3] == "h100_sxm" and o[4] == "ALL"][0]
    assert b200_on_h100[7] > b200_on_h100[6]   # MAPE after > before on the held-out GPU
