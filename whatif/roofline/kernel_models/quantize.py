"""Activation quantization kernels (bf16 -> fp8) an fp8 GEMM's input runs through.

- quantize_scale: scale a m x k bf16 matrix by a known scale and write fp8 (3 bytes per element moved), one
  CUDA kernel (vLLM's static_scaled_fp8_quant, TRT-LLM's static_quantize_e4m3_per_tensor).
- quantize_compute_scale: the extra pass that finds the scale (an absmax reduction reading 2 bytes per
  element): vLLM's rows are its dynamic per-token quantizer minus its static one; SGLang fuses it (its
  rows are 0 and are not fitted).
- SGLang's table times another thing: its collector (collect_computescale.py, 0.5.14) times a static quantizer
  written in PyTorch, `(x / scale).clamp(min, max).to(float8_e4m3fn)` copied into the output: four elementwise
  kernels (TORCH_CHAIN: bf16 / fp32 scale promotes to an fp32 temporary, 6 B; clamp, 8 B; the cast, 5 B; copy,
  2 B per element), the cast converting in software (c10 fp8e4m3fn_from_fp32_value: integer bit arithmetic, no
  hardware cvt), so it is bound by the SMs' integer rate (CAST_ELTS_PER_SM_CLOCK, the fit's compute_eff scaling
  it) where HBM is fast: H100 and B200 quantize at 113 and 176 G elements/s, 1.5x apart where HBM is 2.4x.
  That chain is not what an SGLang server runs (sgl_per_tensor_quant_fp8, one CUDA kernel): quantize_seconds
  prices SGLang with the one-kernel form and vLLM's fit.
The tables replay each kernel back to back, so a matrix that fits in L2 stays there: the scaling kernel's bytes
come all from L2 when its footprint fits, else all from HBM (replay_l2_times; the absmax pass: served by L2 in
the fraction L2 / bytes), at the SMs' own L2 rate (linear_attention.sm_l2_times: SMs x clock x B, which
holds across GPUs where an HBM multiple does not: ~4 TB/s L2-resident on L40S, H100 and B200 alike, 5.4x,
1.2x and 0.5x their HBM).
The per-row cost is the grid's (quantize_steps): vLLM launches one 256-thread block per token (static_scaled_fp8_quant,
dynamic_per_token_scaled_fp8_quant: grid(num_tokens), block(256), its per-token block min(k, 256); vLLM
csrc/quantization/w8a8/fp8/common.cu), so a row costs by waves of resident blocks, each block a serial loop of
ceil(k / (threads x 16)) vector passes (vectorize_with_alignment's VEC = 16 elements a thread a pass: VEC_ELTS; vLLM
csrc/quantization/vectorization_utils.cuh): the static kernel's steps = waves x passes (step_s, a memory round trip).
Its waves also bound it from below (a wave lasts at least a block's life: quantize_terms), in a ridge with its bytes.
The per-token kernel reads its row twice around the block's absmax reduction (cub::BlockReduce and a __syncthreads),
so its rows minus the static ones keep that chain, a dependent round of each pass: clocked = its waves x passes, in
SM clocks (step_cycles). The tables put it in clocks: one wave of the per-token kernel (m <= 800) costs 1,230-1,430
clocks more than the static one at k <= 4096 (one pass), 2,160-2,320 at 5-8k (two), 3,060-3,350 at 10-12k (three),
3,820-4,310 at 16k (four) on H100, B200 and L40S alike, where in microseconds L40S (2.52 GHz) takes ~25% less.
Its second read finds the row in L2 (the resident blocks' rows fit there, no more rows than the grid's m:
resident_rows_bytes) and runs beside the HBM stream both kernels share, so it shows only where it outlasts that
stream (beside_stream, fitted_roofline.under_stream; H100 at 32k tokens x 8k: 4 us measured on a ~250 us kernel).
Its quantize pass divides each element by the token's scale (scaled_fp8_conversion<false>: `val / scale`; the static
kernel multiplies by a reciprocal taken once; vLLM csrc/quantization/w8a8/fp8/common.cuh), an IEEE division (nvcc's
default -prec-div=true) whose reciprocal runs on the SFU at 16 results a clock an SM (CUDA C++ Programming Guide,
throughput of native arithmetic instructions): RCP_PER_SM_CLOCK, the per-token kernel's compute term. HBM
bytes per SM clock order where it shows: B200 streams 29 B an SM a clock, H100 14, L40S 2.4, so the division
outlasts B200's stream (its extra 46 us at 16k tokens x 8k, on a 60 us static kernel) and hides under H100's (2.6
us of 133). The chain, the division and the re-read all run beside the stream (fitted_seconds with a stream).
TensorRT-LLM's per-tensor absmax (computeFP8QuantizeScale, TensorRT-LLM
cpp/tensorrt_llm/common/cudaFp8Utils.cu) runs a fixed grid(1024) x block(1024), a grid-stride loop of 2-byte loads:
steps = its waves x ceil(m k / 1024^2) loop passes (a fixed grid until TensorRT-LLM PR #16569, opened 2026-07-18,
after 1.3.0rc20's release on 2026-06-30). Its static scaling kernel in 1.3.0rc20 is the 16-byte
scaleMatrixPerTensorVec (PR #11662, approved 2026-02-25): grid ceil(m k / 2048) blocks of 256, bandwidth-bound past
its floor, so the rows keep a floor plus their bytes (the per-row item fits to ~0). The dynamic path (the
compute-scale rows' minuend) allocates its scale in the input's dtype (thop/fp8Op.cpp e4m3_quantize_helper): PR
#11662's merged commit (c39bbb2d) templates the vectorized kernel on a float or bf16 scale, another stored copy
(106ff7ce) lists a float scale only, so whether rc20's dynamic path scales with it (the row: memset + absmax) or
with the scalar grid(1024) x 256 scaleMatrix<PER_TENSOR> (the row: memset + absmax + scalar - vectorized) is not
established. The form prices the memset and the absmax alone (2 B an element, the absmax's steps); the scalar
kernel's grid-stride passes added as steps score worse leave-one-GPU-out (B200 18.2 -> 25.0%; docs/accuracy.md
"Session 75 E"), and pricing these kernels by their grids scored worse too ("Session 62 C").
Parameters: data/modern_fit.yaml, families quantize_scale, quantize_compute_scale.
"""
from __future__ import annotations

from .fitted_roofline import family_params, fitted_seconds
from .linear_attention import sm_l2_times
from .params import ceilings
from ...specs.sfu import RCP_PER_SM_CLOCK

BYTES = {"quantize_scale": 3.0, "quantize_compute_scale": 2.0}
TORCH_CHAIN = (("div", 6.0), ("clamp", 8.0), ("cast", 5.0), ("copy", 2.0))   # bytes moved per element
TORCH_CHAIN_FOOTPRINT = 12.0   # distinct bytes per element the chain touches: x 2, two fp32 temporaries, fp8 twice
# vLLM's compute-scale rows are dynamic minus static quantizer, each a CUDA-event time of 5 calls / 5
# (collect_computescale.py); cudaEventElapsedTime resolves ~0.5 us (CUDA runtime API), so each time is +-0.1 us and
# their difference resolves nothing below 0.2 us (B200: 2-20 ns rows, LOO 500-10,000% off): not scored
DIFFERENCE_RESOLUTION_MS = 2e-4
CAST_ELTS_PER_SM_CLOCK = 4.0   # assumed ceiling: ~32 integer ops an element (the c10 routine) at 128 lanes an SM
# resident threads and blocks per SM by compute capability (CUDA C++ Programming Guide, "Technical Specifications per
# Compute Capability": 2048 / 32 on 8.0, 9.0, 10.0; 1536 / 24 on 8.9; turing 7.5: 1024 / 16); the arch name
# cannot tell 8.6 (A10, A40, RTX A6000: 1536 / 16) from 8.0 (A100): those are priced with A100's figures
SM_THREADS = {"turing": 1024, "ampere": 2048, "ada": 1536, "hopper": 2048, "blackwell": 2048}
SM_BLOCKS = {"turing": 16, "ampere": 32, "ada": 24, "hopper": 32, "blackwell": 32}
# elements a thread converts per loop pass: vectorize_with_alignment<16>'s VEC = 16 (two 16-byte bf16 loads; vLLM
# csrc/quantization/vectorization_utils.cuh); the tables step where k crosses 4096, 8192, 12288 at 256 threads
VEC_ELTS = 16
TRT_ABSMAX_GRID = (1024, 1024)   # TensorRT-LLM's per-tensor absmax launch: grid(1024), block(1024)
# assumed lower bound of one block's life (launch, the scale's load, a pass: ~ a global-memory round trip); the
# fit's compute_eff scales it, so it sets the unit of that efficiency, not the prediction
BLOCK_LIFE_CYCLES = 500.0
# the per-token kernel's x / scale: one SFU reciprocal an element (specs/sfu.py RCP_PER_SM_CLOCK); the fit's
# compute_eff scales it (module docstring)


def replay_l2_times(moved, footprint, c):
    """(HBM s, L2 s): all of `moved` from L2 at the SMs' rate where the replayed footprint fits in L2, else all
    from HBM (a streamed footprint larger than L2 evicts itself each replay: L40S's rate drops 7x at 1x L2)."""
    import numpy as np
    return sm_l2_times(moved, np.where(np.asarray(footprint) <= c.l2_bytes, 1.0, np.inf), c)


def torch_chain_work(m, k, c):
    """The SGLang collector's PyTorch static quantizer: four elementwise kernels, the cast's software conversion
    as its compute term."""
    elts = m * k
    parts = []
    for name, per_elt in TORCH_CHAIN:
        t_c = elts / (c.sms * c.clock * CAST_ELTS_PER_SM_CLOCK) if name == "cast" else 0.0 * elts
        parts.append((t_c, *replay_l2_times(per_elt * elts, TORCH_CHAIN_FOOTPRINT * elts, c)))
    return parts, m


def waves(blocks, threads, c):
    """Waves of resident blocks a grid of `blocks` x `threads` runs in on `c`'s SMs (threads and block slots per SM:
    SM_THREADS, SM_BLOCKS)."""
    import numpy as np
    return np.ceil(np.asarray(blocks, dtype=float) / (c.sms * blocks_per_sm(threads, c)))


def blocks_per_sm(threads, c):
    """Resident blocks of `threads` threads an SM of `c` holds (SM_THREADS, SM_BLOCKS)."""
    import numpy as np
    return np.minimum(SM_THREADS.get(c.arch, 2048) // np.asarray(threads, dtype=float), SM_BLOCKS.get(c.arch, 32))


def quantize_steps(kind: str, engine: str, m, k, c):
    """(steps, clocked) of the kernel's grid: serial vector passes of its resident waves (the static kernel's in
    seconds, the per-token kernel's extra in SM clocks: module docstring); (0, 0) where the rows keep a per-row item
    cost."""
    import numpy as np
    m, k = np.asarray(m, dtype=float), np.asarray(k, dtype=float)
    if not has_grid_steps(kind, engine):
        return 0.0 * m, 0.0 * m
    if engine == "trtllm":   # (its per-tensor absmax: has_grid_steps)
        blocks, threads = TRT_ABSMAX_GRID
        return waves(blocks + 0.0 * m, threads, c) * np.ceil(m * k / (blocks * threads)), 0.0 * m
    static = kind == "quantize_scale"   # vLLM's kernels (SGLang is priced with vLLM's kernel fit: quantize_seconds)
    threads = 256.0 + 0.0 * k if static else np.minimum(k, 256.0)
    w = waves(m, threads, c)
    passes = w * np.ceil(k / (threads * VEC_ELTS))
    # the per-token kernel's extra: a dependent round (reduce, sync, re-read) each pass, in SM clocks (docstring)
    return (passes, 0.0 * w) if static else (0.0 * w, passes)


def has_grid_steps(kind: str, engine: str) -> bool:
    """Whether the rows of `kind` x `engine` are priced by their grid's steps (quantize_steps), not a per-row item."""
    return engine in ("vllm", "sglang") or (engine == "trtllm" and kind == "quantize_compute_scale")


def quantize_terms(kind: str, engine: str, m, k, c, torch_chain: bool = False):
    """(parts, items, steps, clocked) of the fitted roofline for `kind` as `engine` runs it (the validation rows and
    quantize_seconds share it). vLLM's scaling kernel: its waves of one-token blocks as the compute-side term, a
    block's life (BLOCK_LIFE_CYCLES, the fit's compute_eff scaling it) against the bytes' memory term (ridge: a grid
    is latency-bound or bandwidth-bound, Little's law on its resident blocks)."""
    if torch_chain:
        parts, items = torch_chain_work(m, k, c)
        return parts, items, 0.0, 0.0
    parts, items = quantize_work(kind, m, k, c)
    steps, clocked = quantize_steps(kind, engine, m, k, c)
    if not has_grid_steps(kind, engine):
        return parts, items, steps, clocked
    if kind == "quantize_scale":
        (_, t_m, t_l2), = parts
        parts = [(waves(m, 256.0, c) * BLOCK_LIFE_CYCLES / c.clock, t_m, t_l2)]
    elif engine == "vllm":   # the per-token block's second read of its row (L2) and its per-element division
        parts = [(division_seconds(m, k, c), *replay_l2_times(BYTES[kind] * m * k, resident_rows_bytes(m, k, c), c))]
    return parts, 0.0 * items, steps, clocked


def division_seconds(m, k, c):
    """Seconds of vLLM's per-token kernel's per-element x / scale at the SFU's reciprocal rate
    (RCP_PER_SM_CLOCK): the compute the static kernel, multiplying by a reciprocal, does not do."""
    import numpy as np
    return np.asarray(m, dtype=float) * np.asarray(k, dtype=float) / (c.sms * RCP_PER_SM_CLOCK * c.clock)


def resident_rows_bytes(m, k, c):
    """Bytes of the bf16 rows vLLM's per-token blocks hold at once (one row a block, SM_BLOCKS / SM_THREADS resident,
    no more blocks than the grid's m): what its second read of a row finds in L2 (the same block read it just before
    its absmax reduction)."""
    import numpy as np
    k = np.asarray(k, dtype=float)
    return np.minimum(np.asarray(m, dtype=float), c.sms * blocks_per_sm(np.minimum(k, 256.0), c)) * 2.0 * k


def beside_stream(kind: str, engine: str, m, k, c):
    """(HBM s, L2 s) of the stream vLLM's compute-scale rows' second read runs beside, else None: a row is the
    per-token kernel less the static one, both streaming the same m x k matrix (3 B an element, replayed as
    quantize_scale's rows), so the per-token block's re-read of its row (from L2), its division and its
    reduce-and-sync chain (the steps) overlap the other blocks' HBM loads (fitted_roofline.under_stream)."""
    if not (engine == "vllm" and kind == "quantize_compute_scale"):
        return None
    moved = BYTES["quantize_scale"] * m * k
    return replay_l2_times(moved, moved, c)


def quantize_work(kind: str, m, k, c, torch_chain: bool = False):
    if torch_chain:
        return torch_chain_work(m, k, c)
    moved = BYTES[kind] * m * k
    # the compute-scale rows are a difference of two replays, not one kernel's: they keep the fractional L2 share
    # (scored 20.9 / 76.7% leave-one-GPU-out against 24.6 / 89.8% with the all-or-nothing residency)
    l2 = replay_l2_times if kind == "quantize_scale" else sm_l2_times
    return [(0.0 * m, *l2(moved, moved, c))], m


def quantize_seconds(m: int, k: int, gpu, engine: str = "vllm", compute_scale: bool = True) -> float:
    """Seconds to quantize an m x k bf16 activation to fp8 on one GPU: the scaling kernel, plus the scale's
    reduction when `compute_scale` (dynamic quantization); gpu: a GPU profile or Ceilings."""
    c = ceilings(gpu)
    total = 0.0
    for kind in ("quantize_scale", "quantize_compute_scale")[: 2 if compute_scale else 1]:
        if kind == "quantize_compute_scale" and engine == "sglang":
            continue   # SGLang's quantizer computes the scale in the same kernel (its rows measure 0)
        # SGLang's own fit times its collector's PyTorch chain, not its server's CUDA kernel: vLLM's kernel fit
        fit_engine = "vllm" if engine == "sglang" and kind == "quantize_scale" else engine
        parts, items, steps, clocked = quantize_terms(kind, fit_engine, m, k, c)
        total += float(fitted_seconds(parts, items, c.sms, family_params(kind, fit_engine, c.arch), steps, clocked,
                                      c.clock, beside_stream(kind, fit_engine, m, k, c)))
    return total
