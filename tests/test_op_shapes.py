"""Typed op shapes, op classes and op roles: the vocabulary ops are built and found in."""
import json
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.graph import forward_ops
from whatif.specs.op_kinds import FFN_ROLES, NON_LAYER_ROLES, OpClass, OpRole
from whatif.roofline.ops import (AttentionShape, CommShape, GemmShape, Op, ScoreShape, StreamShape, TransferShape,
                                 is_weight_gemm, op_fields_from_record, shape_from_dict, shape_record)
from whatif.specs.models import load_model
from whatif.validate.table import op_columns, read_table

MEASUREMENTS = Path(__file__).resolve().parents[1] / "whatif" / "validate" / "measurements"
SHAPES = [GemmShape(16, 4096, 4096), GemmShape(16, 4096, 4096, 2.5), AttentionShape(pairs=10, heads=32, kv_heads=8,
          d_qk=128, d_v=128, ctas=64, max_context=4, sequences=1, kv_bytes=2048), StreamShape(100),
          StreamShape(100, kv_write_bytes=200), ScoreShape(10, 20), CommShape("all_reduce", 8192, 4),
          TransferShape(64e9, 1e-5, True, 40)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_shape_dict_round_trip(shape):
    assert shape_from_dict(json.loads(json.dumps(shape.to_dict()))) == shape


def test_cost_modifiers_travel_with_the_shape_record():
    op = Op("x", OpClass.GEMM, 1.0, {"hbm": 1.0}, "bf16", GemmShape(1, 2, 3), alu_ops=7.0, bandwidth_share=0.5)
    record = shape_record(op)
    assert record == {"m": 1, "n": 2, "k": 3, "alu_ops": 7.0, "bandwidth_share": 0.5}
    assert op_fields_from_record(record) == {"shape": GemmShape(1, 2, 3), "alu_ops": 7.0, "bandwidth_share": 0.5}


def test_bad_shape_and_class_name_the_field():
    with pytest.raises(WhatifError, match="op_shape: heads not valid for a GemmShape"):
        shape_from_dict({"m": 1, "n": 2, "k": 3, "heads": 4})
    with pytest.raises(WhatifError, match="op_class: 'matmul' is not valid"):
        Op("x", "matmul", 0.0, {}, "-", StreamShape(1))


@pytest.mark.parametrize("table", sorted(MEASUREMENTS.glob("*/*.csv")), ids=lambda p: p.parent.name)
def test_measurement_tables_read_back_to_the_same_columns(table):
    """A committed table's op columns, rebuilt into ops and written again, are unchanged."""
    for row in read_table(table)[:200]:
        cols = op_columns(row.op())
        assert json.loads(cols["op_shape"]) == json.loads(row.op_shape)
        assert cols["op_class"] == row.op_class and str(cols["op_class"]) == row.op_class


def test_op_class_is_its_string():
    assert OpClass.GEMM == "gemm" and f"{OpClass.NORM}" == "norm" and {"comm": 1}[OpClass.COMM] == 1


@pytest.mark.parametrize("model,par", [("llama-2-7b", Parallelism(tp=2)), ("mixtral-8x7b", Parallelism(tp=2, ep=2)),
                                       ("deepseek-v3", Parallelism(tp=8)), ("opt-1.3b", Parallelism(pp=2))])
def test_every_graph_op_has_a_role(model, par):
    spec = load_model(model)
    for stage in range(par.pp):
        for batch in (ForwardBatch.prefill(2, 64), ForwardBatch.decode(2, 64)):
            ops = forward_ops(spec, batch, par, Precision(), stage)
            assert all(op.role is not None for op in ops), [op.name for op in ops if op.role is None]
            assert all(is_weight_gemm(op) == (op.op_class == OpClass.GEMM and op.role not in
                                              (OpRole.LM_HEAD, OpRole.ROUTER)) for op in ops)
            layer_ffn = [op for op in ops if op.role in FFN_ROLES]
            assert layer_ffn and not any(op.role in NON_LAYER_ROLES for op in layer_ffn)
