"""benchmarks/trtllm_layer_calls.py: a DeepSeek MoE layer's host calls in TensorRT-LLM's eager context step, read at
source, against whatif's eager launches (docs/accuracy.md, "Session 68 H"): whatif already charges at least the
sourced calls, so the count is not the light-load gap; the gap wants several times the engine's per-call cost."""
import pytest

from tests.benchmark_module import load_benchmark

tlc = load_benchmark("trtllm_layer_calls")


def test_the_sourced_layer_has_24_calls_with_fp8_gemms_and_18_with_bf16():
    assert sum(tlc.sourced_calls(True).values()) == 24
    assert sum(tlc.sourced_calls(False).values()) == 18
    assert set(tlc.sourced_calls(True)) == set(tlc.ROLE_PARTS)


def test_whatif_calls_count_ops_of_every_moe_layer_only():
    class Role:
        def __init__(self, value):
            self.value = value

    class Op:
        def __init__(self, role, count):
            self.role, self.count, self.op_class, self.shape, self.name = role, count, None, None, role

    class T:
        def __init__(self, op):
            self.op = op
    times = [T(Op("router", 58)), T(Op("mlp_act", 3)), T(Op("o_proj", 61))]
    import trtllm_layer_calls as mod
    plain = mod.graph_role
    mod.graph_role = lambda op: Role(op.role)
    try:
        out = tlc.whatif_calls(times, {id(times[2].op): 2.0}, 58)
    finally:
        mod.graph_role = plain
    assert out["routed MoE"] == 1 and out["MLA module"] == 2 and sum(out.values()) == 3   # the dense MLP's left out


@pytest.fixture(scope="module")
def groups():
    return [tlc.summary(rows) for rows in tlc.group_rows(8, 1024).values()]


def test_whatif_charges_no_fewer_calls_than_the_source_and_the_gap_wants_dearer_calls(groups):
    assert len(groups) >= 6
    for s in groups:
        assert s["whatif_layer"] >= s["sourced_layer"]          # the count is not what is missing
        assert s["host_change_ms"] <= 0.0
        assert s["need_us"] > 4 * s["launch_us"]                # 21.5 us a call would need > 4x the calls
