"""Family A: weight quantization, compression and pruning: fewer weight bytes per step, maybe
low-precision tensor cores, plus the cost of turning stored weights back into GEMM operands."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..config import Precision
from .base import Technique, param
from .registry import register


@register
@dataclass(frozen=True)
class Int4WeightOnly(Technique):
    """W4A16: weights stored as 4-bit integers with one 16-bit scale per `group_size` weights, so a
    decode step reads 4 + 16/group_size bits per weight instead of 16. The fused GEMM dequantizes
    each weight on the CUDA cores once per 64-row tile: free while the GEMM waits on memory, a
    cost once it is compute-bound. GEMMs still run on the 16-bit tensor cores; embeddings and the
    LM head stay 16-bit."""

    name = "int4"
    family = "A"
    paper = "AWQ: Activation-aware Weight Quantization for LLM Compression and Acceleration (W4A16, group 128)"
    slots = ("weight format",)
    group_size: int = param(128, "weights sharing one 16-bit scale")

    def check_params(self) -> None:
        self.require(self.group_size >= 1, "group_size", "a positive integer")

    def transform_precision(self, prec: Precision) -> Precision:
        return replace(prec, weight="int4", weight_group_size=self.group_size)
