"""Single-kernel predictions (`whatif kernel ...`): what validation compares with measurements."""
from __future__ import annotations

from ..specs.dtypes import dtype_bytes
from ..errors import WhatifError, positive_int
from ..specs.hardware import System
from .attention import attention_op
from .comm import comm_op
from .config import ForwardBatch
from .efficiency import Efficiency
from .ops import gemm
from .timing import OpTime, time_op


def _positive(**values) -> None:
    for name, value in values.items():
        positive_int(value, f"--{name.replace('_', '-')}")


def gemm_kernel(system: System, eff: Efficiency, m: int, n: int, k: int, dtype: str) -> OpTime:
    _positive(m=m, n=n, k=k)
    b = dtype_bytes(dtype, "--dtype")
    system.gpu.peak_flops(dtype)   # clear error if the GPU has no tensor cores for it
    return time_op(gemm("gemm", m, n, k, b, b, dtype), system.gpu, eff)


def attention_kernel(system: System, eff: Efficiency, phase: str, batch: int, heads: int, kv_heads: int,
                     head_dim: int, seq_len: int, dtype: str) -> OpTime:
    _positive(batch=batch, heads=heads, kv_heads=kv_heads, head_dim=head_dim, seq_len=seq_len)
    if heads % kv_heads:
        raise WhatifError(f"--kv-heads: {kv_heads} must divide --heads ({heads})")
    b = dtype_bytes(dtype, "--dtype")
    system.gpu.peak_flops(dtype)
    if phase == "prefill":
        fb = ForwardBatch.prefill(batch, seq_len)
    elif phase == "decode":
        fb = ForwardBatch.decode(batch, seq_len)
    else:
        raise WhatifError(f"--phase: '{phase}' is not valid; valid: prefill, decode")
    op = attention_op(fb.groups, heads=heads, kv_heads=kv_heads, d_qk=head_dim, d_v=head_dim, act_bytes=b,
                      kv_bytes=b, kv_width=2 * kv_heads * head_dim, count=1, dtype=dtype)
    return time_op(op, system.gpu, eff)


def allreduce_kernel(system: System, eff: Efficiency, message_bytes: int, gpus: int) -> OpTime:
    _positive(bytes=message_bytes, gpus=gpus)
    if gpus > system.gpu_count and system.gpu_link is None:
        raise WhatifError(f"--gpus: {system.name} has no GPU interconnect for {gpus} GPUs")
    return time_op(comm_op("all_reduce", "all_reduce", float(message_bytes), gpus, 1), system.gpu, eff,
                   system.gpu_link)
