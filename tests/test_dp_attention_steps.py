"""A serving step under attention-DP as the engines run it: an MLA pass mixing decodes and a prompt runs the
decodes absorbed (never their caches expanded), each rank's CPU works on its own sequences, and each rank
replays its own decode CUDA graph."""
from __future__ import annotations

from dataclasses import replace

import pytest

from whatif.inputs import scenario_from_inputs
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.forward_pass import engine_step, step_shape
from whatif.roofline.graph import forward_ops
from whatif.specs.models import load_model
from whatif.specs.op_kinds import OpRole


@pytest.fixture(scope="module")
def setup():
    sc = scenario_from_inputs(None, dict(model="deepseek-v3", hardware="dgx-b200", kernel_engine="sglang", tp=8, ep=8,
                                         dp_attention=True), quantization="fp8")
    return sc.resolved().pass_setup()


def test_mla_mixed_pass_expands_only_the_prompts_latent():
    model, prec = load_model("deepseek-v3"), Precision(weight="fp8")
    decodes, prompt = (1, 2048, 256), (4096, 0, 1)
    ops = forward_ops(model, ForwardBatch((decodes, prompt)), Parallelism(tp=8), prec)
    kv_b = [op for op in ops if op.role == OpRole.KV_B_PROJ]
    assert kv_b and all(op.shape.m == 4096 for op in kv_b)   # the prompt's own tokens, not 256 x 2048 cached
    assert any(op.role == OpRole.Q_ABSORB for op in ops)     # the decodes stay absorbed


def test_a_mixed_step_costs_about_its_parts(setup):
    """The issue's symptom: a step of many decodes beside a prompt cost several times its two halves."""
    def step(groups):
        return engine_step(setup, ForwardBatch(groups), cuda_graphs=False)[1]
    decode, prompt = (1, 2048, 2048), (16384, 0, 1)
    mixed = step((decode, prompt))
    assert mixed < 1.15 * (step((decode,)) + step((prompt,)))
    assert mixed > step((prompt,))


def test_cpu_per_step_is_each_ranks_own(setup):
    """SGLang's per-sequence CPU cost is paid by each rank's scheduler on its own sequences, in parallel."""
    spec = replace(setup.engine_spec, cpu=replace(setup.engine_spec.cpu, overlapped=False))   # (the CPU shows)
    p, wall = engine_step(replace(setup, engine_spec=spec), ForwardBatch.decode(8 * 1000, 64), cuda_graphs=True)
    assert wall == pytest.approx(p.time_s + spec.cpu.seconds(1000), rel=1e-12)


def test_each_rank_pads_to_its_own_graph(setup):
    """500 sequences over 8 ranks: 63 on the busiest, padded to SGLang's 64-row graph, not 500 run eagerly."""
    run, graphs = step_shape(setup, ForwardBatch.decode(500, 2048), cuda_graphs=True)
    local = run.split(setup.parallel.attention_dp)
    assert graphs and local.sequences == setup.engine_spec.graph_batch(63)
    assert run.sequences == 8 * local.sequences   # every rank runs the busiest rank's graph size
