"""benchmarks/moe_step_vs_kernels.py: the fused-MoE table lookup by routing and which ops the fused call holds."""
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import moe_step_vs_kernels as msk  # noqa: E402
from whatif.specs.op_kinds import OpRole  # noqa: E402


def test_moe_table_us_interpolates_tokens_per_routing_and_none_outside():
    rows = pd.DataFrame([("balanced", 4, 0.080), ("balanced", 8, 0.120), ("power_law_1.01", 4, 0.090),
                         ("power_law_1.01", 8, 0.130)], columns=["distribution", "num_tokens", "latency_ms"])
    got = msk.moe_table_us(rows, 6)
    assert got["balanced"] == pytest.approx(100.0) and got["power_law_1.01"] == pytest.approx(110.0)
    assert got["power_law_1.2"] is None                       # no rows of that routing
    assert msk.moe_table_us(rows, 16)["balanced"] is None    # past the measured tokens


class FakeOp:
    def __init__(self, role, part_of=None):
        self.role, self.part_of = role, part_of


@pytest.mark.parametrize("role, part_of, inside", [
    (OpRole.EXPERT_UP, None, True), (OpRole.EXPERT_DOWN, None, True), (OpRole.EXPERT_ACT, None, True),
    (OpRole.ROUTER_TOPK, None, True), (None, OpRole.EXPERT_UP, True),      # its per-token-group quantize
    (OpRole.ROUTER, None, False), (OpRole.MLP_ALLREDUCE, None, False), (None, OpRole.QKV_PROJ, False)])
def test_the_fused_call_holds_top_k_quantizes_and_experts_not_the_router_gemm(role, part_of, inside):
    assert msk.fused_moe_role(FakeOp(role, part_of)) is inside
