"""What the kernel models need from a GPU (its datasheet ceilings), their fitted parameters, and
the loader of the fitted parameters (data/kernel_fit.yaml).

A model's time = datasheet ceilings x parameters fitted per architecture x dtype x engine. Every
`*_eff` parameter is a fraction of a datasheet ceiling and lies in (0, 1]; `*_s` parameters are
seconds; `smooth` is the exponent p of the compute/memory combination (t_c^p + t_m^p)^(1/p).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path


from ...errors import WhatifError
from ...specs.sfu import DEFAULT_EXP2_PER_SM_CLOCK
from ..engines import DEFAULT_ENGINE
from ..ridge import ridge

FIT_FILE = Path(__file__).resolve().parent.parent / "data" / "kernel_fit.yaml"
ARCH_ORDER = ("turing", "ampere", "ada", "hopper", "blackwell")   # generation order, as specs.hardware.ARCHS
DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0,
               "fp4": 0.5625}   # NVFP4: a 4-bit value plus one 8-bit scale per 16-element block


@dataclass(frozen=True)
class Ceilings:
    """A GPU's datasheet numbers the kernel models use. Fields may be numpy arrays (one value per
    row) when a fitter evaluates many GPUs at once.

    peak: dense tensor-core FLOP/s by dtype; hbm_bw: B/s; sms: SM count; l2_bytes: L2 size in B; clock: Hz
    (tells whether a working set could stay in L2; no present form gives L2 its own bandwidth:
    on the corpus that transferred worse between architectures than treating all as HBM)."""

    name: str
    arch: str
    peak: dict
    hbm_bw: float
    sms: float
    l2_bytes: float
    clock: float = 0.0   # boost clock, Hz (an SM's own rate: DeepEP's per-SM copies)
    exp2_per_clock: float = DEFAULT_EXP2_PER_SM_CLOCK   # SFU exp2 results an SM a clock (specs/sfu.py)

    def peak_flops(self, dtype: str):
        if dtype not in self.peak:
            raise WhatifError(f"dtype '{dtype}' has no tensor-core peak on {self.name}; "
                              f"valid: {', '.join(sorted(self.peak))}")
        return self.peak[dtype]


def ceilings(gpu) -> Ceilings:
    """The Ceilings of a whatif GPU profile (specs.hardware.GPU): it must provide `peak` (dtype ->
    Quantity FLOP/s), `hbm_bandwidth`, `sm_count`, `l2_size` (Quantities) and `arch`."""
    if isinstance(gpu, Ceilings):
        return gpu
    return Ceilings(gpu.name, gpu.arch, {d: q.value for d, q in gpu.peak.items()}, gpu.hbm_bandwidth.value,
                    gpu.sm_count.value, gpu.l2_size.value, gpu.boost_clock.value,
                    getattr(gpu, "exp2_per_sm_clock", DEFAULT_EXP2_PER_SM_CLOCK))


def combine(t_compute, t_memory, p: float):
    """(t_c^p + t_m^p)^(1/p): the roofline's one combination (roofline/ridge.py)."""
    return ridge(t_compute, t_memory, p)


@dataclass(frozen=True)
class GemmParams:
    """GEMM: compute efficiency per dispatch bucket of m, one HBM efficiency, a floor, the
    combination exponent, the fp8 / fp4 activation-quantization cost, and the narrowest N tile."""

    eff_tiny: float = 0.5       # m <= TINY_M (GEMV-like kernels)
    eff_small: float | None = None   # TINY_M < m <= SMALL_M (32-row tiles); None: as eff_skinny (a fit
                                     # without its own, e.g. the fp8 blocks, ties the two)
    eff_skinny: float = 0.5     # SMALL_M < m <= SKINNY_M
    eff_mid: float = 0.7        # SKINNY_M < m <= MID_M (split-K / stream-K kernels)
    eff_large: float = 0.8      # m > MID_M
    mem_eff: float = 0.8
    floor_s: float = 3e-6
    smooth: float = 3.0
    tile_s: float = 5e-7        # fixed cost of one output tile on one SM (fill, epilogue)
    max_split: float = 8.0      # most K slices the library splits a GEMM into (floor taken)
    split_s: float = 1e-6       # fixed cost of a split-K GEMM's reduction
    quant_s: float = 2e-6       # fp8 and fp4 only: fixed time of the activation-quantization kernel(s)
    quant_row_s: float = 5e-9   # fp8 and fp4 only: serialized time per row of m in the quantizer
    min_tile_n: float = 64.0    # narrowest N tile the library offers (64, 128 or 256: the fitter keeps the one
                                # whose fit has the lowest corpus error; TensorRT-LLM's NVFP4 GEMMs run 256 only)

    def __post_init__(self):
        if self.eff_small is None:
            object.__setattr__(self, "eff_small", self.eff_skinny)


@dataclass(frozen=True)
class PrefillParams:
    """Causal prefill attention: tile compute efficiency, per-tile and per-CTA fixed costs, HBM
    efficiency, a floor and the combination exponent."""

    compute_eff: float = 0.7
    mem_eff: float = 0.8
    tile_s: float = 1e-7        # fixed cost per (query tile, key tile) pair on one SM
    cta_s: float = 1e-6         # fixed cost per query tile (CTA prologue/epilogue) on one SM
    token_s: float = 1e-7       # fixed cost per token (KV-cache write) on one SM
    kv_splits: float = 2.0      # ways the longest query tile's key range is split (split-KV)
    floor_s: float = 8e-6
    smooth: float = 3.0


@dataclass(frozen=True)
class DecodeParams:
    """Decode attention: KV streaming efficiency, GQA compute efficiency, a per-(sequence, KV head)
    cost spread over the SMs, a floor and the combination exponent."""

    mem_eff: float = 0.85
    compute_eff: float = 0.5
    kv_splits: float = 16.0     # most split-KV work items per (sequence, KV head) (floor taken)
    seq_s: float = 1e-7
    floor_s: float = 8e-6
    smooth: float = 3.0
    group_rows: float = 16.0    # not fitted: the kernel's query-head tile (decode_attention.group_rows)


# MLA (DeepSeek's latent attention) keeps the prefill and decode forms with parameters of its own:
# its kernels (FlashMLA, vLLM's Triton/FlashAttention MLA) are not the ones of the attention table.
PARAM_CLASSES = {"gemm": GemmParams, "prefill_attention": PrefillParams, "decode_attention": DecodeParams,
                 "decode_attention_mmha": DecodeParams, "mla_prefill": PrefillParams, "mla_decode": DecodeParams}


def fit_dtype(dtype: str) -> str:
    """The dtype a fit is keyed by: 16-bit floats share the bf16 fits (the same tensor-core rate and bytes)."""
    return "bf16" if dtype in ("bf16", "fp16", "bfloat16", "float16") else dtype


def efficiency_fields(params) -> list[str]:
    """Names of the fields of a params object that are fractions of a ceiling (must be in (0, 1])."""
    return [f.name for f in fields(params) if f.name.endswith("eff") or f.name.startswith("eff_")]


def nearest_arch(arch: str, fitted) -> str:
    """The fitted architecture closest to `arch` by generation; a tie goes to the newer one."""
    return min(fitted, key=lambda a: (abs(ARCH_ORDER.index(a) - ARCH_ORDER.index(arch)), -ARCH_ORDER.index(a)))


@dataclass(frozen=True)
class FittedParams:
    """A kernel model's fitted parameters and what they were fitted on."""

    params: object
    provenance: str   # what it was fitted on, and any fallback taken to reach it


@cache
def _fit_table() -> dict:
    from ...specs.profiles import read_yaml
    return read_yaml(FIT_FILE).get("fits", {}) if FIT_FILE.is_file() else {}


def params_from_block(op: str, values: dict, where: str):
    try:
        return PARAM_CLASSES[op](**{k: float(v) for k, v in values.items()})
    except (TypeError, ValueError) as exc:
        valid = ", ".join(f.name for f in fields(PARAM_CLASSES[op]))
        raise WhatifError(f"{where}: {exc}; valid: {valid}") from None


def kernel_params_from(block, where: str) -> dict:
    """A calibration file's `kernel_models:` mapping ({op: {dtype: {param: value}}}) as
    {(op, dtype): params}, every efficiency in (0, 1] and every other parameter finite and >= 0."""
    import math
    if not isinstance(block, dict):
        raise WhatifError(f"{where}: {type(block).__name__} is not a mapping of kernel model -> dtype -> parameters")
    out = {}
    for op, by_dtype in block.items():
        if op not in PARAM_CLASSES or not isinstance(by_dtype, dict):
            raise WhatifError(f"{where}: kernel model {str(op)[:40]!r} is not valid; valid: {', '.join(PARAM_CLASSES)}")
        for dtype, values in by_dtype.items():
            if dtype not in DTYPE_BYTES or not isinstance(values, dict):
                raise WhatifError(f"{where}.{op}: dtype {str(dtype)[:20]!r} is not valid; "
                                  f"valid: {', '.join(DTYPE_BYTES)}")
            here = f"{where}.{op}.{dtype}"
            bad = [k for k, v in values.items() if isinstance(v, bool) or not isinstance(v, (int, float))
                   or not math.isfinite(v) or v < 0]
            if bad:
                raise WhatifError(f"{here}.{bad[0]}: must be a finite number >= 0")
            params = params_from_block(op, values, here)
            for name in efficiency_fields(params):
                if not 0.0 < getattr(params, name) <= 1.0:
                    raise WhatifError(f"{here}.{name}: {getattr(params, name):g} must be in (0, 1] "
                                      "(a fraction of a ceiling)")
            out[(op, dtype)] = params
    return out


# Fits an engine's rows cannot stand for, and whose fit is used instead. vLLM 0.14's MLA rows were timed
# eagerly (the corpus README: impl.forward under CUDA events): their 0.1-0.3 ms floors are the Python
# forward's launches, 10-30x the ~10 us of the graphed kernels every other engine's rows show, and a
# CUDA-graph decode step does not pay them.
# TensorRT-LLM's NVFP4 GEMM rows time the autotuner's fallback tactic: aiconfigurator's collect_gemm.py runs
# Linear.forward with no autotune() context, and nvfp4_gemm's AutoTuner.choose_one outside tuning mode on a
# cache miss returns the fallback (tensorrt_llm/_torch/autotuner.py: "using the fallback tactic, due to cache
# miss"), 2x the other engines' rows where n is narrow and k long (n 8192, k 16384: 39 us vs 19-21 at m <= 64
# on B200); trtllm-serve tunes every GEMM at warm-up (the PyTorch executor's autotuner warm-up, enable_autotuner
# on by default). vLLM's measured NVFP4 GEMM (FlashInfer CuTe-DSL) stands in for a tuned kernel (assumed).
# Keys: (op, engine) or (op, engine, fit dtype). Added after scoring (session 52).
STAND_INS = {("mla_decode", "vllm"): ("trtllm", "vLLM's MLA rows were timed eagerly (0.1-0.3 ms floors of "
                                                "Python launches): TRT-LLM's graphed MLA fit stands in"),
             ("gemm", "trtllm", "fp4"): ("vllm", "TRT-LLM's NVFP4 GEMM rows time the autotuner's fallback "
                                                 "tactic (serving tunes): vLLM's measured NVFP4 GEMM fit stands in")}


@cache   # a pure lookup in the shipped YAML, asked once per op of every pass
def params_for(op: str, arch: str, dtype: str, engine: str = DEFAULT_ENGINE, stand_ins: bool = True) -> FittedParams:
    """Fitted parameters of `op` (gemm | prefill_attention | decode_attention | mla_prefill |
    mla_decode) for a GPU
    architecture, dtype (GEMM: the operand dtype; attention: the KV-cache dtype) and engine.

    Falls back, and says so in the provenance, in this order: the engine's own fit of this
    architecture; vllm's fit of it; the engine's fit of the nearest fitted architecture by
    generation (a tie: the newer); vllm's. An engine whose rows cannot stand for its serving kernel takes
    another's fit (STAND_INS) unless `stand_ins` is False (the engine's own corpus fit)."""
    if op not in PARAM_CLASSES:
        raise WhatifError(f"kernel model '{op}' is not valid; valid: {', '.join(PARAM_CLASSES)}")
    from . import cdna
    if cdna.is_cdna(arch):   # no AMD kernel corpus: the CDNA family entry (a named stand-in's shape, rescaled)
        base = params_for(op, cdna.stand_in(arch), dtype, engine)
        return FittedParams(cdna.rescaled(base.params, arch, fit_dtype(dtype)),
                            f"{cdna.provenance(arch)}; stand-in {base.provenance}")
    stand_in = STAND_INS.get((op, engine, fit_dtype(dtype))) or STAND_INS.get((op, engine))
    if stand_in and stand_ins:
        fitted = params_for(op, arch, dtype, stand_in[0])
        return FittedParams(fitted.params, f"{stand_in[1]}; {fitted.provenance}")
    if arch not in ARCH_ORDER:
        raise WhatifError(f"arch '{arch}' is not valid; valid: {', '.join(ARCH_ORDER)}")
    dtype = fit_dtype(dtype)
    table = _fit_table().get(op, {})
    of = {e: [b for b in table.get(e, []) if b["dtype"] == dtype] for e in (engine, DEFAULT_ENGINE)}
    if not of[engine] and not of[DEFAULT_ENGINE]:
        raise WhatifError(f"kernel_fit.yaml: no fit of {op} for dtype '{dtype}'; "
                          f"valid: {', '.join(sorted({b['dtype'] for bs in table.values() for b in bs}))}")
    notes = []
    exact = [(e, b) for e in (engine, DEFAULT_ENGINE) for b in of[e] if b["arch"] == arch]
    if exact:
        chosen_engine, block = exact[0]
    else:
        chosen_engine = engine if of[engine] else DEFAULT_ENGINE
        near = nearest_arch(arch, [b["arch"] for b in of[chosen_engine]])
        block = next(b for b in of[chosen_engine] if b["arch"] == near)
        notes.append(f"no {arch} fit: borrowed from {near} ({block['gpu']})")
    if chosen_engine != engine:
        notes.insert(0, f"no {engine} fit of {op} {dtype} on {block['arch']}: using {DEFAULT_ENGINE}'s")
    prov = (f"fitted on {block['rows']} {block['engine']} {block['version']} rows of {block['gpu']} "
            f"({block['source']})")
    params = params_from_block(op, block["params"], f"{FIT_FILE.name}:{op}.{chosen_engine}.{block['arch']}.{dtype}")
    return FittedParams(params, "; ".join(notes + [prov]))
