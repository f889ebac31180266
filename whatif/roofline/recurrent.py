"""Recurrent token mixers priced by their mechanism: Gated DeltaNet (linear attention) and Mamba-2 (SSD).

Neither keeps a KV cache: each sequence keeps a constant state per layer (a key x value matrix per value head, or a
head_dim x state matrix per Mamba head) and a short-convolution state. A decode step reads and writes the state
once per token; a prefill runs the chunked form (FLA's chunk_gated_delta_rule, Mamba-2's SSD): matmuls inside each
chunk on the tensor cores, the state carried between chunks and stored once per chunk. No kernel table here:
each op is one function (`gdn_op`, `ssd_op`, `short_conv_op`) whose FLOPs and bytes a fitted efficiency can price
later; today the class model prices them (attention_prefill / attention_decode / elementwise classes).
Heads split over the attention TP group; B and C of Mamba-2 split with its groups when they divide, else each GPU
holds them all.
"""
from __future__ import annotations

from ..specs.model_layers import STATE_DTYPE_BYTES
from ..specs.models import ModelSpec
from .attention import DECODE_MAX_QUERIES
from .config import ForwardBatch, Precision
from .mlp import weight_gemm
from .ops import Op, OpClass, OpRole, StreamShape, streaming

GDN_CHUNK = 64            # FLA's chunk size for Gated DeltaNet prefill (vLLM, SGLang)
CONV_FLOPS = 2.0          # multiply-add per tap of the depthwise short convolution
GATE_FLOPS = 8.0          # gated RMSNorm: square, sum, scale, weight, sigmoid-gate multiply per element


def _split(groups) -> tuple[float, float, float]:
    """(decode tokens, prefill tokens, sequences) of a pass's groups: up to DECODE_MAX_QUERIES new tokens a sequence
    run the step-by-step recurrence, longer runs the chunked form."""
    dec = sum(n * q for q, _, n in groups if q <= DECODE_MAX_QUERIES)
    pre = sum(n * q for q, _, n in groups if q > DECODE_MAX_QUERIES)
    return dec, pre, sum(n for _, _, n in groups)


def state_writes(groups, verify: bool) -> float:
    """States a pass writes per head: one a sequence, or in a verify pass one a verified token of each step-by-step
    sequence, as the drafts may be rejected (SGLang's GDN target_verify: disable_state_update with an
    intermediate_states_buffer of cache_steps states, layers/attention/linear/kernels/gdn_triton.py)."""
    return float(sum(n * q if verify and q <= DECODE_MAX_QUERIES else n for q, _, n in groups))


def recurrent_op(name: str, role: OpRole, groups, heads: float, state: float, state_bytes: float,
                 step_flops: float, chunk_flops: float, chunk: int, io_elements: float, act_bytes: float,
                 dtype: str, count: int, formula: str, verify: bool = False) -> Op:
    """One recurrent scan over a pass, per GPU: `state` elements per head (state_bytes each), `step_flops` per token
    and head in a decode step, `chunk_flops` per token and head in the chunked prefill, `io_elements` per token (the
    inputs it reads and the output it writes). Each sequence reads its state once and writes it once (a verify pass:
    once a verified token, state_writes); the chunked form also stores the state at each chunk boundary (written,
    then read back)."""
    dec, pre, seqs = _split(groups)
    boundaries = sum(n * -(-q // chunk) for q, _, n in groups if q > DECODE_MAX_QUERIES)
    flops = heads * (dec * step_flops + pre * chunk_flops)
    state_io = (seqs + state_writes(groups, verify)) * heads * state * state_bytes + \
        2.0 * boundaries * heads * state * state_bytes
    hbm = state_io + (dec + pre) * io_elements * act_bytes
    cls = OpClass.ATTENTION_PREFILL if pre else OpClass.ATTENTION_DECODE
    shape = StreamShape((dec + pre) * heads)
    return Op(name, cls, flops, {"hbm": hbm}, dtype, shape, count, formula, role)


def gdn_op(model: ModelSpec, groups, t: int, prec: Precision, count: int, verify: bool = False) -> Op:
    """Gated DeltaNet's recurrence. Step per value head: decay the dk x dv state, read it with k (k^T S), write the
    delta-rule outer product, read it with q: about 8 dk dv FLOPs. Chunked (C tokens): q k^T and its masked product
    with v inside the chunk (2C(dk + dv)), the WY/UT transform (2C dk), and the inter-chunk terms q S, k S, k^T v
    (6 dk dv)."""
    la = model.linear_attention
    dk, dv, C = la.key_head_dim, la.value_head_dim, GDN_CHUNK
    heads = la.value_heads / t
    # q, k, v, o, the decay gate (a scalar a head, or KDA's one a key channel) and beta
    io = (2 * la.key_heads * dk + 2 * la.value_heads * dv + la.gate_elements + la.value_heads) / t
    sb = STATE_DTYPE_BYTES.get(la.state_dtype, prec.kv_bytes)
    kda = la.gate == "channel"   # the same delta rule and state; the decay a diagonal, not a scalar (still dk*dv)
    name = "kimi_delta_attention" if kda else "gated_deltanet"
    what = "Kimi Delta Attention (GDN's form, per-channel decay)" if kda else "Gated DeltaNet"
    return recurrent_op(name, OpRole.LINEAR_ATTENTION, groups, heads, dk * dv, sb, 8.0 * dk * dv,
                        2.0 * C * (dk + dv) + 2.0 * C * dk + 6.0 * dk * dv, C, io, prec.act_bytes, prec.activation,
                        count, f"{what}: {heads:g} value heads x {dk}x{dv} state ({sb:g} B) per sequence, "
                               f"read+written once; step 8*dk*dv FLOPs/token/head, chunked prefill (C={C}) "
                               f"2C(dk+dv)+2C*dk+6*dk*dv", verify)


def ssd_op(model: ModelSpec, groups, t: int, prec: Precision, count: int, verify: bool = False) -> Op:
    """Mamba-2's SSD scan. Step per head: h = exp(dt A) h + dt B x, y = C h (about 6 hd N FLOPs). Chunked (L tokens):
    C B^T inside the chunk (2 L N, shared by the heads of a group), its masked product with x (2 L hd), and the
    chunk states B^T x and their read C h (4 hd N)."""
    mb = model.mamba
    hd, N, L = mb.head_dim, mb.state_size, mb.chunk_size
    heads = mb.heads / t
    per_group = mb.heads / mb.n_groups
    groups_gpu = mb.n_groups / t if mb.n_groups % t == 0 else mb.n_groups
    io = (2 * mb.inner / t + 2 * groups_gpu * N + heads)     # x, y, B, C, dt
    sb = STATE_DTYPE_BYTES.get(mb.state_dtype, prec.kv_bytes)
    return recurrent_op("mamba2_ssd", OpRole.SSM_SCAN, groups, heads, hd * N, sb, 6.0 * hd * N,
                        2.0 * L * N / per_group + 2.0 * L * hd + 4.0 * hd * N, L, io, prec.act_bytes,
                        prec.activation, count,
                        f"Mamba-2 SSD: {heads:g} heads x {hd}x{N} state ({sb:g} B) per sequence, read+written once; "
                        f"step 6*hd*N FLOPs/token/head, chunked prefill (L={L}) 2LN/heads_per_group+2L*hd+4*hd*N",
                        verify)


def short_conv_op(channels: float, kernel: int, batch: ForwardBatch, prec: Precision, count: int) -> Op:
    """The depthwise causal convolution before the scan: `kernel` taps a channel a token, and each sequence's last
    kernel-1 inputs (the conv state) read and written."""
    op = streaming("short_conv", OpClass.ELEMENTWISE, batch.tokens * channels, reads=1, writes=1,
                   flops_per_element=CONV_FLOPS * kernel, elem_bytes=prec.act_bytes, dtype=prec.activation,
                   count=count, extra_bytes=2.0 * batch.sequences * (kernel - 1) * channels * prec.kv_bytes,
                   role=OpRole.SHORT_CONV)
    return op


def gdn_split_op(elements: float, prec: Precision, count: int) -> Op:
    """Gated DeltaNet's split of its input projections' outputs (q, k, v, z and the b, a gates) into the layouts the
    conv and the scan read, one Triton kernel reading and writing each element once: sglang models/qwen3_next.py and
    qwen3_5.py `fused_qkvzba_split_reshape_cat` after in_proj_qkvz / in_proj_ba (vLLM's and TensorRT-LLM's
    Qwen3-Next run the same kernel in CUDA-graph decode). No GDN fit holds it (the gdn_perf tables time the conv and
    the recurrence). The 16-bit GEMM outputs, whatever the GEMMs' input precision."""
    return streaming("mixer_split", OpClass.ELEMENTWISE, elements, reads=1, writes=1, flops_per_element=0.0,
                     elem_bytes=prec.hidden_bytes, dtype="bf16", count=count, role=OpRole.MIXER_SPLIT)


def kda_gate_ops(la, tokens: float, t: int, prec: Precision, count: int) -> list[Op]:
    """Kimi Delta Attention's low-rank gates after its input projections (vLLM / transformers KimiDeltaAttention):
    f_b and g_b lift the rank-r f_a / g_a outputs to heads x dk and heads x dv (column-parallel: split by TP; f_a and
    g_a are replicated, so the input projection carries 2r columns on every GPU), and fused_kda_gate turns f into
    the per-channel log-decay (softplus, A_log scale, dt_bias) once an element."""
    r, f_n, g_n = la.gate_rank, la.gate_elements / t, la.value_heads * la.value_head_dim / t
    return [weight_gemm("kda_f_b_proj", tokens, f_n, r, prec, count, OpRole.QKV_PROJ),
            weight_gemm("kda_g_b_proj", tokens, g_n, r, prec, count, OpRole.QKV_PROJ),
            streaming("kda_gate", OpClass.ELEMENTWISE, tokens * f_n, reads=1, writes=1, flops_per_element=GATE_FLOPS,
                      elem_bytes=prec.act_bytes, dtype=prec.activation, count=count, role=OpRole.MIXER_GATE)]


def recurrent_block(model: ModelSpec, mixer: str, batch: ForwardBatch, t: int, prec: Precision,
                    count: int) -> list[Op]:
    """A recurrent mixer on one GPU: input projection, short conv, scan, gated norm, output projection."""
    tokens, d = batch.tokens, model.hidden_size
    gates: list[Op] = []
    if mixer == "linear":
        la = model.linear_attention
        v = la.value_heads * la.value_head_dim / t
        proj_n = (la.conv_channels + la.value_heads * la.value_head_dim + 2 * la.value_heads) / t
        if la.gate == "channel":
            proj_n, gates = (la.conv_channels + la.value_heads) / t + 2 * la.gate_rank, kda_gate_ops(la, tokens, t,
                                                                                                 prec, count)
        conv, kernel, scan, inner = la.conv_channels / t, la.conv_kernel, gdn_op(model, batch.groups, t, prec,
                                                                                  count, batch.verify), v
    else:
        mb = model.mamba
        inner = mb.inner / t
        conv = mb.conv_channels / t if mb.n_groups % t == 0 else inner + 2 * mb.n_groups * mb.state_size
        proj_n, kernel = inner + conv + mb.heads / t, mb.conv_kernel
        scan = ssd_op(model, batch.groups, t, prec, count, batch.verify)
    fused = mixer == "linear" and model.linear_attention.gate != "channel"   # KDA's projections run unfused
    split = [gdn_split_op(tokens * proj_n, prec, count)] if fused else []
    return [
        weight_gemm("mixer_in_proj", tokens, proj_n, d, prec, count, OpRole.QKV_PROJ),
        *split,
        *gates,
        short_conv_op(conv, kernel, batch, prec, count),
        scan,
        streaming("gated_norm", OpClass.NORM, tokens * inner, reads=2, writes=1, flops_per_element=GATE_FLOPS,
                  elem_bytes=prec.act_bytes, dtype=prec.activation, count=count, role=OpRole.MIXER_GATE),
        weight_gemm("mixer_out_proj", tokens, d, inner, prec, count, OpRole.O_PROJ),
    ]
