"""The serving engines: whose measured kernels (the aiconfigurator corpus) the default efficiency's kernel
models were fitted on, and whose serving loop (engine_profiles/*.yaml: CUDA-graph sizes, CPU overhead, memory
accounting, scheduler limits) shapes a step. The one list the CLI, the scenario, the fits and the corpus
reader share; `--engine` picks both."""
from __future__ import annotations

from ..errors import WhatifError
from ..specs.engines import EngineSpec, load_engine, version_names

ENGINES = ("vllm", "sglang", "trtllm")
DEFAULT_ENGINE = "vllm"
# Engines whose scheduler limits are the whole attention-DP group's, each rank taking 1/dp: SGLang's server_args
# divides chunked_prefill_size by dp_size under DP attention and each DP worker admits max_running_requests // dp_size.
# TensorRT-LLM's max_batch_size / max_num_tokens and vLLM's per-DP-engine limits are each rank's own. Keyed on the
# spec's base engine (EngineSpec.base_engine), so every SGLang release profile is read as SGLang's.
GROUP_LIMITS = ("sglang",)


def limits_per_group(spec: EngineSpec | None) -> bool:
    """Whether an engine's batch and token limits are its attention-DP group's (split over the ranks), not each
    rank's; no engine spec: the group's (the estimate's long-standing reading)."""
    return spec is None or spec.base_engine in GROUP_LIMITS


def rank_limit(spec: EngineSpec | None, limit: int, dp: int) -> int:
    """One attention-DP rank's share of an engine limit given as the engine takes it (GROUP_LIMITS: 1/dp of it,
    at least 1; else the rank's own): what the simulator's ranks run (simulator/rank_group.rank_scheduler)."""
    return max(1, limit // dp) if dp > 1 and limits_per_group(spec) else limit


def engine_limit_for_group(spec: EngineSpec | None, group: int, dp: int) -> int:
    """The engine limit (--max-num-seqs / --max-running-requests) under which a replica of `dp` attention-DP ranks
    runs `group` sequences as the estimate prices them (ceil(group / dp) a rank, roofline.estimate
    group_prefill_passes): the inverse of rank_limit, so the search's batch and the simulator's ranks agree."""
    per_rank = -(-group // dp)
    return per_rank * dp if dp > 1 and limits_per_group(spec) else per_rank


def check_engine(engine: str) -> str:
    """The engine whose measured kernels `engine` runs: itself, or a version profile's (trtllm-0.6: trtllm)."""
    if engine in ENGINES:
        return engine
    if engine in version_names():
        return check_engine(load_engine(engine).kernel_fits)
    raise WhatifError(f"--engine: '{engine}' is not valid; valid: {', '.join(ENGINES + version_names())}")


def engine_spec(engine: str = DEFAULT_ENGINE) -> EngineSpec:
    """The serving-loop spec of a checked engine name (a version profile's own spec, not its fits')."""
    check_engine(engine)
    return load_engine(engine)


# The ROCm builds of the engines (engine_profiles/versions/*-rocm.yaml): an AMD GPU runs these, an NVIDIA GPU never.
ROCM_ENGINES = {"vllm": "vllm-rocm", "sglang": "sglang-rocm"}


def engine_for_gpu(engine: str, gpu) -> str:
    """The engine spec a GPU runs for `--engine engine`: vllm / sglang become their ROCm builds on an AMD GPU; an
    engine with no ROCm build on an AMD GPU, or a ROCm build on an NVIDIA one, is a one-line error."""
    rocm = tuple(ROCM_ENGINES.values())
    if getattr(gpu, "vendor", "nvidia") == "amd":
        if engine in ROCM_ENGINES:
            return ROCM_ENGINES[engine]
        if engine in rocm:
            return engine
        raise WhatifError(f"--engine: '{engine}' has no ROCm build to run on {gpu.name} (AMD); "
                          f"valid: {', '.join(tuple(ROCM_ENGINES) + rocm)}")
    if engine in rocm:
        raise WhatifError(f"--engine: '{engine}' runs on AMD GPUs only, not {gpu.name}; "
                          f"valid: {', '.join(e for e in ENGINES + version_names() if e not in rocm)}")
    return engine
