"""Kernels an engine's version runs differently from the ones its fits were measured on.

Before TensorRT-LLM's XQA kernel (v0.8; its blog: "XQA kernel provides optimization for MQA and GQA during
generation phase ... reducing data loading", 2.4x Llama-70B throughput), generation attention ran the masked
MHA kernel: one thread block per (sequence, query head), each streaming its KV head's cache itself, so a GQA
model's cache is read once per query head, as if it were multi-head (g = heads / kv_heads times the bytes).
vLLM's own paged kernel before its FlashAttention decode (v0.2-0.4, csrc/attention/attention_kernels.cu: grid
(num_heads, num_seqs, partitions)) does the same. A version profile says so with
`kernels.gqa_decode_shares_kv: false` (engine_profiles/versions/). Today's TensorRT-LLM still falls back
to it for groups over 32 query heads (`kernels.gqa_decode_max_group: 32`, engine_profiles/trtllm.yaml).
Every re-read is charged to HBM, an upper bound, unless the version profile says the blocks of one KV head's query
heads are dispatched together (`kernels.gqa_decode_rereads_in_l2`: vLLM 0.2.7's grid has the query head in x):
then, on a GPU whose profile gives its L2 bandwidth (the A100's), the first read of a line goes to HBM and the
group's other reads hit L2, so the kernel takes the longer of its unique HBM bytes and all its reads at the L2
read rate a microbenchmark measured (kernel_timing.l2_read_bandwidth: A100 5.4 TB/s; else the datasheet's)
(ops.L2_REREAD, kernel_timing.fitted_decode_seconds).

An fp8 GEMM's fitted time includes the quantization of its bf16 input (the corpus times TensorRT-LLM's
`Linear.forward` on a bf16 input: a per-tensor quantize, then the scaled GEMM; kernel_models/gemm.py t_quant).
Where the engine's kernel before the GEMM writes the fp8 input itself, that kernel does not run: the profile lists
those GEMMs' roles (`kernels.quantized_gemm_inputs`), and their ops carry `input_quantized`.
Which quantizer the corpus times: collect_gemm.py builds the fp8 weights with no `input_scale`, so TensorRT-LLM's
FP8QDQLinearMethod.process_weights_after_loading_vanilla sets input_scale None and apply() runs the DYNAMIC
quantize_e4m3_per_tensor (a scale-computing absmax pass, then the scaling), the fit's quant term; a ModelOpt FP8
checkpoint carries input_scale and runs static_quantize_e4m3_per_tensor, the scaling alone. The corpus measures
both kernels (modern/*/trtllm/quantize__computescale_perf, __scale_matrix_perf: ~8.3 and ~2.1 us at small m on
B200, ~7.2 and ~1.4 on H100); a profile with `kernels.static_fp8_input_scale` prices the other fp8 GEMMs' input
by the scaling kernel's fit (ops carry `static_input_scale`).

TensorRT-LLM's attention operator applies RoPE and appends the new K and V to the cache itself (its generation
kernel on the fly, its context phase in a preprocessing kernel of the operator: docs/source/advanced/
gpt-attention.md), and the corpus times that whole operator (aiconfigurator collect_attn.py: TrtllmAttention
forward on unrotated QKV with RoPE parameters). Its profiles list those roles (`kernels.attention_includes`) and
the graph's own RoPE and KV-write ops are dropped, not charged twice. (Its MLA operator is timed by its own fit
and keeps the graph's ops: what that fit covers is not established here.)"""
from __future__ import annotations

from dataclasses import replace

from ..specs.engines import EngineSpec
from .dequant import GROUP_QUANT_SUFFIX
from .graph import ADD_FLOPS
from .ops import L2_REREAD, Op, OpClass, OpRole, StreamShape, streaming
from .residual_norm import residual_norm_fused
from .sort_sampler import sorted_vocab_sampling

# The dtypes whose GEMM input an engine's preceding kernel may write quantized (the profiles' quantized_gemm_inputs
# are sourced for fp8 inputs). The NVFP4 fits carry a quantization term too, but no profile sources an fp4
# producer, so an fp4 GEMM always pays its fitted quantize.
QUANTIZED_GEMM_DTYPES = ("fp8",)
# An all-reduce fused with the next norm writes its GEMM's input in fp8 or NVFP4 (AllReduceFusionOp's QUANT_FP8 and
# QUANT_NVFP4 epilogues), and the ops it does itself: the residual add and the norm after each TP all-reduce.
FUSED_AFTER_ALLREDUCE = {OpRole.ATTN_ALLREDUCE: (OpRole.ATTN_RESIDUAL, OpRole.POST_ATTN_NORM, OpRole.MLP_UP),
                         OpRole.MLP_ALLREDUCE: (OpRole.MLP_RESIDUAL, OpRole.INPUT_NORM, OpRole.QKV_PROJ)}
FUSED_OUTPUT_BYTES = {"fp8": 1.0, "fp4": 0.5 + 1 / 16}   # per element of the next GEMM's input (NVFP4: fp8 scale / 16)


# HBM bytes per score beyond the fused kernel's, in units of (activation bytes, fp32 bytes): QK^T written (1 act),
# scaled (read + write: 2), mask added (2), softmax read (1) written fp32, cast (fp32 read) written back (1), read
# by PV (1): 8 activation-sized and 2 fp32 accesses (transformers 4.3x LlamaAttention/OPTAttention.forward).
EAGER_SCORE_ACCESSES = (8, 2)
EAGER_SCORE_OPS = 6.0   # scale, mask add, max, exp, sum, divide per score (CUDA-core work; assumed)


def eager_attention(op: Op) -> list[Op]:
    """A fused attention op as eager kernels: the op over the full (query, key) rectangle (the causal mask is added
    to it, not skipped), then one op streaming the scores between the two matmuls."""
    s = op.shape
    if op.role != OpRole.ATTENTION or op.op_class not in (OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE) \
            or s.parts or not s.pairs:
        return [op]
    full = max(s.pairs, s.queries * s.max_context) if op.op_class == OpClass.ATTENTION_PREFILL else s.pairs
    grow = full / s.pairs
    run = replace(op, flops=op.flops * grow, shape=replace(s, pairs=full),
                  formula=op.formula + (f"; eager: the full score rectangle ({grow:.2f}x the causal pairs)"
                                        if grow > 1 else "; eager"))
    scores = full * s.heads
    return [run, eager_scores_op(scores, 4.0 if op.dtype == "fp32" else 2.0, op)]


def eager_scores_op(scores: float, act_bytes: float, op: Op) -> Op:
    """The scale, mask, fp32 softmax and cast kernels over `scores` (per layer), with PV's read of them."""
    a, f = EAGER_SCORE_ACCESSES
    return Op("eager_attention_scores", OpClass.ELEMENTWISE, EAGER_SCORE_OPS * scores,
              {"hbm": scores * (a * act_bytes + f * 4.0)}, "fp32", StreamShape(scores), op.count,
              f"{scores:g} scores x ({a} x {act_bytes:g} B + {f} x 4 B): QK^T written, scaled, masked, "
              "softmaxed in fp32, cast, read by PV")


def is_gqa_decode(op: Op) -> bool:
    s = op.shape
    return (op.op_class == OpClass.ATTENTION_DECODE and op.role == OpRole.ATTENTION
            and getattr(s, "kv_heads", 0) > 0 and s.heads > s.kv_heads)


def unshared_gqa_decode(op: Op, rereads_in_l2: bool = False) -> Op:
    """The decode attention op of a kernel that reads the cache once per query head: the op of an MHA
    model with `heads` KV heads (its extra cache reads from HBM, one work item per query head);
    `rereads_in_l2`: the extra reads marked as ones L2 serves where the GPU's L2 bandwidth is known."""
    s = op.shape
    g = s.heads / s.kv_heads
    extra = s.kv_bytes * (g - 1.0)
    marked = {L2_REREAD: op.bytes.get(L2_REREAD, 0.0) + extra} if rereads_in_l2 else {}
    return replace(op, bytes={**op.bytes, "hbm": op.bytes.get("hbm", 0.0) + extra, **marked},
                   shape=replace(s, kv_heads=s.heads, kv_bytes=s.kv_bytes * g, ctas=s.ctas * g),
                   formula=op.formula + f"; no GQA sharing in this engine version: the cache read {g:g}x"
                   + (", the re-reads from L2 where its bandwidth is known" if rereads_in_l2 else ""))


def engine_ops(ops, engine: EngineSpec | None, model=None):
    """The pass's ops as this engine version runs them (`model`: the ModelSpec, for fusions it conditions)."""
    if engine is None:
        return ops
    ops = fused_ops(ops, engine, model)
    if engine.eager_attention:
        ops = [run for op in ops for run in eager_attention(op)]
    if engine.gqa_decode_shares_kv and engine.gqa_decode_max_group == 0:
        return ops
    return [as_run(op, engine) for op in ops]


# A row-parallel linear's bias role and the all-reduce after which its engine adds it (vLLM RowParallelLinear.forward).
ROW_BIAS_ROLES = {OpRole.O_PROJ: (OpRole.O_BIAS, OpRole.ATTN_ALLREDUCE),
                  OpRole.MLP_DOWN: (OpRole.MLP_DOWN_BIAS, OpRole.MLP_ALLREDUCE)}


def with_row_bias_adds(ops, model) -> list[Op]:
    """The ops with a bias-add kernel after each biased row-parallel linear (o_proj where the model has o_bias, the
    dense MLP's down projection where it has mlp_bias), placed after the TP all-reduce that follows the GEMM: vLLM's
    RowParallelLinear.forward runs the GEMM without its bias, all-reduces, then `output_ + self.bias` (one more
    kernel, and in an eager pass one more launch from Python)."""
    biased = {OpRole.O_PROJ: model.o_bias, OpRole.MLP_DOWN: model.mlp_bias}
    out, pending = [], None   # pending: (bias op, the all-reduce role it waits for)
    for op in ops:
        if pending is not None and not (op.op_class == OpClass.COMM and op.role == pending[1]):
            out.append(pending[0])
            pending = None
        out.append(op)
        if pending is not None:   # (op is that all-reduce)
            out.append(pending[0])
            pending = None
        if op.op_class == OpClass.GEMM and biased.get(op.role):
            pending = (bias_add_op(op, ROW_BIAS_ROLES[op.role][0]), ROW_BIAS_ROLES[op.role][1])
    if pending is not None:
        out.append(pending[0])
    return out


def bias_add_op(gemm_op: Op, role: OpRole) -> Op:
    """`output_ + self.bias` over a GEMM's [M, N] output: the output read and written, the bias row read."""
    s = gemm_op.shape
    dtype = gemm_op.dtype if gemm_op.dtype in ("fp16", "bf16", "fp32") else "bf16"
    a = 4.0 if dtype == "fp32" else 2.0
    return streaming(role.value, OpClass.ELEMENTWISE, s.m * s.n, reads=1, writes=1, flops_per_element=ADD_FLOPS,
                     elem_bytes=a, dtype=dtype, count=gemm_op.count, extra_bytes=s.n * a, role=role)


def fused_ops(ops, engine: EngineSpec | None, model=None):
    """The ops less those the engine's attention operator does itself (its fitted time includes them), each
    fp8 GEMM whose input the engine's preceding kernel writes quantized marked so; less those its TP all-reduce
    does itself where it fuses the next norm for `model` (allreduce_fused), each residual add left folded into the
    RMSNorm after it where the engine's norm takes the residual (residual_norm.py); with a bias-add kernel after each of
    `model`'s biased row-parallel linears where the engine adds their bias apart (with_row_bias_adds); its absorbed-MLA
    bmms at 16 bits where it dequantizes their weights at load (absorb_bf16); its sampling
    over a full-vocabulary sort where its top-k/top-p path sorts (sort_sampler.py)."""
    if engine is None:
        return ops
    if engine.row_linear_bias_add and model is not None:
        ops = with_row_bias_adds(ops, model)
    if fuses_allreduce_norm(engine, model):
        ops = allreduce_fused(ops, engine)
    if engine.fused_add_rmsnorm:   # (after allreduce_fused: the residual adds an all-reduce did are gone)
        ops = residual_norm_fused(ops, model)
    if engine.attention_includes and not any(op.role == OpRole.MLA_ATTENTION for op in ops):
        ops = [op for op in ops if not (op.role is not None and op.role.value in engine.attention_includes)]
    if engine.quantized_gemm_inputs:
        ops = [quantized_input(op, "fp8 input written by the kernel before it (no quantization kernel)")
               if takes_quantized_input(op, engine) else op for op in ops]
    if engine.mla_absorb_bf16:
        ops = [absorb_bf16(op) for op in ops if not is_absorb_quantize(op)]
    if engine.sampler_sorts_vocab:
        ops = [sorted_vocab_sampling(op) if op.role == OpRole.SAMPLING else op for op in ops]
    if engine.static_fp8_input_scale:
        ops = [static_scaled(op) if op.op_class == OpClass.GEMM and op.dtype in QUANTIZED_GEMM_DTYPES
               and not op.input_quantized and op.shape.groups == 1.0 else op for op in ops]
    return ops


ABSORB_ROLES = (OpRole.Q_ABSORB, OpRole.V_ABSORB)


def is_absorb_quantize(op: Op) -> bool:
    """The block-FP8 input quantize dequant.block_scale_ops put before an absorbed-MLA bmm."""
    return op.part_of in ABSORB_ROLES and op.name.endswith(GROUP_QUANT_SUFFIX)


def absorb_bf16(op: Op) -> Op:
    """An absorbed-MLA bmm as an engine that dequantizes kv_b_proj at load runs it: a 16-bit GEMM over 16-bit
    activations and weights, whatever the checkpoint stores (vLLM: MLAAttention.process_weights_after_loading keeps
    bf16 copies of W_UK_T / W_UV and calls torch.bmm; its fp8 bmm is ROCm AITER's alone; engine_profiles/vllm.yaml),
    a 16-bit checkpoint's too: the bmm, not a dense GEMM, is the kernel its mla_bmm fit measured."""
    if op.role not in ABSORB_ROLES or op.op_class != OpClass.GEMM or op.bmm_fit:
        return op
    s = op.shape
    heads = s.bmm_heads or 1.0
    hbm = (s.m * (s.k + s.n) + heads * s.k * s.n) * 2.0   # activations in and out, every head's weights, at 2 B
    return replace(op, dtype="bf16", bytes={**op.bytes, "hbm": hbm}, alu_ops=0.0, input_quantized=False,
                   static_input_scale=False, int_weights=False, block_scaled=False, fp4_weights=False,
                   bmm_fit=s.bmm_heads > 0,
                   formula=f"2*M*N*K with M={s.m:g} ({heads:g} heads) N={s.n:g} K={s.k:g}; bytes = (M*(K+N) + "
                   "heads*K*N) * 2 B: a 16-bit torch.bmm on weights dequantized at load (kernels.mla_absorb_bf16), "
                   "priced by the engine's mla_bmm fit")


def static_scaled(op: Op) -> Op:
    """The fp8 GEMM op quantizing its bf16 input with the checkpoint's static scale: one scaling kernel, no absmax
    pass (TensorRT-LLM's FP8QDQLinearMethod.apply static branch, taken when the checkpoint has input_scale)."""
    return replace(op, static_input_scale=True, formula=f"{op.formula}; input scaled by the checkpoint's static scale")


def quantized_input(op: Op, why: str) -> Op:
    """The GEMM op with its input arriving quantized (no quantization kernel of its own), `why` in its formula."""
    return replace(op, input_quantized=True, formula=f"{op.formula}; {why}")


def fuses_allreduce_norm(engine: EngineSpec, model) -> bool:
    """Whether the engine's TP all-reduces also add the residual, apply the next RMSNorm and quantize the next
    GEMM's input for this model (kernels.allreduce_norm_fusion: its families, each from its hidden size)."""
    if not engine.allreduce_norm_fusion or model is None:
        return False
    least = dict(engine.allreduce_norm_fusion).get(model.family)
    return least is not None and model.hidden_size >= least


def allreduce_fused(ops, engine: EngineSpec) -> list:
    """A TP layer's ops where each all-reduce its custom kernel takes (a message within the engine's workspace
    cap) adds the residual, applies the next RMSNorm and writes the next GEMM's input quantized (TensorRT-LLM's
    LlamaDecoderLayer PRE_/POST_MLP_FUSION): the residual and norm kernels after it do not run and that GEMM (fp8
    or fp4) runs no quantization kernel, while the all-reduce carries the epilogue's HBM pass (epilogue_bytes).
    A larger all-reduce runs NCCL and the ops after it as they were (allreduceOp.cpp fallbackRunSubsequentOps).
    (The first layer's input norm, which no all-reduce precedes, is fused with the rest: one norm of a pass.)
    An engine whose fusion has its own size caps (vLLM's, EngineSpec.allreduce_fusion_cap) fuses within them, its
    fused all-reduce priced by the fit of the engine whose kernel it runs (kernels.allreduce_fusion_kernel)."""
    reduces = {op.role for op in ops if op.op_class == OpClass.COMM and op.role in FUSED_AFTER_ALLREDUCE
               and 0 < op.shape.bytes <= engine.allreduce_fusion_cap(int(op.shape.gpus))}
    dropped = {r for reduce in reduces for r in FUSED_AFTER_ALLREDUCE[reduce][:2]}
    # an engine whose fused kernel writes the 16-bit norm output (SGLang's) leaves each GEMM its own quantize
    quantized = {FUSED_AFTER_ALLREDUCE[reduce][2] for reduce in reduces} if engine.allreduce_fusion_quantizes \
        else set()
    gemm_dtypes = {op.role: op.dtype for op in ops if op.op_class == OpClass.GEMM and op.role in quantized}
    out = []
    for op in ops:
        if op.role in dropped and op.op_class != OpClass.GEMM:
            continue
        if op.role in reduces and op.op_class == OpClass.COMM:
            gemm_dtype = gemm_dtypes.get(FUSED_AFTER_ALLREDUCE[op.role][2], "bf16")
            op = replace(op, bytes={**op.bytes, "hbm": epilogue_bytes(op.shape.bytes, gemm_dtype)},
                         collective_kernel=engine.allreduce_fusion_kernel,
                         formula=f"{op.formula}; + its fused residual/RMSNorm/quantize epilogue's HBM pass"
                                 + (f" ({engine.allreduce_fusion_kernel}'s fused all-reduce kernel)"
                                    if engine.allreduce_fusion_kernel else ""))
        elif (op.role in quantized and op.op_class == OpClass.GEMM and op.dtype in ("fp8", "fp4")
                and not op.input_quantized):
            op = quantized_input(op, "input written quantized by the fused all-reduce + residual + RMSNorm kernel "
                                 "before it")
        out.append(op)
    if OpRole.MLP_ALLREDUCE in reduces:
        out = moe_finalize_fused(out, engine)
    return out


def moe_finalize_fused(ops, engine: EngineSpec) -> list:
    """A TP MoE layer's ops where the engine's fused all-reduce also finalizes NVFP4 experts and adds the shared
    expert's output (kernels.moe_finalize_allreduce_max_tokens; TensorRT-LLM's DeepseekV3DecoderLayer.forward_MoE
    with do_finalize False, MoEAllReduce): no shared-expert add kernel runs, and the all-reduce after it reads the
    shared output (its HBM bytes). Steps of more tokens, or other experts, finalize in the MoE and add apart."""
    cap = engine.moe_finalize_allreduce_max_tokens
    down = next((op for op in ops if op.role == OpRole.EXPERT_DOWN and op.dtype == "fp4"), None)   # NVFP4
    if not cap or down is None:
        return ops
    hidden = down.shape.n
    out, shared_read = [], 0.0
    for op in ops:
        if op.role == OpRole.SHARED_EXPERT_ADD and op.shape.elements / hidden <= cap:
            shared_read = op.bytes["hbm"] / 3   # (the add read two tensors and wrote one of this size)
            continue
        if shared_read and op.role == OpRole.MLP_ALLREDUCE and op.op_class == OpClass.COMM:
            op = replace(op, bytes={**op.bytes, "hbm": op.bytes.get("hbm", 0.0) + shared_read},
                         formula=f"{op.formula}; + the MoE finalize's shared-expert add (moe_finalize_allreduce)")
            shared_read = 0.0
        out.append(op)
    return out


def epilogue_bytes(message_bytes: float, gemm_dtype: str) -> float:
    """HBM bytes of a fused all-reduce's epilogue over a 16-bit message: the residual read and written back, and
    the normed output written in the next GEMM's input format (fp8: 1 B, NVFP4: 4 bits + a scale per 16, else
    16-bit). The unfused kernels it replaces move 13 B per element in three launches (add 6, norm 4, quantize 3)."""
    elements = message_bytes / 2
    return elements * (2 + 2 + FUSED_OUTPUT_BYTES.get(gemm_dtype, 2.0))


def takes_quantized_input(op: Op, engine: EngineSpec) -> bool:
    return (op.op_class == OpClass.GEMM and op.dtype in QUANTIZED_GEMM_DTYPES and not op.input_quantized
            and engine.gemm_input_quantized(op.role))


def as_run(op: Op, engine: EngineSpec) -> Op:
    """One op as the engine version runs it (a mixed pass's attention: its decode kernel so)."""
    parts = getattr(op.shape, "parts", ())
    if parts:
        run = tuple(as_run(p, engine) for p in parts)
        if run == parts:
            return op
        extra = sum(r.hbm_bytes - p.hbm_bytes for r, p in zip(run, parts))
        return replace(op, bytes={**op.bytes, "hbm": op.hbm_bytes + extra}, shape=replace(op.shape, parts=run))
    if is_gqa_decode(op) and not engine.shares_gqa_decode(group(op)):
        return unshared_gqa_decode(op, engine.gqa_rereads_in_l2)
    return op


def group(op: Op) -> float:
    """Query heads per KV head of an attention op."""
    return op.shape.heads / op.shape.kv_heads
