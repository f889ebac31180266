"""The dense feed-forward block and the GEMM every linear layer makes against the model's weights.

Shared by graph.py (dense layers) and moe.py (experts and shared experts), so it sits below both.
"""
from __future__ import annotations

from ..specs.dtypes import gemm_compute_dtype
from ..specs.models import ModelSpec
from .config import Parallelism, Precision
from .dequant import with_weight_dequant
from .ops import Op, OpClass, OpRole, gemm, streaming

ACT_FLOPS = 8.0      # SiLU/GELU + gate multiply per element (order of magnitude; they are memory bound)
# Roles of a dense MLP's up, activation and down ops, by the name prefix it is built with.
MLP_ROLES = {"mlp": (OpRole.MLP_UP, OpRole.MLP_ACT, OpRole.MLP_DOWN),
             "shared_expert": (OpRole.SHARED_EXPERT_UP, OpRole.SHARED_EXPERT_ACT, OpRole.SHARED_EXPERT_DOWN)}


def weight_gemm(name: str, m: float, n: float, k: float, prec: Precision, count: int,
                role: OpRole | None = None) -> Op:
    """A GEMM against the model's weights (weight-only formats dequantize in the kernel: dequant.py)."""
    op = gemm(name, m, n, k, prec.act_bytes, prec.weight_bytes, gemm_compute_dtype(prec.weight, prec.activation),
              count, role=role)
    return with_weight_dequant(op, prec, k * n, m)


def dense_mlp(model: ModelSpec, tokens: int, par: Parallelism, prec: Precision, count: int,
              intermediate: int | None = None, prefix: str = "mlp") -> list[Op]:
    i = (intermediate or model.intermediate_size) // par.tp
    a, d = prec.act_bytes, model.hidden_size
    gated = model.mlp == "gated"
    up_n = 2 * i if gated else i
    up, act, down = MLP_ROLES.get(prefix, (None, None, None))
    return [
        weight_gemm(f"{prefix}_gate_up" if gated else f"{prefix}_up", tokens, up_n, d, prec, count, up),
        streaming(f"{prefix}_act", OpClass.ACTIVATION, tokens * i, reads=2 if gated else 1, writes=1,
                  flops_per_element=ACT_FLOPS, elem_bytes=a, dtype=prec.activation, count=count, role=act),
        weight_gemm(f"{prefix}_down", tokens, d, i, prec, count, down),
    ]
