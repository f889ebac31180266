"""The simulator's token-count ops (roofline/step_price/token_ops.py): each op of a stage's body and tail priced from
its numbers as slope * n + intercept is time_op's figure for the op built at n, to the bit, at every
token count a run meets, on each piece of the token range where the ops' kinds stay the same; where an op
is not affine in n (MoE routing) the ops are built per count."""
from __future__ import annotations

import pytest

from whatif.roofline.config import Parallelism, Precision
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.roofline.step_price.parts import PassParts
from whatif.roofline.step_price.token_ops import TokenOps, _kind, stage_ops


def parts_of(sc: Scenario, engine: bool = True) -> PassParts:
    model, system, par, eff = sc.resolve()
    return PassParts(pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(),
                                sc.placement(), engine_spec=sc.engine_spec() if engine else None))


COUNTS = list(range(1, 600)) + list(range(600, 8193, 13)) + [16384, 100_003]
SCENARIOS = [Scenario(), Scenario(model="llama-3-70b", hardware="dgx-h100", parallel=Parallelism(tp=4)),
             Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2)),
             Scenario(model="qwen2.5-7b", precision=Precision(weight="fp8", activation="fp8", kv="fp8"))]


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: f"{s.model}-{s.parallel}-{s.precision.weight}")
@pytest.mark.parametrize("tail", [False, True])
def test_ops_priced_from_their_numbers_are_the_built_ops_times(sc, tail):
    parts = parts_of(sc)
    for stage in parts.stages:
        fast = TokenOps.of(parts, stage, tail)
        assert fast is not None
        for n in COUNTS:
            built = [None if t is None else parts._op_time(op).time_s
                     for op, t in zip(stage_ops(parts.setup, stage, n, tail), fast.seconds(n))]
            assert fast.seconds(n) == built, n


def test_ops_not_affine_in_the_tokens_are_built_per_count():
    parts = parts_of(Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=4)))
    assert TokenOps.of(parts, 0, tail=False) is None     # expert GEMMs: touched experts grow with the tokens
    assert TokenOps.of(parts, 0, tail=True) is not None


def test_a_pass_from_token_ops_equals_the_pass_from_built_ops():
    """The whole pass (lines of the eager launch queue included) is the same float either way."""
    fast, built = parts_of(Scenario()), parts_of(Scenario())
    built.shared = {(0, False): None, (0, True): None}   # no TokenOps: the ops built per count
    for groups in [((1, 900, 37),), ((1, 300, 5), (700, 0, 1)), ((2048, 1000, 1),), ((1, 64, 3), (9, 0, 1))]:
        for graphs in (True, False):
            assert fast.time_s(groups, 0, graphs) == built.time_s(groups, 0, graphs)
    assert fast.shared[(0, False)] is not None


def test_a_trtllm_fused_all_reduce_splits_the_token_range_where_it_outgrows_the_workspace():
    """TensorRT-LLM fuses Llama-3.1-70B's TP all-reduce with the residual and norm only while its message fits
    the custom kernel's workspace at TP 2 (8,192 x 2 B x n <= 16 MB: n <= 976): two pieces, each
    affine, each op's time time_op's on both sides of the boundary; the pass equals the one from built ops."""
    sc = Scenario(model="llama-3.1-70b", hardware="dgx-h100", parallel=Parallelism(tp=2), kernel_engine="trtllm",
                  precision=Precision(weight="fp8", activation="fp8", kv="fp8"))
    parts = parts_of(sc)
    fast = TokenOps.of(parts, 0, tail=False)
    first_unfused = int(sc.engine_spec().custom_allreduce_cap(2) // (8192 * 2)) + 1
    assert fast is not None and fast.starts == [1, first_unfused] == [1, 977] and None not in fast.pieces
    kinds = [list(map(_kind, stage_ops(parts.setup, 0, n, False))) for n in (976, 977)]
    assert kinds[0] != kinds[1] and len(kinds[0]) < len(kinds[1])   # (the residual and norm come back)
    for n in list(range(1, 40)) + list(range(940, 1010)) + [2048, 4097, 8192, 100_003]:
        built = [None if t is None else parts._op_time(op).time_s
                 for op, t in zip(stage_ops(parts.setup, 0, n, False), fast.seconds(n))]
        assert fast.seconds(n) == built, n
    built = parts_of(sc)
    built.shared = {(0, False): None, (0, True): None}
    for groups in [((1, 900, 37),), ((976, 0, 1),), ((977, 0, 1),), ((1, 300, 5), (1700, 0, 1))]:
        for graphs in (True, False):
            assert parts.time_s(groups, 0, graphs) == built.time_s(groups, 0, graphs), groups
