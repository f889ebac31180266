"""An engine profile's `kernels` section: how a version runs the kernels its measured fits describe.

- `fits`: whose fitted kernels it runs (a version profile: its engine's);
- `gqa_decode_shares_kv` / `gqa_decode_max_group`: whether its decode kernel reads a KV head once for its
  query-head group (roofline/engine_kernels.py); `gqa_decode_rereads_in_l2`: where it does not, whether the blocks
  of one group are dispatched together, so L2 serves the re-reads on a GPU whose profile gives its L2 bandwidth;
- `attention_scores_materialised`: its attention runs as separate kernels (QK^T, scale, mask, softmax, PV) over
  the full score matrix written to HBM, not a fused FlashAttention kernel (roofline/engine_kernels.py);
- `eager_launch_s`: host time per kernel it launches eagerly; `eager_launch_by_arch`: the same measured on the
  hosts of other GPU generations ({arch: seconds}; a GPU of a listed architecture takes its figure);
- `eager_module_launches`: {"mla:<format>" / "dsa:<format>": launches}: the host time of its whole MLA / DSA
  attention module in an eager prefill, measured, as launches of its eager launch time (roofline/module_host.py);
- `prefill_op_launches`: {op role: launches}: kernels its eager prefill launches for one op whatif prices as one
  fitted kernel (SGLang's Gated DeltaNet chunk: roofline/op_launches.py);
- `row_linear_bias_add`: its row-parallel linears (o_proj, the MLP's down projection) add their bias in a kernel
  of their own after the GEMM (and its TP all-reduce), where the model has those biases (roofline/engine_kernels.py);
- `fused_add_rmsnorm`: its RMSNorm called with a residual adds it and normalizes in one kernel (FlashInfer's or
  sgl-kernel's fused_add_rmsnorm: reads the hidden state and the residual, writes both), so a decoder layer's
  residual add and the RMSNorm after it (the post-attention norm, the next layer's input norm) are one kernel, not
  two (roofline/residual_norm.py);
- `mla_absorb_bf16`: its absorbed-MLA batched GEMMs (q_absorb: q_nope x W_UK_T, v_absorb: latent x W_UV) run a
  16-bit torch.bmm on weights it dequantized at load, whatever kv_b_proj's stored format: no fp8 / fp4 GEMM and no
  input quantize for them (roofline/engine_kernels.py);
- `sync_around_attention`: its eager loop calls torch.cuda.synchronize() before and after each attention call,
  so the host's launches and the GPU's attention add instead of overlapping (roofline/attention_sync.py);
- `eager_input_quantize`: its dense fp8 GEMMs quantize their input in a kernel of their own, so an eager prefill
  launches two kernels for each (roofline/op_launches.py);
- `programmatic_launch`: its kernels launch with programmatic dependent launch (PDL), each starting while the one
  before it drains, so a pass (graph replay or eager) pays no inter-kernel gap (the efficiency's kernel_gap_s) on
  top of its kernels' fitted times (TensorRT-LLM with TRTLLM_ENABLE_PDL=1);
- `attention_includes`: ops its attention operator does itself, timed within its fitted kernel (RoPE, the KV
  append), so the graph's own ops for them are not run;
- `quantized_gemm_inputs`: GEMMs (roles, or all) whose fp8 input the kernel before them writes quantized, so
  no quantization kernel runs;
- `static_fp8_input_scale`: its fp8 GEMMs quantize a bf16 input with the checkpoint's static per-tensor scale
  (one scaling kernel), where the corpus's fp8 GEMM rows, fitted with no input scale, compute the scale first
  (an absmax pass): the fitted quantization term gives way to the measured scaling kernel alone;
- `allreduce_norm_fusion`: {families, min_hidden_size}: for a TP-sharded decoder layer of those model families
  with a hidden size of at least that (one size, or one per family: {family: size}), each TP all-reduce also
  adds the residual, applies the next RMSNorm and writes the next GEMM's fp8/fp4 input (TensorRT-LLM's
  AllReduceFusionOp), so those kernels do not run;
- `allreduce_fusion_max_bytes`: {arch: {tp: bytes}}: the all-reduce + norm fusion runs only on those GPU
  architectures and tensor-parallel sizes, for messages of at most that many bytes (vLLM's compile pass: its
  FlashInfer workspace by compute capability and world size); absent: wherever the custom all-reduce runs;
- `allreduce_fusion_kernel`: the engine whose fitted all-reduce prices the fused kernel (vLLM: trtllm, whose
  kernel FlashInfer's is); absent: the engine's own;
- `allreduce_fusion_quantizes`: whether the fused all-reduce writes the next GEMM's input quantized (TensorRT-LLM's
  and vLLM's epilogues); false: it writes the 16-bit normed output and that GEMM quantizes it itself (SGLang's
  FlashInfer all-reduce + residual + RMSNorm); absent: true;
- `moe_finalize_allreduce_max_tokens`: where its all-reduce + norm fusion runs for a MoE layer with NVFP4 experts on
  the TRTLLM-Gen MoE kernels (`moe_kernels trtllm-gen`), steps of at most this many tokens leave the experts
  unfinalized and the all-reduce finalizes them and adds the shared expert's output (TensorRT-LLM's
  moe_finalize_allreduce), so no shared-expert add kernel runs; absent: 0, never;
- `dp_moe_alltoall`: where its attention-DP MoE sends tokens to their experts by an all-to-all: `always`, or
  `mnnvl` (only with more EP ranks than top-k over a multi-node NVLink domain; else every rank's tokens are
  all-gathered and the expert outputs reduce-scattered: TensorRT-LLM's fused MoE);
- `dp_prefill_gather`: how its attention-DP MoE gathers every rank's tokens and combines the expert outputs in a
  step that holds a prefill: `all_gather` (an all-gather and a reduce-scatter, as in decode) or `all_reduce`
  (SGLang's SUM_LEN padding for extend batches: the gather is a zero-filled buffer all-reduced, the combine the
  MoE's all-reduce before dp_scatter);
- `shared_expert_stream`: [model families]: their MoE layers run the shared expert on a second CUDA stream beside
  the routed experts in CUDA-graph passes (roofline/shared_expert_stream.py);
- `dsa_prefill_as_decode`: [GPU architectures]: with an fp8 cache on these, it runs a DSA prefill's sparse MLA as a
  decode kernel, one row a query token over its own top-k keys (roofline/dsa_prefill.py).
Absent keys keep the defaults: the engine's own fits, shared GQA reads, the GPU profile's launch cost, nothing
fused, an all-to-all."""
from __future__ import annotations

from ..errors import WhatifError
from .op_kinds import OpRole
from .checks import boolean, choice, integer, number
from .hardware import ARCHS

KERNEL_KEYS = {"fits", "gqa_decode_shares_kv", "attention_scores_materialised", "gqa_decode_max_group",
               "gqa_decode_rereads_in_l2",
               "eager_launch_s", "eager_launch_by_arch", "attention_includes", "quantized_gemm_inputs",
               "allreduce_norm_fusion", "dp_moe_alltoall", "static_fp8_input_scale", "eager_module_launches",
               "allreduce_fusion_max_bytes", "allreduce_fusion_kernel", "allreduce_fusion_quantizes",
               "moe_finalize_allreduce_max_tokens",
               "shared_expert_stream", "prefill_op_launches", "eager_input_quantize", "dp_prefill_gather",
               "dsa_prefill_as_decode", "row_linear_bias_add", "fused_add_rmsnorm", "gemm_fits",
               "sync_around_attention", "programmatic_launch", "mla_absorb_bf16"}
GEMM_FIT_SOURCES = ("vidur",)   # roofline/era_gemm_fits.py: Vidur's in-layer timings of vLLM 0.2-era layers
FUSION_KERNELS = ("vllm", "sglang", "trtllm")   # engines with a fitted custom all-reduce (data/collective_fit.yaml)
DP_MOE_ALLTOALL = ("always", "mnnvl")
DP_PREFILL_GATHER = ("all_gather", "all_reduce")
# eager_module_launches keys: attention module kind x GEMM format (roofline/module_host.py prices them).
MODULE_KEYS = ("mla:bfloat16", "mla:fp8_block", "dsa:bfloat16", "dsa:fp8_block", "dsa_sparse:bfloat16",
               "dsa_sparse:fp8_block")
# prefill_op_launches keys: the recurrent ops an engine runs as a chain of kernels (roofline/op_launches.py).
OP_LAUNCH_ROLES = (OpRole.LINEAR_ATTENTION.value, OpRole.SSM_SCAN.value)
# What an attention operator can do before its kernel (TensorRT-LLM's QKV preprocessing: RoPE, the KV append).
ATTENTION_CAN_INCLUDE = (OpRole.ROPE.value, OpRole.KV_WRITE.value)
# The dense GEMMs whose input a preceding kernel can write in fp8 (the grouped expert GEMMs have their own fit).
GEMM_ROLES = ("all", *(r.value for r in (OpRole.QKV_PROJ, OpRole.Q_PROJ, OpRole.KV_A_PROJ, OpRole.KV_B_PROJ,
                                          OpRole.O_PROJ, OpRole.MLP_UP, OpRole.MLP_DOWN)))


def kernel_options(sec: dict, where: str, read) -> dict:
    """Engine fields from a checked `kernels` mapping; `read(key)` gives a leaf's value, its source recorded."""
    out: dict = {}
    if "fits" in sec:
        out["kernel_fits"] = str(read("fits"))
    if "gqa_decode_shares_kv" in sec:
        out["gqa_decode_shares_kv"] = boolean(read("gqa_decode_shares_kv"), f"{where}.gqa_decode_shares_kv")
    if "gqa_decode_rereads_in_l2" in sec:
        out["gqa_rereads_in_l2"] = boolean(read("gqa_decode_rereads_in_l2"), f"{where}.gqa_decode_rereads_in_l2")
    if "attention_scores_materialised" in sec:
        out["eager_attention"] = boolean(read("attention_scores_materialised"),
                                         f"{where}.attention_scores_materialised")
    if "gqa_decode_max_group" in sec:
        out["gqa_decode_max_group"] = integer(read("gqa_decode_max_group"), f"{where}.gqa_decode_max_group", 0,
                                              1024, "query heads (0: any)")
    if "eager_launch_s" in sec:
        out["eager_launch_s"] = number(read("eager_launch_s"), f"{where}.eager_launch_s", 0.0, 0.1)
    if "eager_launch_by_arch" in sec:
        out["eager_launch_by_arch"] = by_arch(read("eager_launch_by_arch"), f"{where}.eager_launch_by_arch")
    if "eager_module_launches" in sec:
        out["eager_module_launches"] = module_launches(read("eager_module_launches"),
                                                       f"{where}.eager_module_launches")
    if "prefill_op_launches" in sec:
        out["prefill_op_launches"] = keyed_numbers(read("prefill_op_launches"), f"{where}.prefill_op_launches",
                                                   OP_LAUNCH_ROLES, "op role to launches, e.g. {linear_attention: 9}",
                                                   1.0, 100.0)
    if "eager_input_quantize" in sec:
        out["eager_input_quantize"] = boolean(read("eager_input_quantize"), f"{where}.eager_input_quantize")
    if "gemm_fits" in sec:   # whose measured GEMMs its release's layers ran as (roofline/era_gemm_fits.py)
        out["gemm_fits"] = choice(read("gemm_fits"), GEMM_FIT_SOURCES, f"{where}.gemm_fits")
    if "row_linear_bias_add" in sec:
        out["row_linear_bias_add"] = boolean(read("row_linear_bias_add"), f"{where}.row_linear_bias_add")
    if "fused_add_rmsnorm" in sec:
        out["fused_add_rmsnorm"] = boolean(read("fused_add_rmsnorm"), f"{where}.fused_add_rmsnorm")
    if "mla_absorb_bf16" in sec:
        out["mla_absorb_bf16"] = boolean(read("mla_absorb_bf16"), f"{where}.mla_absorb_bf16")
    if "sync_around_attention" in sec:
        out["sync_around_attention"] = boolean(read("sync_around_attention"), f"{where}.sync_around_attention")
    if "programmatic_launch" in sec:
        out["programmatic_launch"] = boolean(read("programmatic_launch"), f"{where}.programmatic_launch")
    if "attention_includes" in sec:
        out["attention_includes"] = roles(read("attention_includes"), f"{where}.attention_includes",
                                          ATTENTION_CAN_INCLUDE)
    if "quantized_gemm_inputs" in sec:
        out["quantized_gemm_inputs"] = roles(read("quantized_gemm_inputs"), f"{where}.quantized_gemm_inputs",
                                             GEMM_ROLES)
    if "static_fp8_input_scale" in sec:
        out["static_fp8_input_scale"] = boolean(read("static_fp8_input_scale"), f"{where}.static_fp8_input_scale")
    if "allreduce_norm_fusion" in sec:
        out["allreduce_norm_fusion"] = norm_fusion(read("allreduce_norm_fusion"), f"{where}.allreduce_norm_fusion")
    if "allreduce_fusion_max_bytes" in sec:
        out["allreduce_fusion_caps"] = fusion_caps(read("allreduce_fusion_max_bytes"),
                                                   f"{where}.allreduce_fusion_max_bytes")
    if "allreduce_fusion_kernel" in sec:
        out["allreduce_fusion_kernel"] = choice(read("allreduce_fusion_kernel"), FUSION_KERNELS,
                                                f"{where}.allreduce_fusion_kernel")
    if "allreduce_fusion_quantizes" in sec:
        out["allreduce_fusion_quantizes"] = boolean(read("allreduce_fusion_quantizes"),
                                                    f"{where}.allreduce_fusion_quantizes")
    if "moe_finalize_allreduce_max_tokens" in sec:
        out["moe_finalize_allreduce_max_tokens"] = integer(read("moe_finalize_allreduce_max_tokens"),
                                                           f"{where}.moe_finalize_allreduce_max_tokens", 0, 1 << 20)
    if "dp_moe_alltoall" in sec:
        out["dp_moe_alltoall"] = choice(read("dp_moe_alltoall"), DP_MOE_ALLTOALL, f"{where}.dp_moe_alltoall")
    if "dp_prefill_gather" in sec:
        out["dp_prefill_gather"] = choice(read("dp_prefill_gather"), DP_PREFILL_GATHER, f"{where}.dp_prefill_gather")
    if "shared_expert_stream" in sec:
        out["shared_expert_stream"] = families(read("shared_expert_stream"), f"{where}.shared_expert_stream")
    if "dsa_prefill_as_decode" in sec:
        out["dsa_prefill_as_decode"] = architectures(read("dsa_prefill_as_decode"), f"{where}.dsa_prefill_as_decode")
    return out


def architectures(raw, where: str) -> tuple[str, ...]:
    """A non-empty list of GPU architecture names (hardware.ARCHS)."""
    if not isinstance(raw, list) or not raw or not all(a in ARCHS for a in raw):
        raise WhatifError(f"{where}: expected a non-empty list of GPU architectures ({', '.join(ARCHS)})")
    return tuple(raw)


def families(raw, where: str) -> tuple[str, ...]:
    """A non-empty list of model family names."""
    if not isinstance(raw, list) or not raw or not all(isinstance(f, str) and f for f in raw):
        raise WhatifError(f"{where}: expected a non-empty list of model family names, e.g. [deepseek_v3]")
    return tuple(raw)


def norm_fusion(raw, where: str) -> tuple[tuple[str, int], ...]:
    """(model family, smallest hidden size) pairs from {families: [...], min_hidden_size: N}, N one integer for
    every family or a mapping {family: N} (a family it leaves out: any hidden size)."""
    if not isinstance(raw, dict) or set(raw) != {"families", "min_hidden_size"}:
        raise WhatifError(f"{where}: expected a mapping with families (a list of model families) and "
                          "min_hidden_size (an integer, or a mapping of family to integer)")
    names = families(raw["families"], f"{where}.families")
    least = raw["min_hidden_size"]
    if isinstance(least, dict):
        unknown = sorted(set(least) - set(names))
        if unknown:
            raise WhatifError(f"{where}.min_hidden_size: '{unknown[0]}' is not in families; valid: "
                              f"{', '.join(names)}")
        return tuple((f, integer(least.get(f, 1), f"{where}.min_hidden_size.{f}", 1, 1 << 20, "hidden units"))
                     for f in names)
    n = integer(least, f"{where}.min_hidden_size", 1, 1 << 20, "hidden units")
    return tuple((f, n) for f in names)


def fusion_caps(raw, where: str) -> tuple[tuple[str, tuple[tuple[int, float], ...]], ...]:
    """{arch: {tp: bytes}} as sorted nested pairs, each architecture one whatif knows."""
    if not isinstance(raw, dict) or not raw:
        raise WhatifError(f"{where}: expected a mapping of GPU architecture to {{tp: bytes}}, e.g. "
                          "{blackwell: {\"8\": 1048576}}")
    out = []
    for arch, table in raw.items():
        if arch not in ARCHS:
            raise WhatifError(f"{where}: '{arch}' is not valid; valid: {', '.join(ARCHS)}")
        if not isinstance(table, dict) or not table:
            raise WhatifError(f"{where}.{arch}: expected a mapping of tensor-parallel size to bytes")
        # YAML keys are text ("8"): the TP size read as an integer
        out.append((arch, tuple(sorted((integer(int(tp) if str(tp).isdigit() else tp, f"{where}.{arch}", 2, 1024,
                                                "GPUs"),
                                        number(b, f"{where}.{arch}.{tp}", 0.0, 1e12)) for tp, b in table.items()))))
    return tuple(sorted(out))


def by_arch(raw, where: str) -> tuple[tuple[str, float], ...]:
    """{GPU architecture: seconds} as sorted pairs, each architecture one whatif knows, each time in [0, 0.1] s."""
    return keyed_numbers(raw, where, ARCHS, "GPU architecture to seconds, e.g. {ampere: 4.0e-5}", 0.0, 0.1)


def module_launches(raw, where: str) -> tuple[tuple[str, float], ...]:
    """{module key: host launches} as sorted pairs, each key one roofline/module_host.py knows, each >= 1."""
    return keyed_numbers(raw, where, MODULE_KEYS, "module to launches, e.g. {mla:fp8_block: 20}", 1.0, 1000.0)


def keyed_numbers(raw, where: str, valid, what: str, lo: float, hi: float) -> tuple[tuple[str, float], ...]:
    """{key: number} as sorted pairs, each key in `valid`, each number in [lo, hi]."""
    if not isinstance(raw, dict) or not raw:
        raise WhatifError(f"{where}: expected a mapping of {what}")
    for key in raw:
        if key not in valid:
            raise WhatifError(f"{where}: '{key}' is not valid; valid: {', '.join(valid)}")
    return tuple(sorted((key, number(v, f"{where}.{key}", lo, hi)) for key, v in raw.items()))


def roles(raw, where: str, valid: tuple[str, ...]) -> frozenset:
    """A list of op roles (op_kinds.py OpRole values) out of `valid`."""
    if not isinstance(raw, list) or not all(isinstance(r, str) for r in raw):
        raise WhatifError(f"{where}: expected a list of op roles out of: {', '.join(valid)}")
    for r in raw:
        if r not in valid:
            raise WhatifError(f"{where}: '{r}' is not valid; valid: {', '.join(valid)}")
    return frozenset(raw)
