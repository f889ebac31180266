"""The fitted kernel models (roofline/kernel_models/) applied to an Op of a forward pass.

The default efficiency times GEMMs, attention and collectives with the kernel models fitted on the
aiconfigurator corpus (parameters per architecture x dtype x engine, per link generation), and every
other op with the per-class model of efficiency.py. The models are written for the shapes the corpus
measured; here they take the op's own work, so a technique that changes an op's FLOPs or bytes
(a sparse prefill, a compressed KV cache, a weight format) changes its time through the same terms:
- GEMM: tile/wave/split-K compute of (m, n, k) from the model; memory = the op's HBM bytes;
- prefill attention: the causal-tile model for an equivalent dense causal batch of the op's
  sequences whose pairs equal the op's pairs (chunked prefill and sparse pairs included), memory =
  the op's HBM bytes; its per-token cost counts the op's new tokens; over a cached context (a chunk,
  a verify pass) never less than the decode model's fixed costs and streaming of the same op's bytes;
- decode attention: the op's bytes streamed at the fitted efficiency and SM occupancy, the op's
  FLOPs with GQA rows padded to the tensor-core tile, a per-(sequence, KV head) cost, a floor;
- collectives: NCCL's protocols / NVLS / the engine's custom all-reduce (kernel_models/collectives).
An op the models do not cover (grouped MoE GEMMs, MLA's latent attention, a dtype without a fit)
returns None and is timed by the class model.
"""
from __future__ import annotations

import math

from .kernel_models import collectives as coll
from .kernel_models.gemm import combine, gemm_parts
from .kernel_models.params import DTYPE_BYTES, ceilings, params_for
from .op_shapes import AttentionShape
from .ops import Op, OpClass

GEMM_DTYPES = ("bf16", "fp16", "fp8")
ATTENTION_DTYPES = ("bf16", "fp16")
KV_DTYPES = ("bf16", "fp16", "fp8")
GQA_TILE_ROWS = 16      # query heads of one KV head packed into a 16-row tensor-core tile
SPLIT_TOKENS = 256      # fewest cached tokens one split-KV work item takes
TILE = 128              # FlashAttention query and key tile


def covers(op: Op, gpu) -> bool:
    """Whether a kernel model prices this op (else the per-class model does)."""
    if op.op_class == OpClass.GEMM:
        return op.shape.groups == 1.0 and op.dtype in GEMM_DTYPES and op.dtype in gpu.peak
    if op.op_class in (OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE):
        s = op.shape
        return (isinstance(s, AttentionShape) and s.heads > 0 and s.kv_heads > 0 and s.d_qk == s.d_v and s.sequences > 0
                and op.dtype in ATTENTION_DTYPES)
    return False


def gemm_seconds(op: Op, gpu, engine: str, t_extra_memory: float = 0.0) -> tuple[float, float, float, float]:
    """(time, compute, memory, fixed) seconds of a GEMM op."""
    p = params_for("gemm", gpu.arch, op.dtype, engine).params
    c = ceilings(gpu)
    s = op.shape
    t_c, _, t_quant = (float(x) for x in gemm_parts(s.m, s.n, s.k, DTYPE_BYTES[op.dtype],
                                                   c.peak_flops(op.dtype), c, p))
    if op.alu_ops:   # CUDA-core work (in-kernel dequantization) beside the tensor cores
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * op.bandwidth_share), t_extra_memory)
    fixed = p.floor_s + t_quant
    return fixed + float(combine(t_c, t_m, p.smooth)), t_c, t_m, fixed


def kv_fit_dtype(op: Op) -> str:
    """The KV dtype an attention fit is keyed by: fp8 for a cache of about a byte per element or less
    (fp8, int8, KIVI's 2/4 bits), else bf16."""
    return "fp8" if 0 < op.shape.kv_element_bytes <= 1.0 else "bf16"


def prefill_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0):
    """(time, compute, memory, fixed) of a prefill attention op: B = its sequences, each with the
    equivalent causal length L whose L(L+1)/2 pairs equal the op's pairs per sequence."""
    p = params_for("prefill_attention", gpu.arch, kv_dtype, engine).params
    c = ceilings(gpu)
    s = op.shape
    b = s.sequences
    pairs = s.pairs / b
    length = (math.sqrt(1.0 + 8.0 * pairs) - 1.0) / 2.0
    group = s.heads / s.kv_heads
    nq = math.ceil(length * group / TILE)
    nk = math.ceil(length / TILE)
    mean_k = (nk + 1) / 2.0
    t_pair = 4.0 * TILE * TILE * s.d_qk / (c.peak_flops(op.dtype) / c.sms * p.compute_eff) + p.tile_s
    grid = b * s.kv_heads * nq * (p.cta_s + mean_k * t_pair) / c.sms
    t_c = max(grid, p.cta_s + nk * t_pair / p.kv_splits)
    if op.alu_ops:
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * op.bandwidth_share), t_extra_memory)
    fixed = p.floor_s + p.token_s * s.queries / c.sms
    total = fixed + float(combine(t_c, t_m, p.smooth))
    if s.kv_bytes > 0:   # over a cached context: never cheaper than the decode kernel streaming that cache
        _, _, t_stream, fixed_decode = decode_seconds(op, gpu, engine, kv_dtype, t_extra_memory)
        if fixed_decode + t_stream > total:
            return fixed_decode + t_stream, t_c, t_stream, fixed_decode
    return total, t_c, t_m, fixed


def decode_seconds(op: Op, gpu, engine: str, kv_dtype: str, t_extra_memory: float = 0.0):
    """(time, compute, memory, fixed) of a decode attention op (its bytes and FLOPs, the fitted rates)."""
    p = params_for("decode_attention", gpu.arch, kv_dtype, engine).params
    c = ceilings(gpu)
    s = op.shape
    items = s.sequences * s.kv_heads * min(math.floor(p.kv_splits), math.ceil(s.max_context / SPLIT_TOKENS))
    occupancy = min(1.0, items / c.sms)
    t_m = max(op.hbm_bytes / (c.hbm_bw * p.mem_eff * occupancy * op.bandwidth_share), t_extra_memory)
    group = s.heads / s.kv_heads
    padded = math.ceil(group / GQA_TILE_ROWS) * GQA_TILE_ROWS / group
    t_c = op.flops * padded / (c.peak_flops(op.dtype) * p.compute_eff)
    if op.alu_ops:
        t_c = max(t_c, op.alu_ops / gpu.peak_flops("fp32"))
    fixed = p.floor_s + p.seq_s * s.sequences * s.kv_heads / c.sms
    return fixed + float(combine(t_c, t_m, p.smooth)), t_c, t_m, fixed


def collective_seconds(collective: str, nbytes: float, gpus: int, link, engine: str, cuda_graphs: bool = True):
    """Seconds of one collective over `link`: NCCL's best protocol (NVLS on an NVSwitch fabric), or the
    engine's custom all-reduce under CUDA graphs; a send/recv is a one-way copy at NCCL's Simple rate."""
    nccl, engine_params, _ = coll.collective_params(link.name, engine)
    bw, lat = link.bandwidth.value, link.latency.value
    if collective == "send_recv":
        simple = nccl.protocols["Simple"]
        return simple.base_s + simple.step_lat * lat + nbytes / (bw * simple.bw_eff)
    return coll.collective_time(collective, nbytes, gpus, bw, lat, link.nvswitch, nccl, engine_params,
                                graphed=cuda_graphs)


def kernel_provenance(gpu, engine: str) -> str:
    """What the kernel-model parameters used for `gpu` were fitted on (and any fallback taken)."""
    parts = []
    for op, dtype in (("gemm", "bf16"), ("prefill_attention", "bf16"), ("decode_attention", "bf16")):
        parts.append(f"{op}: {params_for(op, gpu.arch, dtype, engine).provenance}")
    return "; ".join(parts)
