"""Whole MLA and DSA attention modules (DeepSeek-V3 / V3.2, GLM-5): projections, the indexer, attention.

A module is its kernels back to back, each priced as a part of fitted_roofline.py:
- projections, one GEMM each: q_a and kv_a fused (h -> q_lora + kv_lora + rope), q_b (q_lora -> H (nope +
  rope)), o (H v -> h); prefill expands the latent with kv_b (kv_lora -> H (nope + v)), decode is absorbed:
  the per-head W_UK (nope x kv_lora) and W_UV (kv_lora x v) batched GEMMs. Weights in the GEMM format's
  bytes at its tensor-core peak; activations bf16.
- MLA attention: prefill dense causal, 2 H (qk + v) FLOPs per (query, key) pair, K and V expanded per head;
  decode absorbed, 2 H (2 kv_lora + rope) FLOPs per cached token, the latent read once per sequence.
- DSA (DeepSeek Sparse Attention) adds the lightning indexer: its projections (q_lora -> index heads x
  index dim, h -> index dim, h -> index heads), fp8 logits over every visible (query, key) pair (2 index
  heads x index dim FLOPs each, 4-byte logits written and read by the top-k), then sparse absorbed MLA over
  min(top-k, visible) keys per query, each gathered key read once per query. SGLang's short-prompt path
  ("dense_mha") runs dense prefill attention after the indexer; its "skip_indexer" path has no indexer.
  TensorRT-LLM on Hopper runs its sparse MLA (prefill and decode) with FlashMLA's sparse prefill kernel
  (bf16 KV; aiconfigurator's collector notes): one CTA per (query token, 64-head group), heads padded to 64,
  walking all index_topk slots whatever the visible keys (masked), so its work is waves of such CTAs.
  TensorRT-LLM skips the indexer's scoring pass (logits, top-k) while a sequence's keys fit in index_topk
  (indexer_scoring_runs); where it runs, its two kernels are steps of the module (fitted_roofline step_s).
`past` is the tokens already cached (prefill: a prefix; decode: the context read). Fixed-cost items: one
per (sequence, head, 64-query tile). Parameters: data/modern_fit.yaml, families mla_module_<phase> and
dsa_module_<phase> (phase prefill | decode); dsa_indexer_seconds prices the indexer's kernels alone with the
DSA module fit's efficiencies.

Long because: the MLA and DSA modules share their projection, attention and launch parts and the absorbed bmms
(mla_bmm_work prices a decode module's fp8 bmms too); split, each half would import the other's.
"""
from __future__ import annotations

from dataclasses import dataclass

from .fitted_roofline import family_params, fitted_seconds, memory_times
from .dsa_topk import sglang_topk_part
from .eager_host import family_host_x
from .params import ceilings
from .quantize import replay_l2_times

FORMATS = {"bfloat16": (2.0, "bf16"), "bf16": (2.0, "bf16"), "fp8_block": (1.0 + 4.0 / (128 * 128), "fp8"),
           "fp8": (1.0, "fp8"), "nvfp4": (0.5625, "fp4")}
KV_BYTES = {"bfloat16": 2.0, "bf16": 2.0, "fp8": 1.0 + 4.0 / 128}
Q_TILE = 64


@dataclass(frozen=True)
class MlaDims:
    """A model's MLA widths (its config.json's names): hidden_size, q_lora_rank, kv_lora_rank,
    qk_nope_head_dim, qk_rope_head_dim, v_head_dim; DSA adds index_n_heads, index_head_dim, index_topk."""
    hidden: int
    q_lora: int
    kv_lora: int
    nope: int
    rope: int
    v: int
    index_heads: int = 0
    index_dim: int = 0
    index_topk: int = 0

    @classmethod
    def from_config(cls, cfg: dict) -> MlaDims:
        return cls(cfg["hidden_size"], cfg["q_lora_rank"], cfg["kv_lora_rank"], cfg["qk_nope_head_dim"],
                   cfg["qk_rope_head_dim"], cfg["v_head_dim"], cfg.get("index_n_heads", 0),
                   cfg.get("index_head_dim", 0), cfg.get("index_topk", 0))


def _gemm(tokens, k, n, w_bytes, peak, c, batch=1):
    moved = batch * k * n * w_bytes + tokens * (k + n) * 2.0
    return (2.0 * tokens * k * n / peak, *memory_times(moved, c.hbm_bw, c.l2_bytes))


def projection_parts(tokens, heads, d: MlaDims, absorbed: bool, gemm_format: str, c, out_format=None,
                     bmm_fp8=False) -> list:
    """The projections' GEMMs; out_format: o_proj's own format where a checkpoint stores it apart (None: the
    module's gemm_format), each GEMM read at its own format's bytes and peak; bmm_fp8: the absorbed bmms run
    TensorRT-LLM's fp8 block-scaling bmm (mla_bmm_work's quantize + fp8 GEMM) instead of bf16."""
    w_bytes, peak_key = FORMATS[gemm_format]
    peak = c.peak_flops(peak_key)
    o_bytes, o_key = FORMATS[out_format or gemm_format]
    bf16 = c.peak_flops("bf16")
    parts = [_gemm(tokens, d.hidden, d.q_lora + d.kv_lora + d.rope, w_bytes, peak, c),
             _gemm(tokens, d.q_lora, heads * (d.nope + d.rope), w_bytes, peak, c),
             _gemm(tokens, heads * d.v, d.hidden, o_bytes, c.peak_flops(o_key), c)]
    if absorbed and bmm_fp8:   # Hopper fp8_block: fp8_batched_quantize_1x128_permute102 + fp8 bmm, each bmm
        for k, n in ((d.nope, d.kv_lora), (d.kv_lora, d.v)):
            parts += mla_bmm_work(tokens, heads, k, n, gemm_format, c, True)[0]
    elif absorbed:   # per-head batched GEMMs, bf16 (their table: mla_bmm)
        parts += [_gemm(tokens * heads, d.nope, d.kv_lora, 2.0, bf16, c, heads),
                  _gemm(tokens * heads, d.kv_lora, d.v, 2.0, bf16, c, heads)]
    else:
        parts.append(_gemm(tokens, d.kv_lora, heads * (d.nope + d.v), w_bytes, peak, c))
    return parts


def causal_pairs(isl, past):
    """(query, key) pairs a causal prefill of `isl` new tokens after `past` cached ones computes."""
    return isl * (isl + 1) / 2.0 + isl * past


def capped_pairs(isl, past, cap):
    """Sum over the new tokens of min(cap, visible keys): sparse attention's (query, key) pairs."""
    def s(n):
        return n * (n + 1) / 2.0 - ((n - cap) * (n - cap + 1) / 2.0) * (n > cap)
    return s(past + isl) - s(past)


def dense_prefill_part(batch, isl, past, heads, d: MlaDims, c):
    flops = 2.0 * heads * (d.nope + d.rope + d.v) * batch * causal_pairs(isl, past)
    moved = batch * ((isl + past) * heads * (d.nope + d.rope + d.v) + isl * heads * (d.nope + d.rope + d.v)) * 2.0
    return (flops / c.peak_flops("bf16"), *memory_times(moved, c.hbm_bw, c.l2_bytes))


def absorbed_part(batch, pairs, gathered, heads, d: MlaDims, kv_bytes, c, head_tile=0, mma="bf16"):
    """Absorbed MLA over `pairs` (query, key) pairs reading `gathered` latent rows; head_tile: the kernel's
    query-head tile (heads padded up to a multiple of it, the latent read once per tile); 0: no tiling; a column
    where the kernel picks its tile per row (trtllm_gen_mla_tile); mma: the tensor-core format its QK and PV
    products run in (fp8_generation_mla)."""
    if isinstance(head_tile, (int, float)):
        tiles = -(-heads // head_tile) if head_tile else 1
        padded = tiles * head_tile if head_tile else heads
    else:
        import numpy as np
        tiles = np.ceil(np.asarray(heads, dtype=float) / head_tile)
        padded = tiles * head_tile
    flops = 2.0 * padded * (2 * d.kv_lora + d.rope) * batch * pairs
    moved = batch * gathered * (d.kv_lora + d.rope) * kv_bytes * tiles
    return (flops / c.peak_flops(mma), *memory_times(moved, c.hbm_bw, c.l2_bytes))


def fp8_generation_mla(kernel: str, arch: str, kv_dtype: str) -> bool:
    """Whether the MLA decode kernel runs its products in fp8: TensorRT-LLM with an fp8 KV cache on Hopper and
    Blackwell quantizes the query to fp8 (quant_q_buffer) and runs QK and PV on E4M3 operands, output bf16
    (attentionOp.cpp mFP8GenerationMLA, gated to SM 90 / 100; PR #3190 "FP8 MLA on Hopper and Blackwell")."""
    return kernel == "trtllm" and kv_dtype == "fp8" and arch in ("hopper", "blackwell")


def indexer_parts(batch, isl, past, d: MlaDims, c, scoring=1.0, topk_read=True):
    """The lightning indexer's projections and its scoring pass (fp8 logits, top-k); scoring: 1 where the
    scoring pass runs, 0 where the engine skips it (indexer_scoring_runs), a float or a column; topk_read: the
    top-k's one read of the logits counted here (False where the top-k is its own part, dsa_topk)."""
    tokens = batch * isl
    bf16 = c.peak_flops("bf16")
    pairs = batch * causal_pairs(isl, past)
    moved = pairs * (8.0 if topk_read else 4.0) + batch * (isl + past) * d.index_dim * 1.0
    logits = 2.0 * d.index_heads * d.index_dim * pairs / c.peak_flops("fp8")
    scores = (logits, *memory_times(moved, c.hbm_bw, c.l2_bytes))
    return [_gemm(tokens, d.q_lora, d.index_heads * d.index_dim, 2.0, bf16, c),
            _gemm(tokens, d.hidden, d.index_dim + d.index_heads, 2.0, bf16, c),
            tuple(t * scoring for t in scores)]


INDEXER_SCORING_KERNELS = 2   # TensorRT-LLM's scoring pass: DeepGEMM's fp8 (paged) MQA logits, then indexer_topk


def indexer_scoring_runs(engine: str, isl, past, topk: int):
    """1 where the indexer's scoring pass (MQA logits + top-k) runs, 0 where the engine skips it. TensorRT-LLM
    skips it while every sequence's keys (cached + new) fit in the top-k (sparse_attention/dsa.py prepare:
    skip_indexer_for_{ctx,gen}_reqs = max kv_lens <= index_topk; DSA config skip_indexer_for_short_seqs,
    default True) and feeds the sparse MLA dense indices; the other engines' paths are their own
    (SGLang's skip_indexer kernel source), so 1 for them. Floats or columns."""
    if engine != "trtllm":
        return 1.0
    import numpy as np
    runs = np.asarray(past) + np.asarray(isl) > topk
    return runs.astype(float) if runs.ndim else float(runs)


HEAD_GROUP = 64   # FlashMLA's sparse kernel: heads per CTA (fewer are padded)


def sparse_all_topk(engine: str, arch: str) -> bool:
    """Whether the engine's sparse MLA walks every top-k slot per query (TensorRT-LLM on Hopper: FlashMLA's
    sparse prefill kernel, padded heads) rather than the visible keys only (its Blackwell trtllm-gen kernel,
    SGLang's and vLLM's)."""
    return engine == "trtllm" and arch == "hopper"


# The tables' kernel_source names of FlashMLA's sparse kernels (SGLang's nsa backends flashmla_sparse / flashmla_kv,
# vLLM's FLASHMLA_SPARSE): they take index_topk indices a query, -1 past the visible keys, and loop over all of them.
FLASHMLA_SPARSE_SOURCES = ("flashmla_sparse", "flashmla_kv", "FLASHMLA_SPARSE")


def flashmla_sparse_source(source: str) -> bool:
    """Whether a table's kernel_source names one of FlashMLA's sparse kernels (FLASHMLA_SPARSE_SOURCES)."""
    return any(s in source for s in FLASHMLA_SPARSE_SOURCES)


def sparse_topk_slots(engine: str, arch: str, kv_dtype: str, source: str | None = None) -> bool:
    """Whether an engine's sparse MLA decode is topk_slots_part's kernel: SGLang's flashmla_kv, its Hopper
    decode backend with an fp8 cache (the tables' kernel_source; fa3 with bf16, trtllm on Blackwell); source: the
    table's kernel_source where known. vLLM's FLASHMLA_SPARSE decode is the same kernel but stays priced by the
    visible keys (the slots form left its leave-one-GPU-out error as it was: B200 13.8 -> 13.1%, H100 14.2 -> 14.6%)."""
    if engine != "sglang":
        return False
    return flashmla_sparse_source(source) if source is not None else arch == "hopper" and kv_dtype == "fp8"


def topk_slots_part(batch, isl, past, heads, d: MlaDims, kv_bytes, c):
    """FlashMLA's sparse decode as SGLang runs it with an fp8 cache on Hopper (flashmla_kv): every query walks
    all index_topk slots for each 64-head group (heads padded to 64; the index row has index_topk columns, -1
    past the visible keys; split over the SMs by keys, so no waves), reading only its visible keys."""
    groups = -(-heads // HEAD_GROUP)
    flops = 2.0 * groups * HEAD_GROUP * (2 * d.kv_lora + d.rope) * batch * isl * d.index_topk
    moved = groups * batch * capped_pairs(isl, past, d.index_topk) * (d.kv_lora + d.rope) * kv_bytes
    return (flops / c.peak_flops("bf16"), *memory_times(moved, c.hbm_bw, c.l2_bytes))


# FlashMLA's token-level sparse decode kernel (FP8 KV cache, BF16 matmul) at its best: "410 TFLOPS on H800 SXM5 ...
# ~350 TFLOPS on B200" (FlashMLA README, sparse MLA decoding), over the datasheets' 989 / 2,250 TFLOPS dense bf16
# peaks. Fixed from the kernel's documentation, not fitted; used where SGLang runs prompt tokens through it.
FLASHMLA_SPARSE_DECODE_CEILING = {"hopper": 410.0 / 989.0, "blackwell": 350.0 / 2250.0}


def sglang_flashmla_kv_prefill(engine: str, arch: str, phase: str, source: str | None = None,
                               kv_dtype: str = "bfloat16", dense: bool = False) -> bool:
    """Whether an SGLang DSA prefill runs FlashMLA's sparse fp8 *decode* kernel over its prompt tokens (flashmla_kv):
    nsa_backend.set_nsa_prefill_impl takes it for an fp8 cache off Blackwell, and _forward_flashmla_kv views the
    queries as one decode row a token (q_all.view(-1, 1, heads, 576)) with index_topk-wide indices; source: the
    table's kernel_source where known (Blackwell's fp8 rows ran trtllm-gen instead)."""
    if engine != "sglang" or phase != "prefill" or dense:
        return False
    return "flashmla_kv" in source if source is not None else arch == "hopper" and kv_dtype == "fp8"


# vLLM's FLASHMLA_SPARSE with an fp8 cache runs every token of a batch, prompt tokens too, through FlashMLA's sparse fp8
# decode kernel ("mixed batch mode") where the rank has fewer query heads than this, and the bf16 prefill kernel on an
# upconverted copy of the cache at or above it (vllm v1/attention/backends/mla/flashmla_sparse.py:
# MIN_HEADS_FOR_BF16_PREFILL = 32, fp8_use_mixed_batch, _build_fp8_mixed_decode_prefill; vllm-project/vllm 008a0c31).
VLLM_MIN_HEADS_FOR_BF16_PREFILL = 32


def vllm_fp8_mixed_batch(engine: str, arch: str, phase: str, heads, kv_dtype: str, source: str | None = None):
    """Whether a vLLM DSA prefill runs FlashMLA's sparse fp8 decode kernel over its prompt tokens (flashmla_kv_prefill_
    part's kernel): FLASHMLA_SPARSE (Hopper's sparse backend; source: the table's kernel_source where known) with an
    fp8 cache and fewer than VLLM_MIN_HEADS_FOR_BF16_PREFILL heads. heads: an int or a column (then a bool column)."""
    import numpy as np
    sparse = source == "FLASHMLA_SPARSE" if source is not None else arch == "hopper"
    if engine != "vllm" or phase != "prefill" or not sparse or KV_BYTES.get(kv_dtype, 2.0) == 2.0:
        return False
    mixed = np.asarray(heads) < VLLM_MIN_HEADS_FOR_BF16_PREFILL
    return mixed if mixed.ndim else bool(mixed)


def flashmla_kv_prefill_part(batch, isl, past, heads, d: MlaDims, kv_bytes, c):
    """FlashMLA's sparse fp8 decode kernel over prompt tokens (sglang_flashmla_kv_prefill): topk_slots_part's work
    (each token walks all index_topk slots a 64-head group) at the kernel's documented ceiling
    (FLASHMLA_SPARSE_DECODE_CEILING), its gathered rows past L2 once a sequence (flashmla_sparse_read: the tokens of
    a sequence gather from the same cached rows). Thousands of query rows: the compute-bound regime the ceiling was
    measured in; SGLang's decode rows keep topk_slots_part at the peak (session 65 K: the ceiling there, H100 left
    out 26.8 -> 33.4%)."""
    flops_s = topk_slots_part(batch, isl, past, heads, d, kv_bytes, c)[0]
    return (flops_s / FLASHMLA_SPARSE_DECODE_CEILING.get(c.arch, 1.0),
            *flashmla_sparse_read(batch, isl, past, d, kv_bytes, c))


def flashmla_sparse_read(batch, isl, past, d: MlaDims, kv_bytes, c):
    """(HBM s, L2 s) of FlashMLA's sparse prefill kernel (flash_mla_sparse_fwd): each (query, 64-head) CTA gathers
    its top-k rows, but a sequence's queries and head groups gather from the same cached rows, so its traffic past
    L2 is those rows once, min(visible keys, gathered) a sequence (the re-reads are L2 hits, the kernel
    compute-bound: 640 TFLOPS on H800, FlashMLA README)."""
    import numpy as np
    rows = np.minimum(past + isl, capped_pairs(isl, past, d.index_topk))
    return memory_times(batch * rows * (d.kv_lora + d.rope) * kv_bytes, c.hbm_bw, c.l2_bytes)


# FlashMLA's sparse prefill kernel (flash_mla_sparse_fwd) at its best reaches a documented fraction of the bf16 dense
# peak: "up to 640 TFlops in forward computation on H800 SXM5 ... up to 1450 TFlops on B200" (FlashMLA README,
# "Test & benchmark MLA prefill (Sparse)"), over the datasheets' 989 (H800 = H100 SXM) and 2,250 TFLOPS (B200) dense
# bf16 peaks: 0.647 and 0.644. Fixed from the kernel's own documentation, not fitted.
FLASHMLA_SPARSE_PREFILL_CEILING = {"hopper": 640.0 / 989.0, "blackwell": 1450.0 / 2250.0}


def flashmla_sparse_prefill_compute(seconds, c):
    """Compute seconds of FlashMLA's sparse prefill kernel at its documented ceiling on `c`'s architecture
    (FLASHMLA_SPARSE_PREFILL_CEILING; no ceiling documented for another: the peak's seconds as they are)."""
    return seconds / FLASHMLA_SPARSE_PREFILL_CEILING.get(c.arch, 1.0)


def all_topk_part(batch, isl, past, heads, d: MlaDims, kv_bytes, c):
    """FlashMLA's sparse prefill kernel as TensorRT-LLM runs it on Hopper: ceil(queries x head groups / SMs)
    waves, each CTA 64 heads x index_topk slots at one SM's share of the bf16 peak; reads its visible keys a head
    group (not flashmla_sparse_read's rows once: with it, TensorRT-LLM's prefill left out went 27.9 -> 41.6%)."""
    groups = -(-heads // HEAD_GROUP)
    waves = -(-(batch * isl * groups) // c.sms)
    cta_flops = 2.0 * HEAD_GROUP * (2 * d.kv_lora + d.rope) * d.index_topk
    moved = groups * batch * capped_pairs(isl, past, d.index_topk) * (d.kv_lora + d.rope) * kv_bytes
    return (flashmla_sparse_prefill_compute(waves * cta_flops * c.sms / c.peak_flops("bf16"), c),
            *memory_times(moved, c.hbm_bw, c.l2_bytes))


# Heads flash_mla_sparse_fwd's callers pad a sparse prefill's queries to, by architecture: `128 if SM >= 10 else 64`
# in both vLLM's FlashMLASparseImpl and SGLang's nsa_backend (0 elsewhere: no tile established)
SPARSE_PREFILL_HEAD_PAD = {"blackwell": 128, "hopper": 64}


def vllm_prefill_head_pad(engine: str, arch: str, phase: str, source: str | None = None) -> int:
    """Heads vLLM pads a sparse-MLA prefill's queries to (0: none): FlashMLASparseImpl sets
    `padding = 128 if is_device_capability(100) else 64` and runs flash_mla_sparse_fwd on the padded heads
    (vllm v1/attention/backends/mla/flashmla_sparse.py), so 1-64 heads cost as 64 on Hopper and 8-128 as 128 on
    Blackwell; source: the table's kernel_source where known (FLASHMLA_SPARSE; FlashInfer's sparse backend runs
    trtllm-gen, whose tile is not established here)."""
    if engine != "vllm" or phase != "prefill" or (source is not None and source != "FLASHMLA_SPARSE"):
        return 0
    return SPARSE_PREFILL_HEAD_PAD.get(arch, 0)


def sglang_sparse_head_pad(engine: str, arch: str, source: str | None = None, kv_dtype: str = "bfloat16") -> int:
    """Heads SGLang pads its flashmla_sparse queries to (0: none): nsa_backend._forward_flashmla_sparse pads them to
    `128 if device_sm_major >= 10 else 64` before flash_mla_sparse_fwd, as vLLM does (vllm_prefill_head_pad), so
    64 heads cost as 128 on Blackwell; source: the table's kernel_source where known (else a bf16 cache, the
    path the tables ran it on)."""
    sparse = "flashmla_sparse" in source if source is not None else KV_BYTES[kv_dtype] == 2.0
    if engine != "sglang" or not sparse:
        return 0
    return SPARSE_PREFILL_HEAD_PAD.get(arch, 0)



def sparse_prefill_head_pad(engine: str, arch: str, phase: str, source: str | None = None,
                            kv_dtype: str = "bfloat16", dense: bool = False) -> int:
    """Heads a DSA module's sparse prefill pads its queries to (0: none), by engine: vLLM's FlashMLASparseImpl
    (vllm_prefill_head_pad) and SGLang's flashmla_sparse path (sglang_sparse_head_pad), which a decode or SGLang's
    dense MHA prefill (`dense`) does not take. One rule for the prediction and the fit's rows."""
    if engine == "vllm":
        return vllm_prefill_head_pad(engine, arch, phase, source)
    if phase != "prefill" or dense:
        return 0
    return sglang_sparse_head_pad(engine, arch, source, kv_dtype)

# The absorbed-MLA decode kernel each engine runs, by GPU architecture and KV dtype, and its query-head tile
# (heads padded up to a multiple; 0: no tile established, heads priced as they are).
MLA_DECODE_TILES = {
    "trtllm": 0,          # TensorRT-LLM's own MLA generation kernels (XQA / trtllm-gen), one family for all archs
    "trtllm_gen": 0,      # Blackwell: FlashInfer's trtllm_batch_decode_with_kv_cache_mla (vLLM FLASHINFER_MLA,
                          # SGLang trtllm_mla): trtllm-gen's kernels; a decode's tile is picked per shape
                          # (decode_kernel_terms: TRTLLM_GEN_RULE); 0 here for vLLM's multi-token "decodes"
    "flashmla": 64,       # FlashMLA's dense decode kernel: 64 query rows (heads x new tokens) per CTA
    "fa3": 64,            # FlashAttention-3 with MLA (head dim v 512): tile_size_fwd_sm90 gives kBlockM 64
    "flashinfer": 64,     # FlashInfer's MLA decode (SGLang --attention-backend flashinfer): CTA_TILE_Q 64
    "triton": 16,         # Triton MLA decode (_decode_grouped_att_m_fwd): BLOCK_H 16 heads per program
}
TRTLLM_GEN_RULE = -1   # decode_kernel_terms' tile for TensorRT-LLM on Blackwell: trtllm_gen_mla_tile picks it per shape
SWAPS_AB_MAX_HEADS = 32      # fmhaKernels.h: the low-latency SwapsMmaAbForGeneration kernel at <= 32 heads a KV head
SWAPS_AB_MAX_KV_PER_CTA = 1024   # ... or above, where each CTA's share of the KV is <= 1,024 tokens (its stepKv 256)


def trtllm_gen_mla_tile(heads, batch, context, sms):
    """Query-head tile of trtllm-gen's MLA generation kernel (Blackwell; TensorRT-LLM's own MLA decode),
    per shape: the low-latency SwapsMmaAb kernel (tile 8 at <= 8 heads, else 16) at <= 32 heads, or where
    batch x ceil(heads / 16) CTAs fit the SMs and each CTA's KV split (ceil(context / 256) or SMs / CTAs splits)
    is <= 1,024 tokens; else the high-throughput KeepsMmaAb kernel (tile 64; at 128 heads its 2-CTA MMA pair,
    one KV read for all 128). Each tile reads the latent once (absorbed_part), so 32 heads read it twice.
    Source: NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/trtllmGenKernels/fmha/fmhaKernels.h
    (hashFromRunnerParams, useSwapsMmaAbMlaGenKernel; which revision 1.3.0rc20 ships is not established: earlier
    ones differ in the > 32-head test, all keep 8 / 16 tiles at <= 32 heads). FlashInfer's copy, which vLLM's
    FLASHINFER_MLA and SGLang's trtllm_mla decode call (trtllm_batch_decode_with_kv_cache_mla), has the same dense-MLA
    rule: flashinfer-ai/flashinfer include/flashinfer/trtllm/fmha/fmhaKernels.cuh (selectMlaGenerationKernel,
    useSwapsMmaAbMlaGenKernel; commit 0232f787 and two older revisions the index holds; its launcher
    csrc/trtllm_fmha_kernel_launcher.cu passes the SM count and heads / KV heads). Floats or columns."""
    if all(isinstance(x, (int, float)) for x in (heads, batch, context)):   # one shape (a serving step): no numpy
        ctas = batch * -(-heads // 16)
        splits = min(-(-context // 256), max(1, sms // ctas))
        if heads <= SWAPS_AB_MAX_HEADS or (-(-context // splits) <= SWAPS_AB_MAX_KV_PER_CTA and ctas <= sms):
            return 8.0 if heads <= 8 else 16.0
        return 128.0 if heads >= 128 else 64.0
    import numpy as np
    heads, batch = np.asarray(heads, dtype=float), np.asarray(batch, dtype=float)
    ctas = batch * np.ceil(heads / 16)
    splits = np.minimum(np.ceil(np.asarray(context, dtype=float) / 256), np.maximum(1.0, np.floor(sms / ctas)))
    swaps = (heads <= SWAPS_AB_MAX_HEADS) | ((np.ceil(context / splits) <= SWAPS_AB_MAX_KV_PER_CTA) & (ctas <= sms))
    tile = np.where(swaps, np.where(heads <= 8, 8.0, 16.0), np.where(heads >= 128, 128.0, 64.0))
    return tile if tile.ndim else float(tile)


# The tables' kernel_source names (aiconfigurator's collectors) -> MLA_DECODE_TILES kernels.
MLA_DECODE_SOURCES = {"default": "trtllm", "FLASHINFER_MLA": "trtllm_gen", "trtllm_mla": "trtllm_gen",
                      "FLASHMLA": "flashmla", "FLASH_ATTN_MLA": "fa3", "fa3": "fa3", "flashinfer": "flashinfer",
                      "TRITON_MLA": "triton", "triton": "triton"}


QUANTIZED_PROJECTIONS = 3   # decode's weight-format GEMMs: fused q_a + kv_a, q_b, o (the absorbed bmms are apart)


def quantize_launches(gemm_format: str, out_format: str | None = None) -> int:
    """Activation-quantize kernels a decode module launches: one before each fp8 / NVFP4 projection GEMM
    (vLLM's W8A8BlockFp8LinearOp and SGLang's per_token_group_quant_fp8, TensorRT-LLM's fp8_quantize_1x128,
    the engines' scaled_fp4_quant), each a serial step of the module (fitted_roofline step_s); out_format:
    o_proj's own format (None: gemm_format), the other projections at gemm_format."""
    quantized = FORMATS[gemm_format][1] != "bf16"
    out = FORMATS[out_format or gemm_format][1] != "bf16"
    return (QUANTIZED_PROJECTIONS - 1) * quantized + out


# SGLang's DSA context module as aiconfigurator timed it: eagerly (collect_mla_module.py; flashmla_kv's piecewise
# capture crashes), so its floor is host launches, fitted_roofline steps at a fitted step_s (one eager launch):
FP8_GEMM_EXTRA_LAUNCHES = 27.42 - 17.03   # sglang.yaml eager_module_launches, dsa:fp8_block - dsa:bfloat16 (measured)
INDEXER_PATH_LAUNCHES = 16.0   # assumed, not counted launch by launch: the indexer's GEMMs, norm, rope, quantize,
                               # index-K store and gather, logits, top-k and metadata ops the dense path skips


def sglang_prefill_eager_launches(source: str, gemm_format: str) -> float:
    """Eager launches an SGLang DSA context module adds beyond its bf16 dense-MHA path (kernel_source names the
    path: dense_mha runs dense attention at <= 2,048 keys, skip_indexer no indexer, else the indexer's)."""
    indexer = "dense_mha" not in source and "skip_indexer" not in source
    return INDEXER_PATH_LAUNCHES * indexer + FP8_GEMM_EXTRA_LAUNCHES * (FORMATS[gemm_format][1] != "bf16")


# vLLM's DSA context module as aiconfigurator timed it: eagerly (collector/vllm/collect_mla_module.py:
# use_cuda_graph = not (attn_type == "dsa" and is_context)), so its floor is host launches by GEMM format. Measured
# on the tables' flat rows (<= 256 tokens, DeepSeek-V3.2, median over heads) over a ~30 us eager launch:
# fp8_block - bf16 0.29 ms on B200, 0.30 ms on H100; nvfp4 - bf16 0.93 ms on B200 (no H100 rows: no FP4 peak).
VLLM_PREFILL_EXTRA_LAUNCHES = {"bf16": 0.0, "fp8": 9.6, "fp4": 31.0}


def vllm_prefill_eager_launches(gemm_format: str) -> float:
    """Eager launches a vLLM DSA context module adds beyond its bf16-GEMM path (VLLM_PREFILL_EXTRA_LAUNCHES)."""
    return VLLM_PREFILL_EXTRA_LAUNCHES[FORMATS[gemm_format][1]]


# Quantized activation bytes an element (the quantize kernel's output): fp8 with one fp32 scale per 1x128 group
# (per_token_group_quant_fp8 / fp8_quantize_1x128), NVFP4 with one fp8 scale per 16 (scaled_fp4_quant).
ACTIVATION_BYTES = {"fp8": 1.0 + 4.0 / 128, "fp4": 0.5 + 1.0 / 16}


def prefill_quantize_launches(gemm_format: str, out_format: str | None = None) -> int:
    """Activation-quantize kernels a prefill module launches: one before each quantized projection GEMM (the
    fused q_a + kv_a, q_b and kv_b at gemm_format, o at out_format; the engines' ops as quantize_launches)."""
    quantized = FORMATS[gemm_format][1] != "bf16"
    return 3 * quantized + (FORMATS[out_format or gemm_format][1] != "bf16")


def prefill_quantize_parts(tokens, heads, d: MlaDims, gemm_format, c, out_format=None) -> list:
    """The prefill's activation-quantize passes: each quantized projection's input read in bf16 and written
    in its format (memory-bound kernels; the engines' ops as quantize_launches); none for a bf16 GEMM."""
    fmt, out = FORMATS[gemm_format][1], FORMATS[out_format or gemm_format][1]
    widths = [(d.hidden, fmt), (d.q_lora, fmt), (d.kv_lora, fmt), (heads * d.v, out)]
    return [(0.0, *memory_times(tokens * k * (2.0 + ACTIVATION_BYTES[f]), c.hbm_bw, c.l2_bytes))
            for k, f in widths if f != "bf16"]


def mla_decode_kernel(engine: str, arch: str, kv_dtype: str = "bfloat16") -> str:
    """The MLA decode kernel an engine runs by default on an architecture (a key of MLA_DECODE_TILES).
    vLLM (cuda.py backend priorities, as the collector's vLLM 0.24.0 picked them): Blackwell FLASHINFER_MLA,
    Hopper FLASH_ATTN_MLA (bf16 KV) or FLASHMLA (fp8 KV: FLASH_ATTN_MLA takes no fp8 cache), else TRITON_MLA;
    SGLang (server_args.py): trtllm_mla for DeepseekV3 on sm100, fa3 on Hopper, triton for MLA elsewhere;
    TensorRT-LLM: its own kernels."""
    if engine == "trtllm":
        return "trtllm"
    if arch == "blackwell":
        return "trtllm_gen"
    if arch == "hopper":
        return "flashmla" if engine == "vllm" and kv_dtype == "fp8" else "fa3"
    return "triton"


def decode_kernel_terms(kernel: str, arch: str, kv_dtype: str, gemm_format: str) -> tuple[str, int, str, bool]:
    """(fit family, query-head tile, product format, fp8 absorbed bmms) of an MLA decode kernel on `arch`."""
    mma = "fp8" if fp8_generation_mla(kernel, arch, kv_dtype) else "bf16"
    # trtllm-gen's FMHA on Blackwell: TensorRT-LLM's own launcher, or FlashInfer's copy of it (trtllm_gen)
    trtllm_gen = (kernel == "trtllm" and arch == "blackwell") or kernel == "trtllm_gen"
    tile = TRTLLM_GEN_RULE if trtllm_gen else MLA_DECODE_TILES[kernel]
    return mla_decode_family(kernel), tile, mma, trtllm_fp8_bmm(kernel, arch, gemm_format)


def mla_decode_family(kernel: str) -> str:
    """The fit family of an MLA decode kernel: TensorRT-LLM's keeps the bare name, the others a suffix."""
    return "mla_module_decode" if kernel == "trtllm" else f"mla_module_decode_{kernel}"


def mla_module_work(phase, batch, isl, past, heads, d: MlaDims, gemm_format, kv_dtype, c, head_tile=0,
                    out_format=None, mma="bf16", bmm_fp8=False):
    """([(compute s, HBM s, L2 s)], items) of one MLA module at efficiency 1; decode: isl = 1 new token;
    head_tile: the decode kernel's query-head tile (MLA_DECODE_TILES; TRTLLM_GEN_RULE: trtllm_gen_mla_tile per
    shape); out_format: o_proj's own format; mma: the decode attention's product format (fp8_generation_mla);
    bmm_fp8: decode's absorbed bmms in fp8 (trtllm_fp8_bmm)."""
    tokens = batch * isl
    if phase == "prefill":
        parts = projection_parts(tokens, heads, d, False, gemm_format, c, out_format)
        parts.append(dense_prefill_part(batch, isl, past, heads, d, c))
        parts += prefill_quantize_parts(tokens, heads, d, gemm_format, c, out_format)
        return parts, batch * heads * -(-isl // Q_TILE)
    parts = projection_parts(tokens, heads, d, True, gemm_format, c, out_format, bmm_fp8)
    if isinstance(head_tile, (int, float)) and head_tile == TRTLLM_GEN_RULE:
        head_tile = trtllm_gen_mla_tile(heads, batch, past + isl, c.sms)
    # causal: new token i sees past + i keys (a decode's one token: past + 1; vLLM's short queries run as decodes)
    parts.append(absorbed_part(batch, causal_pairs(isl, past), past + isl, heads, d, KV_BYTES[kv_dtype], c, head_tile,
                               mma))
    return parts, batch * heads


def dsa_module_work(phase, batch, isl, past, heads, d: MlaDims, gemm_format, kv_dtype, c,
                    indexer=True, dense=False, all_topk=False, out_format=None, scoring=1.0, topk_slots=False,
                    head_pad=0, kv_prefill=False, sglang_topk=False):
    """([(compute s, HBM s, L2 s)], items) of one DSA module at efficiency 1 (indexer: run the indexer;
    dense: SGLang's dense prefill attention instead of the sparse one; all_topk: sparse_all_topk's kernel;
    out_format: o_proj's own format, None: gemm_format; scoring: indexer_scoring_runs; topk_slots: topk_slots_part's
    kernel; head_pad: the sparse attention's heads padded to a multiple of it, sparse_prefill_head_pad; kv_prefill:
    flashmla_kv_prefill_part's kernel (sglang_flashmla_kv_prefill; vllm_fp8_mixed_batch, a bool or a column by
    heads); sglang_topk: SGLang's top-k as its own part,
    dsa_topk.sglang_topk_part)."""
    tokens = batch * isl
    parts = projection_parts(tokens, heads, d, phase == "decode" or not dense, gemm_format, c, out_format)
    if indexer:
        parts += indexer_parts(batch, isl, past, d, c, scoring, topk_read=not sglang_topk)
        if sglang_topk:
            parts.append(sglang_topk_part(batch, isl, past, d.index_topk, c))
    if dense and phase == "prefill":
        parts.append(dense_prefill_part(batch, isl, past, heads, d, c))
    elif kv_prefill is True:
        parts.append(flashmla_kv_prefill_part(batch, isl, past, heads, d, KV_BYTES[kv_dtype], c))
    elif topk_slots:
        parts.append(topk_slots_part(batch, isl, past, heads, d, KV_BYTES[kv_dtype], c))
    elif all_topk:
        parts.append(all_topk_part(batch, isl, past, heads, d, KV_BYTES[kv_dtype], c))
    else:
        part = sparse_prefill_part(batch, isl, past, heads, d, KV_BYTES[kv_dtype], c, head_pad)
        if kv_prefill is not False:   # a column: the decode kernel's rows (vllm_fp8_mixed_batch) beside the others
            import numpy as np
            kv = flashmla_kv_prefill_part(batch, isl, past, heads, d, KV_BYTES[kv_dtype], c)
            part = tuple(np.where(kv_prefill, a, b) for a, b in zip(kv, part))
        parts.append(part)
    return parts, batch * heads * -(-isl // Q_TILE)


def sparse_prefill_part(batch, isl, past, heads, d: MlaDims, kv_bytes, c, head_pad=0):
    """Sparse absorbed MLA over each query's visible top-k keys; head_pad: FlashMLA's sparse prefill kernel's padded
    heads (sparse_prefill_head_pad), whose rows are read once a sequence at its documented ceiling."""
    pairs = capped_pairs(isl, past, d.index_topk)
    part = absorbed_part(batch, pairs, pairs, heads, d, kv_bytes, c, head_pad)
    if head_pad:
        part = (flashmla_sparse_prefill_compute(part[0], c), *flashmla_sparse_read(batch, isl, past, d, kv_bytes, c))
    return part


def mla_bmm_fp8_kernel(engine: str, arch: str, bmm_dtype: str) -> bool:
    """Whether fp8 absorbed-MLA weights run an fp8 batched GEMM (family mla_bmm_fp8: SGLang's sgl_kernel
    bmm_fp8, TensorRT-LLM's fp8 block-scaling bmm before Blackwell) rather than a bf16 one (family mla_bmm:
    TensorRT-LLM on Blackwell dequantizes the weights to bf16 first; aiconfigurator's kernel_source names)."""
    return bmm_dtype != "bfloat16" and not (engine == "trtllm" and arch == "blackwell")


def trtllm_fp8_bmm(kernel: str, arch: str, gemm_format: str) -> bool:
    """Whether TensorRT-LLM's decode module runs its absorbed bmms in fp8: fp8_block weights on SM 89 / 90 quantize
    the activations (fp8_batched_quantize_1x128_permute102) and run fp8_block_scaling_bmm_out; SM 100 runs a bf16
    torch.bmm on weights dequantized at load (attention.py fp8_block_scaling_bmm_out)."""
    return kernel == "trtllm" and FORMATS[gemm_format][1] == "fp8" and arch in ("hopper", "ada")


def mla_bmm_family(engine: str, arch: str, fp8: bool) -> str:
    """The fit family of the absorbed-MLA batched GEMM: TensorRT-LLM's fp8 block-scaling bmm is two kernels,
    a DeepGEMM-derived wgmma kernel on SM90 and ada_blockwise_gemm (mma.sync m16n8k32) on SM89
    (fp8_blockscale_gemm_kernel.cuh: strided_batch_gemm_dispatch_sm89), so Ada has its own family."""
    if not fp8:
        return "mla_bmm"
    return "mla_bmm_fp8_sm89" if engine == "trtllm" and arch == "ada" else "mla_bmm_fp8"


def mla_bmm_work(tokens, heads, d_in, d_out, bmm_dtype, c, fp8_kernel=None, quant_sm_l2=False):
    """The absorbed decode's per-head batched GEMM: tokens x heads rows of (d_in x d_out) weights per head.
    fp8_kernel (default: any non-bf16 dtype): the activations are quantized to fp8 first (bf16 read, fp8
    written) and the GEMM reads them at 1 B; else a bf16 GEMM (fp8 weights dequantized to bf16 beforehand).
    quant_sm_l2: that quantize's replayed bytes come from L2 at the SMs' own rate where they fit (the quantize
    family's form, quantize.replay_l2_times: ~4 TB/s L2-resident on L40S, H100 and B200 alike, 5.4x, 1.2x and 0.5x
    their HBM), not at a fitted multiple of HBM: the mla_bmm tables' form (docs/accuracy.md "Session 69 E"); the
    decode module's fp8 bmms (projection_parts) keep the HBM multiple its fit was made with."""
    fp8 = bmm_dtype != "bfloat16" if fp8_kernel is None else fp8_kernel
    if not fp8:
        w_bytes, bf16 = FORMATS[bmm_dtype][0], c.peak_flops("bf16")
        dequant = (0.0, *memory_times(heads * d_in * d_out * (w_bytes + 2.0), c.hbm_bw, c.l2_bytes))
        parts = [_gemm(tokens * heads, d_in, d_out, 2.0, bf16, c, heads)]
        return (parts + [dequant] if bmm_dtype != "bfloat16" else parts), tokens * heads
    w_bytes, peak_key = FORMATS[bmm_dtype]
    rows = tokens * heads
    quant_bytes = rows * d_in * 3.0
    quant = (0.0, *(replay_l2_times(quant_bytes, quant_bytes, c) if quant_sm_l2
                    else memory_times(quant_bytes, c.hbm_bw, c.l2_bytes)))
    moved = heads * d_in * d_out * w_bytes + rows * (d_in * 1.0 + d_out * 2.0)
    gemm = (2.0 * rows * d_in * d_out / c.peak_flops(peak_key), *memory_times(moved, c.hbm_bw, c.l2_bytes))
    return [quant, gemm], rows


def mla_bmm_seconds(tokens: int, heads: int, gpu, engine: str = "trtllm", pre: bool = True,
                    bmm_dtype: str = "bfloat16", nope: int = 128, kv_lora: int = 512, v: int = 128) -> float:
    """Seconds of one absorbed-MLA batched GEMM: pre (q_nope x W_UK: nope -> kv_lora) or post (latent x W_UV:
    kv_lora -> v), `tokens` rows for each of `heads` heads on this GPU; bmm_dtype: bfloat16 | fp8."""
    c = ceilings(gpu)
    d_in, d_out = (nope, kv_lora) if pre else (kv_lora, v)
    fp8 = mla_bmm_fp8_kernel(engine, c.arch, bmm_dtype)
    parts, items = mla_bmm_work(tokens, heads, d_in, d_out, bmm_dtype, c, fp8, quant_sm_l2=True)
    family = mla_bmm_family(engine, c.arch, fp8)
    return float(fitted_seconds(parts, items, c.sms, family_params(family, engine, c.arch)))


def mla_module_seconds(phase: str, batch: int, isl: int, past: int, heads: int, dims: MlaDims, gpu,
                       engine: str = "trtllm", gemm_format: str = "bfloat16", kv_dtype: str = "bfloat16",
                       out_format: str | None = None) -> float:
    """Seconds of one whole MLA attention module (projections + attention) on one GPU.

    phase: prefill (isl new tokens per sequence after `past` cached) | decode (isl = 1, `past` the context);
    heads: attention heads on this GPU (after TP); dims: the model's MlaDims; gemm_format: bfloat16 |
    fp8_block | nvfp4; kv_dtype: bfloat16 | fp8; gpu: a GPU profile or Ceilings; engine: vllm | sglang | trtllm;
    out_format: o_proj's format where the checkpoint stores it apart (None: gemm_format)."""
    c = ceilings(gpu)
    family, tile, mma, bmm_fp8 = f"mla_module_{phase}", 0, "bf16", False
    if phase == "decode":   # the engine's kernel for this architecture
        kernel = mla_decode_kernel(engine, c.arch, kv_dtype)
        family, tile, mma, bmm_fp8 = decode_kernel_terms(kernel, c.arch, kv_dtype, gemm_format)
    parts, items = mla_module_work(phase, batch, isl, past, heads, dims, gemm_format, kv_dtype, c, tile, out_format,
                                   mma, bmm_fp8)
    steps = (quantize_launches if phase == "decode" else prefill_quantize_launches)(gemm_format, out_format)
    return float(fitted_seconds(parts, items, c.sms, family_params(family, engine, c.arch), steps,
                                host=family_host_x(family, engine, c.arch)))


def dsa_module_seconds(phase: str, batch: int, isl: int, past: int, heads: int, dims: MlaDims, gpu,
                       engine: str = "trtllm", gemm_format: str = "bfloat16", kv_dtype: str = "fp8",
                       out_format: str | None = None) -> float:
    """Seconds of one DSA attention module (projections + lightning indexer + top-k sparse MLA) on one GPU;
    inputs as mla_module_seconds, dims with the index_* widths."""
    c = ceilings(gpu)
    scoring = indexer_scoring_runs(engine, isl, past, dims.index_topk)
    # SGLang's prefill takes its dense MHA path while every key fits in the top-k (nsa_backend set_nsa_prefill_impl)
    dense = engine == "sglang" and phase == "prefill" and past + isl <= dims.index_topk
    parts, items = dsa_module_work(phase, batch, isl, past, heads, dims, gemm_format, kv_dtype, c, dense=dense,
                                   all_topk=sparse_all_topk(engine, c.arch), out_format=out_format, scoring=scoring,
                                   topk_slots=phase == "decode" and sparse_topk_slots(engine, c.arch, kv_dtype),
                                   head_pad=sparse_prefill_head_pad(engine, c.arch, phase, None, kv_dtype, dense),
                                   kv_prefill=sglang_flashmla_kv_prefill(engine, c.arch, phase, None, kv_dtype, dense)
                                   or vllm_fp8_mixed_batch(engine, c.arch, phase, heads, kv_dtype),
                                   sglang_topk=engine == "sglang")
    steps = INDEXER_SCORING_KERNELS * scoring if engine == "trtllm" else 0.0
    if engine == "vllm" and phase == "prefill":   # timed eagerly: its GEMM format's host launches
        steps = vllm_prefill_eager_launches(gemm_format)
    if engine == "sglang" and phase == "prefill":   # timed eagerly: its path's host launches, as the fit's rows
        steps = sglang_prefill_eager_launches("dense_mha" if dense else "indexer", gemm_format)
    family = f"dsa_module_{phase}"
    return float(fitted_seconds(parts, items, c.sms, family_params(family, engine, c.arch), steps,
                                host=family_host_x(family, engine, c.arch)))


def dsa_indexer_seconds(phase: str, batch: int, isl: int, past: int, dims: MlaDims, gpu,
                        engine: str = "trtllm") -> float:
    """Seconds of the lightning indexer alone (its projections and fp8 logits + top-k), priced with the DSA
    module fit's efficiencies and without its floor (the module's launch floor is not the indexer's)."""
    from dataclasses import replace
    c = ceilings(gpu)
    p = replace(family_params(f"dsa_module_{phase}", engine, c.arch), floor_s=0.0, item_s=0.0)
    return float(fitted_seconds(indexer_parts(batch, isl, past, dims, c), 0.0, c.sms, p))
