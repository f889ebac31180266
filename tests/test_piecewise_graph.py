"""vLLM's PIECEWISE cudagraph mode (roofline/piecewise_graph.py): decode passes in graph pieces between eagerly run
attention ops, one host call per piece and per attention kernel; the default (FULL_AND_PIECEWISE) unchanged."""
from __future__ import annotations

from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch
from whatif.roofline.forward_pass import engine_step, time_pass
from whatif.roofline.piecewise_graph import in_splitting_op, piecewise_calls
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.step_price import StepPricer
from whatif.scenario import Scenario

DECODE = ForwardBatch(((1, 1000, 1),))


def setup_of(sc: Scenario):
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(), sc.placement(),
                      engine_spec=sc.engine_spec())


def vllm(**kw) -> Scenario:
    return Scenario(model="llama-3.1-8b", hardware="h100-sxm", kernel_engine="vllm", **kw)


def test_the_default_is_whole_decode_graphs():
    assert vllm().engine_spec().decode_graph_mode == "full"
    assert vllm(cudagraph_mode="piecewise").engine_spec().piecewise_decode


def test_one_call_per_piece_and_per_attention_kernel():
    setup = setup_of(vllm(cudagraph_mode="piecewise"))
    times = time_pass(setup, DECODE, True).stages[0]
    calls = piecewise_calls(times)
    layers = setup.model.num_layers
    split = sum(t.op.count for t in times if in_splitting_op(t.op))
    assert split >= layers                          # attention (and its KV write) every layer
    pieces = sum(calls[id(t.op)] * t.op.count for t in times if not in_splitting_op(t.op))
    assert pieces == layers + 1                     # N attention ops split the graph into N + 1 pieces


def test_piecewise_decode_pays_host_calls_only_where_they_outrun_the_gpu():
    full = setup_of(vllm())
    piece = setup_of(vllm(cudagraph_mode="piecewise"))
    spec = piece.engine_spec
    p_full, t_full = engine_step(full, DECODE, True)
    p_piece, t_piece = engine_step(piece, DECODE, True)
    assert p_full.launch_s == 0.0
    assert p_piece.launch_s > 0.0 and p_piece.gpu_s == pytest.approx(p_full.gpu_s)
    assert t_piece > t_full   # at least the first piece's call is in line
    # with no host time a call the pieces cost what the whole graph does; with a slow host the step is host-bound
    free = replace(piece, engine_spec=replace(spec, piecewise_call_s=0.0))
    assert engine_step(free, DECODE, True)[1] == pytest.approx(t_full)
    slow = replace(piece, engine_spec=replace(spec, piecewise_call_s=1e-3))
    assert time_pass(slow, DECODE, True, piecewise=True).time_s >= p_piece.launch_s / spec.piecewise_call_s * 1e-3


def test_prefill_steps_and_the_simulator_pricer_agree():
    setup = setup_of(vllm(cudagraph_mode="piecewise"))
    memo = StepPricer(setup)
    mixed = ForwardBatch(((1, 700, 12), (517, 0, 1)))
    full = setup_of(vllm())
    assert engine_step(setup, mixed, True)[1] == engine_step(full, mixed, True)[1]   # eager either way
    assert memo.seconds(DECODE, True) == engine_step(setup, DECODE, True)[1]          # priced whole


def test_bad_mode_is_one_line_error():
    from whatif.scenario import build_scenario
    with pytest.raises(WhatifError, match="cudagraph_mode: 'pieces' is not valid; valid: full, piecewise"):
        build_scenario({"cudagraph_mode": "pieces"}, {})


def test_the_cli_flag_reaches_the_engine_spec():
    from whatif.cli import build_parser
    from whatif.cli.scenario_flags import scenario_from_args
    args = build_parser().parse_args(["estimate", "--model", "llama-3.1-8b", "--engine", "vllm",
                                      "--cudagraph-mode", "piecewise"])
    assert scenario_from_args(args).engine_spec().piecewise_decode
