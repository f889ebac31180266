"""Elementwise kernels the engines run between the priced GEMM / attention / MoE ops of a layer (session 67 A):
the routed + shared experts' sum (roofline/moe.shared_expert_add_op: sglang models/deepseek_v2.py
`final_hidden_states += shared_output`) and Gated DeltaNet's split of its projections (roofline/recurrent.gdn_split_op:
sglang models/qwen3_next.py `fused_qkvzba_split_reshape_cat`), each one memory-bound kernel of every layer."""
import pytest

from tests.test_shared_expert_gate import decode_ops
from whatif.roofline.moe import shared_expert_add_op
from whatif.roofline.recurrent import gdn_split_op
from whatif.roofline.config import Precision
from whatif.specs.op_kinds import FFN_ROLES, OpRole


def test_the_shared_add_streams_two_reads_and_a_write_of_the_16_bit_hidden_state():
    op = shared_expert_add_op(4, 7168, 2.0, 58)
    assert op.hbm_bytes == 4 * 7168 * 3 * 2.0 and op.count == 58 and op.role == OpRole.SHARED_EXPERT_ADD
    assert op.role in FFN_ROLES
    assert shared_expert_add_op(4, 4096, 2.0, 60, gated=True).role == OpRole.SHARED_EXPERT_GATE


@pytest.mark.parametrize("quant", ({}, {"quantization": "fp8", "kv_dtype": "fp8"}))
def test_every_deepseek_moe_layer_adds_its_shared_expert_in_16_bits(quant):
    ops = decode_ops("deepseek-ai/DeepSeek-V3", **quant)
    count, seconds, op = ops["shared_expert_add"]
    assert count == 58 and seconds > 0   # 58 MoE layers (3 dense)
    assert op.hbm_bytes == pytest.approx(4 * 7168 * 3 * 2.0)


def test_a_moe_without_a_shared_expert_adds_nothing():
    assert "shared_expert_add" not in decode_ops("Qwen/Qwen3-235B-A22B")


def test_every_gdn_layer_splits_its_projections_once():
    ops = decode_ops("Qwen/Qwen3.5-397B-A17B", batch=16)
    count, seconds, op = ops["mixer_split"]
    proj = ops["mixer_in_proj"][2]
    assert count == 45 and seconds > 0 and op.role == OpRole.MIXER_SPLIT   # the 45 Gated DeltaNet layers
    assert op.shape.elements == pytest.approx(16 * proj.shape.n)   # each projected element read and written once
    assert op.hbm_bytes == pytest.approx(16 * proj.shape.n * 2 * 2.0)


def test_the_split_moves_16_bit_outputs_under_an_fp8_scheme():
    fp8 = Precision(weight="fp8", activation="fp8", kv="fp8")
    assert gdn_split_op(1000.0, fp8, 1).hbm_bytes == 1000.0 * 2 * 2.0
