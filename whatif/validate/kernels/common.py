"""Helpers every kernel family shares: dtypes, random inputs, poisoning and the error measure."""
from __future__ import annotations

import torch

from . import interpreting  # noqa: F401  (re-exported: the kernels' tests use it)

TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
                "fp8": torch.float8_e4m3fn, "int8": torch.int8}
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "int8": 1}

# Relative Frobenius error ||out - ref|| / ||ref|| a correct kernel stays under, per input dtype: 16-bit
# operands with fp32 accumulation land between 1e-3 and 1e-2 (bf16 keeps 8 bits of mantissa); fp8 e4m3
# keeps 3, so rounding the output to 16 bits and the inputs' own rounding both show.
TOLERANCE = {"fp32": 1e-4, "fp16": 5e-3, "bf16": 2e-2, "fp8": 6e-2}


def torch_dtype(dtype: str) -> torch.dtype:
    return TORCH_DTYPES[dtype]


def randn(shape, dtype: str, device: str, gen: torch.Generator, scale: float = 1.0) -> torch.Tensor:
    """Normal values (never zeros: zeros hide unwritten outputs and run faster), cast to `dtype`. `gen` lives on
    `device` (the runner makes a CUDA generator), so gigabyte inputs are drawn on the GPU."""
    x = torch.randn(shape, generator=gen, dtype=torch.float32, device=device) * scale
    return x.to(torch_dtype(dtype))


def poisoned(shape, dtype: str | torch.dtype, device: str) -> torch.Tensor:
    """An output buffer full of NaN, so any element the kernel fails to write fails the check."""
    dt = torch_dtype(dtype) if isinstance(dtype, str) else dtype
    return torch.full(shape, float("nan"), dtype=dt, device=device)


def relative_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64; NaN anywhere (an unwritten element) gives inf."""
    o, r = out.double(), ref.double()
    if not torch.isfinite(o).all():
        return float("inf")
    return float(torch.linalg.vector_norm(o - r) / torch.linalg.vector_norm(r).clamp_min(1e-30))


def next_pow2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()
