"""vLLM 0.2.x adds a row-parallel linear's bias in a kernel of its own (RowParallelLinear.forward: the GEMM without
its bias, the TP all-reduce, then `output_ + self.bias`): the profiles that say so (kernels.row_linear_bias_add) run
one more elementwise op, and in an eager pass one more launch, after each biased o_proj and MLP down projection."""
from dataclasses import replace

import pytest

from whatif.roofline.config import ForwardBatch
from whatif.roofline.context import pass_context
from whatif.roofline.engine_kernels import fused_ops
from whatif.roofline.engines import engine_spec
from whatif.roofline.forward_pass import time_pass
from whatif.roofline.graph import pass_ops
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.ops import OpClass
from whatif.scenario import Scenario
from whatif.specs.op_kinds import OpRole


def _ops(model: str, engine: str, tp: int = 1):
    sc = Scenario(model=model, hardware="dgx-a100-80gb", gpus=tp, kernel_engine=engine)
    m, _, par, _ = sc.resolve()
    ctx = pass_context(m, ForwardBatch.decode(4, 1000), par, sc.precision, 0)
    return fused_ops(pass_ops(ctx), sc.engine_spec(), m), m


def _roles(ops):
    return [op.role for op in ops if op.op_class != OpClass.TRANSFER]


def test_vllm_0_2_profiles_add_row_linear_biases_apart():
    assert engine_spec("vllm-0.2").row_linear_bias_add and engine_spec("vllm-0.2-ray").row_linear_bias_add
    assert not engine_spec("vllm").row_linear_bias_add and not engine_spec("sglang").row_linear_bias_add
    assert "RowParallelLinear.forward" in engine_spec("vllm-0.2").sources["kernels.row_linear_bias_add"]


def test_the_bias_add_follows_its_gemm_or_the_all_reduce_after_it():
    ops, m = _ops("opt-13b", "vllm-0.2")
    roles = _roles(ops)
    assert m.o_bias and m.mlp_bias
    assert roles[roles.index(OpRole.O_PROJ) + 1] == OpRole.O_BIAS
    assert roles[roles.index(OpRole.MLP_DOWN) + 1] == OpRole.MLP_DOWN_BIAS
    bias = next(op for op in ops if op.role == OpRole.O_BIAS)
    gemm = next(op for op in ops if op.role == OpRole.O_PROJ)
    assert bias.count == gemm.count and bias.hbm_bytes == (4 * 5120 * 2 + 5120) * 2   # out read + written, bias row
    tp2 = _roles(_ops("opt-13b", "vllm-0.2", tp=2)[0])
    assert tp2[tp2.index(OpRole.O_PROJ) + 1:tp2.index(OpRole.O_PROJ) + 3] == [OpRole.ATTN_ALLREDUCE, OpRole.O_BIAS]
    assert tp2[tp2.index(OpRole.MLP_DOWN) + 1:tp2.index(OpRole.MLP_DOWN) + 3] == [OpRole.MLP_ALLREDUCE,
                                                                                  OpRole.MLP_DOWN_BIAS]


def test_no_bias_add_without_a_bias_or_the_profile():
    assert OpRole.O_BIAS not in _roles(_ops("llama-2-13b", "vllm-0.2")[0])
    assert OpRole.O_BIAS not in _roles(_ops("opt-13b", "vllm")[0])


def test_an_eager_decode_pass_pays_two_launches_more_a_layer():
    """OPT-13B at batch 1 on an A100, eager: the two bias kernels a layer are 80 launches more at the A100 hosts'
    44.7 us each; the step is launch-bound there, so it grows by about their host time."""
    def step(flag: bool):
        sc = Scenario(model="opt-13b", hardware="dgx-a100-80gb", kernel_engine="vllm-0.2-ray")
        m, system, par, eff = sc.resolve()   # (the A100 hosts' launch cost, as Scenario sets it)
        spec = replace(sc.engine_spec(), row_linear_bias_add=flag)
        setup = pass_setup(m, system, par, sc.precision, eff, sc.utilization(), engine_spec=spec)
        return time_pass(setup, ForwardBatch.decode(1, 900), False)
    off, on = step(False), step(True)
    assert on.kernels - off.kernels == 80
    assert on.launch_s - off.launch_s == pytest.approx(80 * 44.7e-6, rel=1e-6)
    assert 2.5e-3 < on.time_s - off.time_s <= 80 * 44.7e-6 + 1e-4
