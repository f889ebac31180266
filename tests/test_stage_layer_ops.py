"""A pass's pipeline stages share the ops of the layers they have alike (forward_pass.time_pass, graph.pass_ops'
layer_memo), built and priced once: the pass equals the one built stage by stage, op for op and float for float."""
from __future__ import annotations

import pytest

from whatif.config_search.evaluate import replica_scenario
from whatif.config_search.space import ReplicaSetup, SearchSpace
from whatif.roofline import forward_pass
from whatif.roofline.config import ForwardBatch
from whatif.roofline.forward_pass import engine_step, time_pass
from whatif.roofline.graph import pass_ops

SETUPS = [   # (model, replica setup): PP over dense TP, fp8, a KV technique, MoE with EP, an uneven layer split
    ("llama-3.1-8b", ReplicaSetup("dgx-h100", 2, 4, 1, "fp8", "fp8")),
    ("llama-3.1-8b", ReplicaSetup("dgx-h100", 2, 2, 1, "bf16", "bf16", ("kivi",))),
    ("mixtral-8x7b", ReplicaSetup("dgx-h100", 4, 2, 2, "bf16", "bf16")),
    ("llama-3.1-70b", ReplicaSetup("dgx-h100", 1, 8, 1, "fp8", "bf16", ("kivi",))),
    ("qwen2.5-7b", ReplicaSetup("dgx-h100", 1, 8, 1, "bf16", "bf16")),      # 28 layers over 8 stages: 4 + 3s
]
BATCHES = [ForwardBatch.decode(8, 1500), ForwardBatch.decode(64, 3000), ForwardBatch.prefill(2, 3000),
           ForwardBatch(((3000, 0, 1), (1, 2000, 7)))]   # the last one mixed


def _setup(model: str, key: ReplicaSetup):
    space = SearchSpace(model=model, hardware=("dgx-h100",), gpu_budget=8, prompt=3000, output=200)
    return replica_scenario(space, key, 8192).resolved().pass_setup()


@pytest.mark.parametrize("model, key", SETUPS, ids=lambda v: v.label() if isinstance(v, ReplicaSetup) else v)
def test_shared_stage_layers_give_the_pass_built_stage_by_stage(model, key, monkeypatch):
    s = _setup(model, key)
    shared = [(time_pass(s, fb, g), engine_step(s, fb, g)) for fb in BATCHES for g in (True, False)]
    monkeypatch.setattr(forward_pass, "pass_ops", lambda ctx, techs, memo=None: pass_ops(ctx, techs))
    apart = [(time_pass(s, fb, g), engine_step(s, fb, g)) for fb in BATCHES for g in (True, False)]
    assert shared == apart


def test_stages_hold_one_op_object_per_layer_op():
    s = _setup("llama-3.1-8b", ReplicaSetup("dgx-h100", 2, 4, 1, "bf16", "bf16"))
    p = time_pass(s, ForwardBatch.decode(16, 1000), True)
    first = next(t for t in p.stages[0] if t.op.name == "qkv_proj")
    assert all(any(t is first for t in stage) for stage in p.stages)   # built and priced once
