"""A fused MoE's buffers in an engine's profile run: every GPU sizes them for all tokens x k at the hidden width
(vLLM fused_experts_impl cache13 / cache2; TensorRT-LLM trtllm-gen gemm2_output), so the KV pool an engine that
subtracts its profile peak (vLLM total, TensorRT-LLM free) leaves shrinks with them;
SGLang's static fraction does not."""
from dataclasses import replace

import pytest

from whatif.roofline.config import Parallelism
from whatif.roofline.estimate import Workload
from whatif.roofline.memory import MOE_BUFFER_BYTES, activation_bytes, plan_memory, routed_expert_buffer_bytes
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario


def _model(name: str):
    return Scenario(model=name, hardware="b200", workload=Workload(batch=1, prompt=1024, output=64)).resolve()[0]


def test_buffers_follow_the_sources_shapes_at_the_hidden_width():
    ds = _model("deepseek-v3")   # hidden 7168, 8 of 256 experts, expert intermediate 2048
    m = ds.moe
    assert (ds.hidden_size, m.experts_per_token, m.expert_intermediate_size) == (7168, 8, 2048)
    tp8 = Parallelism(tp=8)     # moe_tp 8: N = 2 x 256 < K = 7168, so cache13 is M x k x K
    assert routed_expert_buffer_bytes(ds, 9280, tp8) == 9280 * 8 * (7168 + 256) * MOE_BUFFER_BYTES
    ep8 = Parallelism(tp=8, ep=8)   # whole experts: N = 4096, still below K; the activated half is 2048 wide
    assert routed_expert_buffer_bytes(ds, 9280, ep8) == 9280 * 8 * (7168 + 2048) * MOE_BUFFER_BYTES


def test_a_wide_expert_takes_its_gate_up_width():
    q = _model("qwen3-235b-a22b")   # hidden 4096, expert intermediate 1536: N = 3072 at moe_tp 1 stays below K
    inter = q.moe.expert_intermediate_size
    wide = replace(q.moe, expert_intermediate_size=4 * q.hidden_size)
    qw = replace(q, moe=wide)
    got = routed_expert_buffer_bytes(qw, 100, Parallelism(tp=1))
    assert got == 100 * q.moe.experts_per_token * (2 * 4 * q.hidden_size + 4 * q.hidden_size) * MOE_BUFFER_BYTES
    assert routed_expert_buffer_bytes(q, 100, Parallelism(tp=1)) == \
        100 * q.moe.experts_per_token * (q.hidden_size + inter) * MOE_BUFFER_BYTES


def test_the_profile_peak_carries_them_and_the_pool_shrinks_by_the_engines_rule():
    ds = _model("deepseek-v3")
    par = Parallelism(tp=8)
    assert activation_bytes(ds, 8192, 8192, par, Scenario(model="deepseek-v3", hardware="b200").precision) >= \
        routed_expert_buffer_bytes(ds, 8192, par)
    pools = {}
    for engine in ("trtllm", "sglang", "vllm"):
        sc = Scenario(model="deepseek-v3", hardware="b200", gpus=8, parallel=par, kernel_engine=engine,
                      workload=Workload(batch=1, prompt=1024, output=64))
        model, system, p, eff = sc.resolve()
        setup = pass_setup(model, system, p, sc.precision, eff, sc.utilization(), engine_spec=sc.engine_spec())
        small = plan_memory(setup, 1, 2048, 256)
        big = plan_memory(replace(setup, engine_spec=replace(setup.engine_spec, max_num_batched_tokens=16384)),
                          1, 2048, 256)
        pools[engine] = small.free_for_kv - big.free_for_kv
        grown = big.activation_bytes - small.activation_bytes
        assert grown > 0.5 * (routed_expert_buffer_bytes(model, 16384, p) - routed_expert_buffer_bytes(model, 8192, p))
        if engine == "trtllm":   # free: the fraction of what the dry run leaves
            assert pools[engine] == pytest.approx(grown * setup.utilization, rel=1e-9)
        elif engine == "vllm":   # total: the profile peak comes off the budget whole
            assert pools[engine] == pytest.approx(grown, rel=1e-9)
    assert pools["sglang"] == 0.0   # static: weights and KV only
