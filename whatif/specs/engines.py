"""Serving-engine specs (engine_profiles/*.yaml): what shapes a real serving step besides its kernels.

An EngineSpec holds the scheduler's limits (sequences and tokens per step, KV block size, prefix caching), which
decode batches run as captured CUDA graphs (a batch is padded up to the next captured size; larger ones and prefills
run eagerly), the CPU's work per step and whether it overlaps the GPU, and how the engine decides its KV cache's
size. Every profile number carries its unit, provenance and source (`EngineSpec.sources`, for reports).

Long because the spec and its one YAML parser belong together (every field's check beside the field it fills)."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ..errors import WhatifError, check_mapping
from .checks import boolean, choice, integer, number
from .kernel_options import KERNEL_KEYS, kernel_options
from .profiles import PACKAGE_DIR, looks_like_path, profile_index, read_yaml

ENGINE_DIR = PACKAGE_DIR / "engine_profiles"
VERSION_DIR = ENGINE_DIR / "versions"
PROVENANCES = ("documented", "measured", "assumed")
ACCOUNTING = ("total", "static", "free")   # vLLM, SGLang, TensorRT-LLM (see EngineMemory)
GIB = 2 ** 30
# vLLM V1's and SGLang's preemption (EngineSpec)
PREEMPTION_KEYS = ("preempted_blocks_cached", "admits_after_preempting", "preempted_queue_last", "admits_partial_chunk")
OPTIONAL_KEYS = ("fraction_by_tp", "custom_allreduce_max_bytes_by_tp", "multinode_nvls", "kv_dtype_from_checkpoint",
                 "mla_down_projections_replicated",
                 "pad_to_limit", "capacity", "priority", "prefix_caching", "tokens_after_next_launch", "decode_mode",
                 "piecewise_call_s", "mixed_graph_per_sequence", "max_paddings", "pp_batch_queue",
                 *PREEMPTION_KEYS)   # may be left out
# How a decode batch within the captured sizes runs: one whole graph (full), or graph pieces between eagerly run
# attention ops (piecewise: vLLM's cudagraph_mode PIECEWISE, roofline/piecewise_graph.py)
DECODE_GRAPH_MODES = ("full", "piecewise")
CAPACITY = ("on-demand", "reserve", "ratio")   # KV blocks as tokens need them (preempting when out), reserved at
# admission, or on demand behind SGLang's new_token_ratio admission (simulator/scheduling/token_ratio.py)
# Whole prompts without chunked prefill: prefill steps first, decodes waiting (vLLM V0); the running batch drained
# first (request-level); or mixed, beside the decodes in the token budget (TensorRT-LLM inflight batching)
PRIORITIES = ("prefill", "decode", "mixed")
# Rows of a prompt pass's logits the memory plan holds: the serving engine's startup profile run (one per sequence
# of max_num_seqs, at most one per token of its budget), every position of the pass (a CausalLM forward that applies
# its LM head to all hidden states), or each sequence's last position only.
PREFILL_LOGITS = ("profile_run", "every_position", "last_position")


@dataclass(frozen=True)
class CpuOverhead:
    """Host work of one engine step: scheduling, input preparation, sampling bookkeeping, detokenization."""
    per_step_s: float
    per_sequence_s: float
    overlapped: bool          # runs while the GPU executes the previous step (async / overlap scheduler)
    tokens_after_next_launch: bool = False   # a step's tokens go out once the next step is launched (TensorRT-LLM)

    def seconds(self, sequences: int) -> float:
        return self.per_step_s + self.per_sequence_s * sequences


@dataclass(frozen=True)
class FrontEnd:
    """The serving front end a request crosses before the engine schedules it and its first token crosses
    back: HTTP / OpenAI server, tokenization, hand-off to the engine process, detokenizing and streaming the
    first token. Paid only when a request comes through the server (not offline / in-process benchmarks)."""

    per_request_s: float
    per_prompt_token_s: float   # tokenization

    def seconds(self, prompt_tokens: int) -> float:
        return self.per_request_s + self.per_prompt_token_s * prompt_tokens


@dataclass(frozen=True)
class EngineMemory:
    """How the engine sizes its KV cache on one GPU of `capacity` bytes (the CUDA runtime's total where sourced):

    - total (vLLM): fraction x capacity - weights - peak activations (profile run) - runtime - graphs
    - static (SGLang): fraction x capacity - weights (activations, graphs, runtime live in the rest)
    - free (TensorRT-LLM): fraction x (capacity - weights - activations - runtime - graphs)"""

    accounting: str
    fraction: float
    fraction_by_tp: tuple[tuple[int, float], ...]   # (smallest tp, fraction); empty: `fraction` at every tp
    runtime_bytes: float      # CUDA context, library workspaces
    nccl_bytes: float         # communicator buffers, when the replica spans GPUs
    cuda_graph_bytes: float

    def default_fraction(self, tp: int) -> float:
        return at_tp(self.fraction, self.fraction_by_tp, tp)

    def reserved_bytes(self, gpus: int) -> float:
        """Bytes outside weights, activations and KV: runtime, NCCL buffers (multi-GPU) and CUDA graphs."""
        return self.runtime_bytes + (self.nccl_bytes if gpus > 1 else 0.0) + self.cuda_graph_bytes


@dataclass(frozen=True)
class LargeGpuDefaults:
    """Scheduler defaults an engine picks on a GPU of at least `min_bytes` whose name has none of `except_names`."""

    min_bytes: float
    except_names: tuple[str, ...]
    max_num_seqs: int
    max_num_batched_tokens: int


@dataclass(frozen=True)
class EngineSpec:
    """One serving engine as it configures itself (engine_profiles/<engine>.yaml): scheduler limits, captured
    CUDA graphs, CPU overhead per step, KV cache sizing; each number's source in `sources`."""

    name: str
    description: str
    max_num_seqs: int
    max_num_batched_tokens: int
    block_size: int
    chunked_prefill: bool
    graph_sizes: tuple[int, ...]   # decode batch sizes captured as CUDA graphs, ascending
    graph_prefill: bool
    cpu: CpuOverhead
    memory: EngineMemory
    custom_allreduce_max_bytes: float
    custom_allreduce_by_tp: tuple[tuple[int, float], ...] = ()   # (smallest tp, bytes); empty: the one value
    multinode_nvls: bool = True           # NCCL may use NVLS across nodes (False: NCCL_NVLS_ENABLE=0 in its launch)
    kernel_fits: str = ""                 # whose measured kernel fits it runs (a version profile: its engine's)
    kv_from_checkpoint: bool | None = None   # --kv-cache-dtype auto takes the checkpoint's KV dtype (None: as its base)
    mla_down_replicated: bool = False     # MLA's q_a / kv_a down-projections held whole on every TP rank, not split
    gqa_decode_shares_kv: bool = True     # GQA decode reads each KV head once for its whole query-head group
    gqa_decode_max_group: int = 0         # ... for groups of at most this many query heads (0: any group)
    gqa_rereads_in_l2: bool = False       # ... else a group's blocks run together, its re-reads served by L2
    eager_attention: bool = False         # attention as separate matmul/softmax kernels, its scores in HBM
    eager_launch_s: float | None = None   # host time per kernel run eagerly (None: the GPU profile's launch_overhead)
    eager_launch_by_arch: tuple[tuple[str, float], ...] = ()   # (GPU architecture, the same on its hosts)
    eager_module_launches: tuple[tuple[str, float], ...] = ()  # (module key, host launches of its eager prefill)
    prefill_op_launches: tuple[tuple[str, float], ...] = ()    # (op role, kernels its eager prefill launches for it)
    eager_input_quantize: bool = False    # dense fp8 GEMMs launch their own input-quantize kernel (eager passes)
    row_linear_bias_add: bool = False     # o_proj / MLP down biases added by a kernel of their own after the GEMM
    fused_add_rmsnorm: bool = False       # the residual add and the RMSNorm after it run as one kernel (kernel_options)
    mla_absorb_bf16: bool = False         # MLA's q_absorb / v_absorb: 16-bit bmm on load-dequantized weights
    programmatic_launch: bool = False     # kernels launched with PDL: no inter-kernel gap in a pass (kernel_options)
    sync_around_attention: bool = False   # the host calls torch.cuda.synchronize() before and after each attention
    gemm_fits: str = ""                   # GEMMs by another measured fit where its GPU has one ("": the engine's)
    quantized_gemm_inputs: frozenset = frozenset()   # GEMM roles (or "all") whose fp8 input its producer writes
    attention_includes: frozenset = frozenset()   # op roles its attention operator does itself (RoPE, KV write)
    allreduce_norm_fusion: tuple = ()     # ((family, min hidden size), ...): TP all-reduce + residual + norm + quant
    allreduce_fusion_caps: tuple = ()     # ((arch, ((tp, bytes), ...)), ...): where the fusion runs, up to what size
    allreduce_fusion_by_tp: tuple = ()    # ((tp, bytes), ...): the caps of the GPU's architecture (for_gpu)
    allreduce_fusion_kernel: str = ""     # whose fitted all-reduce prices the fused kernel ("": its own)
    allreduce_fusion_quantizes: bool = True   # the fused all-reduce writes the next GEMM's input fp8/fp4
    moe_finalize_allreduce_max_tokens: int = 0   # NVFP4 TRTLLM-Gen MoE: finalize + shared add in the all-reduce
                                                 # up to this many tokens (0: never; with_moe_kernels)
    static_fp8_input_scale: bool = False  # fp8 GEMM inputs scaled by the checkpoint's static scale (no absmax pass)
    sampler_sorts_vocab: bool = False     # top-k/top-p sampling sorts every sequence's whole vocabulary (sort_sampler)
    dp_moe_alltoall: str = "always"       # attention-DP MoE by an all-to-all: always, or only over MNNVL
    dp_prefill_gather: str = "all_gather"   # attention-DP MoE gather/combine of a prefill step (DP_PREFILL_GATHER)
    shared_expert_stream: tuple[str, ...] = ()   # model families whose shared expert runs on a second stream in graphs
    dsa_prefill_as_decode: tuple[str, ...] = ()  # GPU archs where a DSA prefill's sparse MLA runs as per-query decode
    pageable_host_copies: bool = False    # its own offload copies host tensors from pageable memory (staged)
    holds_previous_cache: bool = False    # a decode step's peak holds the previous step's whole cache beside the new
    cache_grows: bool = False             # no KV pool reserved up front: the cache is allocated as sequences grow
    prefill_logits: str = "profile_run"   # which rows of a prompt pass's logits its memory holds (PREFILL_LOGITS)
    logits_fp32_families: tuple[str, ...] = ()   # model families whose forward upcasts those logits to fp32
    mla_kv_fanout: bool = False           # a disaggregated MLA sender sends its whole latent to each receiving TP rank
    prefill_send_slots: int = 0           # PD prefill: slots per running request held to a polled send (0: none)
    prefill_rows_held_to_send: bool = False   # PD prefill: a request keeps its batch row until its KV send is done
    first_token_from_prefill: bool = False    # PD: the prefill pool streams the first token as its step ends
    decode_migration_gate: float = 0.0    # PD decode: its loop moves each KV itself between steps, one at a time,
                                          # while waiting prompts hold < this share of its blocks (0: KV moves apart)
    frontend: FrontEnd = field(default_factory=lambda: FrontEnd(0.0, 0.0))
    large_gpu: LargeGpuDefaults | None = None   # other scheduler defaults on large GPUs (vLLM's)
    graph_pad_to_limit: bool = False      # capture sizes past its batch limit become one graph at the limit
    decode_graph_mode: str = "full"       # a captured decode batch as one graph, or in pieces (DECODE_GRAPH_MODES)
    piecewise_call_s: float = 0.0         # host time per eager call of a piecewise pass (piece replay, attention op)
    graph_sizes_listed: tuple[int, ...] = ()   # the configured capture list graph_sizes was cut from (pad_to_limit)
    graph_sizes_launched: bool = False    # the capture list is a launch's (with_graph_sizes), not the engine's default
    mixed_graph_per_sequence: int = 0     # vLLM: mixed steps captured up to this x max_num_seqs tokens (0: no rule)
    capacity: str = "on-demand"           # how the scheduler takes KV blocks (CAPACITY)
    priority: str = "prefill"             # how whole prompts join a step without chunked prefill (PRIORITIES)
    prefix_caching: bool = False          # its default: KV blocks of shared prompt prefixes reused across requests
    preempted_blocks_cached: bool = False  # a recompute-preempted sequence's full blocks stay in the prefix cache
    admits_after_preempting: bool = True  # a step that preempted a sequence still admits waiting requests
    admits_partial_chunk: bool = True     # a waiting request's chunk is cut to the free KV blocks (False: vLLM V1
                                          # admits the budget's chunk whole or not at all)
    preempted_queue_last: bool = False    # a recompute-preempted sequence rejoins the back of the queue (SGLang)
    # pp > 1: a micro-batch forms only as another's result is taken or just after one formed (vLLM V1's batch queue);
    # False: each micro-batch slot takes the waiting requests at its turn (SGLang, TensorRT-LLM; replica.py)
    pp_batch_queue: bool = False
    max_paddings: int | None = None       # prompts of a prefill step padded to its longest, at most this many padding
                                          # tokens a step (vLLM 0.2.x's 2D inputs); None: prompts packed unpadded
    sources: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def base_engine(self) -> str:
        """The engine this spec is a release of (kernels.fits: sglang-0.5 -> sglang), whose per-engine behaviour it
        keeps unless it says otherwise: a version profile copies its base profile and names the engine it follows."""
        return self.kernel_fits or self.name

    def shares_gqa_decode(self, group: float) -> bool:
        """Whether its decode kernel reads each KV head once for a query-head group of this size."""
        return self.gqa_decode_shares_kv and (self.gqa_decode_max_group == 0 or group <= self.gqa_decode_max_group)

    def gemm_input_quantized(self, role) -> bool:
        """Whether a low-precision GEMM of this role gets its input already quantized by the kernel before it
        (a fused epilogue), so no separate quantization kernel runs (kernels.quantized_gemm_inputs)."""
        s = self.quantized_gemm_inputs
        return "all" in s or (role is not None and role.value in s)

    def for_gpu(self, gpu) -> EngineSpec:
        """The spec as the engine configures itself on `gpu` (vLLM raises max_num_seqs and the token budget
        on GPUs with >= 70 GiB, A100 excepted), its eager host time the one measured on that GPU generation's
        hosts where the spec has it (kernels.eager_launch_by_arch); the spec itself elsewhere."""
        spec = self.on_host_of(gpu.arch).fusion_on(gpu.arch)
        big = spec.large_gpu
        if big is None or gpu.hbm_capacity.value < big.min_bytes:
            return spec
        if any(n in gpu.name.lower() for n in big.except_names):
            return spec
        return replace(spec, max_num_seqs=big.max_num_seqs, max_num_batched_tokens=big.max_num_batched_tokens)

    def fusion_on(self, arch: str) -> EngineSpec:
        """The spec with its all-reduce + norm fusion as it runs on `arch` GPUs (kernels.allreduce_fusion_max_bytes):
        its size caps by tensor-parallel size there, or no fusion on an architecture the table does not list."""
        if not self.allreduce_fusion_caps or not self.allreduce_norm_fusion:
            return self
        table = dict(self.allreduce_fusion_caps).get(arch)
        return replace(self, allreduce_fusion_by_tp=table) if table else replace(self, allreduce_norm_fusion=())

    def with_moe_kernels(self, kernels: str | None) -> EngineSpec:
        """The spec with its MoE finalize + all-reduce fusion only where the deployment runs the MoE kernels it
        needs (kernels.moe_finalize_allreduce_max_tokens: TensorRT-LLM's moe_backend TRTLLM, `moe_kernels
        trtllm-gen`)."""
        if not self.moe_finalize_allreduce_max_tokens or kernels == "trtllm-gen":
            return self
        return replace(self, moe_finalize_allreduce_max_tokens=0)

    def allreduce_fusion_cap(self, tp: int) -> float:
        """Largest TP all-reduce (bytes) the all-reduce + norm fusion takes at `tp`: its own cap where the spec has
        a table (for_gpu; 0 at a size it does not list), else the custom all-reduce's."""
        if not self.allreduce_fusion_caps:
            return self.custom_allreduce_cap(tp)
        return dict(self.allreduce_fusion_by_tp).get(tp, 0.0)

    def on_host_of(self, arch: str) -> EngineSpec:
        """The spec with the eager host time measured on the hosts of `arch` GPUs, where it lists that arch."""
        host = dict(self.eager_launch_by_arch).get(arch)
        if host is None or host == self.eager_launch_s:
            return self
        how = self.sources["kernels.eager_launch_by_arch"]
        src = {**self.sources, "kernels.eager_launch_s": f"{how} (the {arch} GPUs' hosts: {host * 1e6:.3g} us)"}
        return replace(self, eager_launch_s=host, sources=src)

    def with_limits(self, max_num_seqs: int | None = None, max_num_batched_tokens: int | None = None) -> EngineSpec:
        """The spec run with other scheduler limits (a user's --max-num-seqs / --max-num-batched-tokens, or a
        benchmark harness's). Decode graphs are captured only up to the largest pure-decode batch the limits
        allow, min(sequences, tokens); an engine that pads to its limit (TensorRT-LLM) captures one graph at
        the limit in place of the larger listed sizes, any other runs those batches eagerly."""
        seqs = self.max_num_seqs if max_num_seqs is None else max_num_seqs
        tokens = self.max_num_batched_tokens if max_num_batched_tokens is None else max_num_batched_tokens
        bound = min(seqs, tokens)
        listed = self.graph_sizes_listed or self.graph_sizes
        sizes = tuple(s for s in listed if s <= bound)
        if self.graph_pad_to_limit and len(sizes) < len(listed) and bound not in sizes:
            sizes += (bound,)
        return replace(self, max_num_seqs=seqs, max_num_batched_tokens=tokens, graph_sizes=sizes,
                       graph_sizes_listed=listed)

    def with_graph_sizes(self, sizes: tuple[int, ...] | None) -> EngineSpec:
        """The spec capturing the decode batch sizes a launch lists (TensorRT-LLM cuda_graph_config.batch_sizes;
        None: its own); with_limits then cuts them to the scheduler's limits as it does the profile's."""
        if sizes is None:
            return self
        listed = expand_sizes(list(sizes), "cuda_graph_sizes")
        return replace(self, graph_sizes=listed, graph_sizes_listed=listed, graph_sizes_launched=True)

    @property
    def mixed_graph_tokens(self) -> int:
        """Largest token count a prefill or mixed step replays as CUDA-graph pieces; above it the step runs with no
        graph (roofline/graphless_step.py). vLLM: its capture list's last size, by default cut at
        mixed_graph_per_sequence x max_num_seqs (min(max_num_seqs x 2, 512)), a launch's list as given; then at
        the token budget. 0 where the spec has no such rule."""
        if not self.mixed_graph_per_sequence:
            return 0
        listed = self.graph_sizes_listed or self.graph_sizes
        cap = listed[-1] if listed else 0
        if not self.graph_sizes_launched:
            cap = min(cap, self.mixed_graph_per_sequence * self.max_num_seqs)
        return min(cap, self.max_num_batched_tokens)

    def with_decode_graph_mode(self, mode: str | None) -> EngineSpec:
        """The spec with its captured decode batches run as `mode` (DECODE_GRAPH_MODES; None: its own), as a
        launch flag sets it (vLLM --compilation-config '{"cudagraph_mode": "PIECEWISE"}')."""
        if mode is None or mode == self.decode_graph_mode:
            return self
        return replace(self, decode_graph_mode=choice(mode, DECODE_GRAPH_MODES, "cudagraph_mode"))

    def with_cpu_overlap(self, overlapped: bool | None) -> EngineSpec:
        """The spec with its host work beside the GPU's (True) or after it (False; None: its own), as a launch sets
        it: SGLang's --disable-overlap-schedule, or the switches its server_args make for it (speculative decoding
        on the V1 workers: benchmarks/serving_reference.py sglang_spec_v1_overlap)."""
        if overlapped is None or overlapped == self.cpu.overlapped:
            return self
        on = boolean(overlapped, "overlap_schedule")
        # a loop without overlap sends a step's tokens before it launches the next (SGLang's event_loop_normal)
        return replace(self, cpu=replace(self.cpu, overlapped=on, tokens_after_next_launch=on and
                                         self.cpu.tokens_after_next_launch))

    def with_sort_sampler(self, sorts: bool | None) -> EngineSpec:
        """The spec whose sampler sorts the whole vocabulary per sequence (True), as a release's top-k/top-p path runs
        requests that carry both (benchmarks/serving_reference.py vllm_sort_sampler); None: its own."""
        if sorts is None or sorts == self.sampler_sorts_vocab:
            return self
        return replace(self, sampler_sorts_vocab=boolean(sorts, "topk_topp_sort"))

    @property
    def piecewise_decode(self) -> bool:
        return self.decode_graph_mode == "piecewise"

    def custom_allreduce_cap(self, tp: int) -> float:
        """Largest all-reduce (bytes) the engine's custom kernel takes at tensor parallelism `tp` (0: none)."""
        return at_tp(self.custom_allreduce_max_bytes, self.custom_allreduce_by_tp, tp)

    def summary(self) -> str:
        """One line: which spec, and the figures of it that shape a step."""
        m, c = self.memory, self.cpu
        kv = {"total": "of the total, minus weights, activations and reserved", "static": "of the total for weights "
              "+ KV (static)", "free": "of what weights, activations and reserved leave free"}[m.accounting]
        sizes = self.graph_sizes
        graphs = ("no CUDA graphs (every step eager)" if not sizes else
                  f"decode steps at their own batch up to {sizes[-1]} (no padding)" if len(sizes) == sizes[-1] else
                  f"decode CUDA graphs up to batch {sizes[-1]} (padded to {len(sizes)} sizes)")
        folder = "engine_profiles/versions" if (VERSION_DIR / f"{self.name}.yaml").is_file() else "engine_profiles"
        return (f"{self.name} ({folder}/{self.name}.yaml): max {self.max_num_seqs} sequences, "
                f"{self.max_num_batched_tokens} tokens per step; {graphs}; CPU {c.per_step_s * 1e3:.2g} ms "
                f"+ {c.per_sequence_s * 1e6:.2g} us/sequence per step, "
                f"{'overlapped' if c.overlapped else 'not overlapped'}; {self._eager_summary()}"
                f"KV: {m.accounting} accounting, {m.fraction:g} {kv}{self._fused_summary()}")

    def _eager_summary(self) -> str:
        """The host time per eagerly launched kernel, where the spec sets its own (kernels.eager_launch_s)."""
        if self.eager_launch_s is None:
            return ""
        how = self.sources["kernels.eager_launch_s"].split(":")[0]
        return f"eager kernels {self.eager_launch_s * 1e6:.3g} us each on the host ({how}); "

    def _fused_summary(self) -> str:
        """What its kernels do beside the graph's ops (kernels.attention_includes, quantized_gemm_inputs)."""
        parts = []
        if self.attention_includes:
            parts.append(f"attention does {' and '.join(sorted(self.attention_includes))}")
        if self.quantized_gemm_inputs:
            parts.append(f"fp8 inputs of {', '.join(sorted(self.quantized_gemm_inputs))} GEMMs arrive quantized")
        if self.static_fp8_input_scale:
            parts.append("other fp8 GEMM inputs scaled by the checkpoint's static scale")
        return "; " + "; ".join(parts) if parts else ""

    def to_dict(self) -> dict:
        return {"name": self.name, "max_num_seqs": self.max_num_seqs,
                "max_num_batched_tokens": self.max_num_batched_tokens, "block_size": self.block_size,
                "prefix_caching": self.prefix_caching, "cuda_graph_sizes": list(self.graph_sizes),
                "cpu_per_step_s": self.cpu.per_step_s, "cpu_per_sequence_s": self.cpu.per_sequence_s,
                "cpu_overlapped": self.cpu.overlapped, "memory_accounting": self.memory.accounting,
                "eager_launch_s": self.eager_launch_s, "attention_includes": sorted(self.attention_includes),
                "quantized_gemm_inputs": sorted(self.quantized_gemm_inputs), "sources": dict(self.sources)}

    def graph_batch(self, batch: int) -> int | None:
        """The captured size a decode batch of `batch` sequences is padded to; None: it runs eagerly."""
        i = bisect.bisect_left(self.graph_sizes, batch)
        return self.graph_sizes[i] if i < len(self.graph_sizes) else None

    def step_seconds(self, gpu_s: float, sequences: int) -> float:
        """Wall time of one engine step whose kernels take `gpu_s`: the CPU's work beside it when the
        engine overlaps the two, after it when it does not."""
        cpu_s = self.cpu.seconds(sequences)
        return max(gpu_s, cpu_s) if self.cpu.overlapped else gpu_s + cpu_s


def _leaf(data: dict, key: str, where: str, sources: dict, prefix: str):
    raw = data.get(key)
    if not isinstance(raw, dict) or not {"value", "unit", "provenance", "source"} <= set(raw):
        raise WhatifError(f"{where}.{key}: expected {{value, unit, provenance, source}}, got {raw!r}")
    check_mapping(raw, {"value", "unit", "provenance", "source", "note"}, f"{where}.{key}")
    if raw["provenance"] not in PROVENANCES:
        raise WhatifError(f"{where}.{key}.provenance: {raw['provenance']!r} is not valid; "
                          f"valid: {', '.join(PROVENANCES)}")
    sources[f"{prefix}.{key}"] = f"{raw['provenance']}: {raw['source']}"
    return raw["value"]


MAX_GRAPH_BATCH = 1 << 16   # no engine captures a decode graph of more sequences (vLLM's largest: 512)


def expand_sizes(raw, where: str) -> tuple[int, ...]:
    """Capture sizes from a list of sizes and [start, stop, step] ranges (stop included), ascending;
    [] for an engine that captures none (every step eager)."""
    if not isinstance(raw, list):
        raise WhatifError(f"{where}: expected a list of sizes and [start, stop, step] ranges ([]: no CUDA graphs)")
    out: set[int] = set()
    for item in raw:
        if isinstance(item, list):
            if len(item) != 3:
                raise WhatifError(f"{where}: range {item!r} must be [start, stop, step]")
            start, stop, step = (integer(v, where, high=MAX_GRAPH_BATCH, what="sequences") for v in item)
            out.update(range(start, stop + 1, step))
        else:
            out.add(integer(item, where, high=MAX_GRAPH_BATCH, what="sequences"))
    return tuple(sorted(out))


def engine_from_mapping(data: dict, where: str) -> EngineSpec:
    check_mapping(data, {"kind", "name", "description", "extends", "scheduler", "cuda_graphs", "cpu", "memory",
                         "collectives", "kernels", "offload", "cache", "frontend", "disaggregation"}, where)
    if data.get("kind") != "engine":
        raise WhatifError(f"{where}: kind must be 'engine', got {data.get('kind')!r}")
    src: dict[str, str] = {}
    sections = {}
    large_keys = {"large_gpu_min_gib", "large_gpu_except", "large_gpu_max_num_seqs", "large_gpu_max_num_batched_tokens"}
    for name, keys in (("scheduler", {"max_num_seqs", "max_num_batched_tokens", "block_size", "chunked_prefill",
                                      "capacity", "priority", "prefix_caching", "max_paddings", *PREEMPTION_KEYS,
                                      "pp_batch_queue", *large_keys}),
                       ("cuda_graphs", {"decode_sizes", "prefill", "pad_to_limit", "decode_mode", "piecewise_call_s",
                                        "mixed_graph_per_sequence"}),
                       ("cpu", {"per_step_s", "per_sequence_s", "overlapped", "tokens_after_next_launch"}),
                       ("memory", {"accounting", "fraction", "fraction_by_tp", "runtime_gib", "nccl_gib",
                                   "cuda_graph_gib", "kv_dtype_from_checkpoint", "mla_down_projections_replicated"}),
                       ("collectives", {"custom_allreduce_max_bytes", "custom_allreduce_max_bytes_by_tp",
                                        "multinode_nvls"})):
        sec = check_mapping(data.get(name), keys, f"{where}.{name}")
        # sorted: a set's order follows the hash seed, and `src` (the --json `sources`) would differ run to run
        sections[name] = {k: _leaf(sec, k, f"{where}.{name}", src, name) for k in sorted(keys) if k in sec or
                          (k not in OPTIONAL_KEYS and k not in large_keys)}
    s, g, c, m = (sections[k] for k in ("scheduler", "cuda_graphs", "cpu", "memory"))
    accounting = m["accounting"]
    if accounting not in ACCOUNTING:
        raise WhatifError(f"{where}.memory.accounting: {accounting!r} is not valid; valid: {', '.join(ACCOUNTING)}")
    engine = EngineSpec(
        name=str(data.get("name", where)), description=str(data.get("description", "")),
        max_num_seqs=integer(s["max_num_seqs"], f"{where}.scheduler.max_num_seqs"),
        max_num_batched_tokens=integer(s["max_num_batched_tokens"], f"{where}.scheduler.max_num_batched_tokens"),
        block_size=integer(s["block_size"], f"{where}.scheduler.block_size"),
        chunked_prefill=boolean(s["chunked_prefill"], f"{where}.scheduler.chunked_prefill"),
        capacity=choice(s.get("capacity", "on-demand"), CAPACITY, f"{where}.scheduler.capacity"),
        priority=choice(s.get("priority", "prefill"), PRIORITIES, f"{where}.scheduler.priority"),
        prefix_caching=boolean(s.get("prefix_caching", False), f"{where}.scheduler.prefix_caching"),
        max_paddings=None if s.get("max_paddings") is None else integer(s["max_paddings"],
                                                                         f"{where}.scheduler.max_paddings", 0),
        **{k: boolean(s.get(k, k in ("admits_after_preempting", "admits_partial_chunk")), f"{where}.scheduler.{k}")
           for k in PREEMPTION_KEYS},
        pp_batch_queue=boolean(s.get("pp_batch_queue", False), f"{where}.scheduler.pp_batch_queue"),
        graph_sizes=expand_sizes(g["decode_sizes"], f"{where}.cuda_graphs.decode_sizes"),
        graph_prefill=boolean(g["prefill"], f"{where}.cuda_graphs.prefill"),
        graph_pad_to_limit=boolean(g.get("pad_to_limit", False), f"{where}.cuda_graphs.pad_to_limit"),
        decode_graph_mode=choice(g.get("decode_mode", "full"), DECODE_GRAPH_MODES, f"{where}.cuda_graphs.decode_mode"),
        piecewise_call_s=number(g.get("piecewise_call_s", 0.0), f"{where}.cuda_graphs.piecewise_call_s", 0.0, 0.1),
        mixed_graph_per_sequence=integer(g.get("mixed_graph_per_sequence", 0),
                                         f"{where}.cuda_graphs.mixed_graph_per_sequence", 0),
        cpu=CpuOverhead(number(c["per_step_s"], f"{where}.cpu.per_step_s", 0.0, 1.0),
                        number(c["per_sequence_s"], f"{where}.cpu.per_sequence_s", 0.0, 1.0),
                        boolean(c["overlapped"], f"{where}.cpu.overlapped"),
                        boolean(c.get("tokens_after_next_launch", False), f"{where}.cpu.tokens_after_next_launch")),
        memory=EngineMemory(
            accounting, number(m["fraction"], f"{where}.memory.fraction", 0.01, 1.0),
            _by_tp(m.get("fraction_by_tp"), f"{where}.memory.fraction_by_tp", "fraction", 0.01, 1.0),
            number(m["runtime_gib"], f"{where}.memory.runtime_gib", 0.0, 1e4) * GIB,
            number(m["nccl_gib"], f"{where}.memory.nccl_gib", 0.0, 1e4) * GIB,
            number(m["cuda_graph_gib"], f"{where}.memory.cuda_graph_gib", 0.0, 1e4) * GIB),
        kv_from_checkpoint=None if "kv_dtype_from_checkpoint" not in m else boolean(
            m["kv_dtype_from_checkpoint"], f"{where}.memory.kv_dtype_from_checkpoint"),
        mla_down_replicated=boolean(m.get("mla_down_projections_replicated", False),
                                    f"{where}.memory.mla_down_projections_replicated"),
        custom_allreduce_max_bytes=number(sections["collectives"]["custom_allreduce_max_bytes"],
                                           f"{where}.collectives.custom_allreduce_max_bytes", 0.0, 1e12),
        custom_allreduce_by_tp=_by_tp(sections["collectives"].get("custom_allreduce_max_bytes_by_tp"),
                                      f"{where}.collectives.custom_allreduce_max_bytes_by_tp", "bytes", 0.0, 1e12),
        multinode_nvls=boolean(sections["collectives"].get("multinode_nvls", True),
                               f"{where}.collectives.multinode_nvls"),
        large_gpu=_large_gpu(s, f"{where}.scheduler"), **_optional_sections(data, where, src), sources=src)
    # an engine that pads to its limit drops the listed sizes beyond it at start-up (TensorRT-LLM)
    return engine.with_limits() if engine.graph_pad_to_limit else engine


def at_tp(default: float, table: tuple[tuple[int, float], ...], tp: int) -> float:
    """The value a [(smallest tp, value), ...] table gives at tensor parallelism `tp` (`default` below it)."""
    chosen = default
    for min_tp, value in table:
        if tp >= min_tp:
            chosen = value
    return chosen


def _by_tp(raw, where: str, what: str, low: float, high: float) -> tuple[tuple[int, float], ...]:
    """A [[smallest tp, `what`], ...] table, each value in [low, high] (absent: empty)."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, list) and len(p) == 2 for p in raw):
        raise WhatifError(f"{where}: expected a list of [min tp, {what}] pairs")
    return tuple((integer(t, where), number(v, where, low, high)) for t, v in raw)


def _large_gpu(s: dict, where: str) -> LargeGpuDefaults | None:
    """The scheduler's large-GPU defaults: all four large_gpu_* keys, or none."""
    keys = ("large_gpu_min_gib", "large_gpu_except", "large_gpu_max_num_seqs", "large_gpu_max_num_batched_tokens")
    given = [k for k in keys if k in s]
    if not given:
        return None
    if len(given) != len(keys):
        raise WhatifError(f"{where}: give all of {', '.join(keys)} or none")
    names = s["large_gpu_except"]
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise WhatifError(f"{where}.large_gpu_except: expected a list of GPU name parts, e.g. [a100]")
    return LargeGpuDefaults(number(s["large_gpu_min_gib"], f"{where}.large_gpu_min_gib", 1.0, 1e5) * GIB,
                            tuple(n.lower() for n in names),
                            integer(s["large_gpu_max_num_seqs"], f"{where}.large_gpu_max_num_seqs"),
                            integer(s["large_gpu_max_num_batched_tokens"], f"{where}.large_gpu_max_num_batched_tokens"))


def _optional_sections(data: dict, where: str, src: dict) -> dict:
    """`kernels` (how its version runs the fitted kernels: specs/kernel_options.py), `offload` (whether its own
    offload copies from pageable host memory), `cache` (whether a step's peak holds the previous step's cache),
    `disaggregation` (whether an MLA prefill rank sends its latent KV to each receiving attention-TP rank) and
    `frontend` (the server's per-request cost); absent: pinned host copies, one cache at a time, one KV copy a
    request, no front end."""
    out: dict = {"kernel_fits": str(data.get("extends") or data.get("name", ""))}   # a release: its base's fits
    if "kernels" in data:
        sec = check_mapping(data["kernels"], KERNEL_KEYS, f"{where}.kernels")
        out.update(kernel_options(sec, f"{where}.kernels", lambda key: _leaf(sec, key, f"{where}.kernels", src,
                                                                              "kernels")))
    if "offload" in data:   # how the engine's own offload (a user's --place) holds host tensors
        sec = check_mapping(data["offload"], {"host_memory"}, f"{where}.offload")
        kind = _leaf(sec, "host_memory", f"{where}.offload", src, "offload")
        if kind not in ("pinned", "pageable"):
            raise WhatifError(f"{where}.offload.host_memory: {kind!r} is not valid; valid: pinned, pageable")
        out["pageable_host_copies"] = kind == "pageable"
    if "cache" in data:   # whether a decode step keeps the previous step's cache alive while it builds the next
        sec = check_mapping(data["cache"], {"previous_step_held", "grows_as_needed", "prefill_logits",
                                            "prefill_logits_fp32"}, f"{where}.cache")
        held = _leaf(sec, "previous_step_held", f"{where}.cache", src, "cache")
        out["holds_previous_cache"] = boolean(held, f"{where}.cache.previous_step_held")
        if "grows_as_needed" in sec:   # no KV pool: a prompt pass's activations never meet the final cache
            grows = _leaf(sec, "grows_as_needed", f"{where}.cache", src, "cache")
            out["cache_grows"] = boolean(grows, f"{where}.cache.grows_as_needed")
        if "prefill_logits" in sec:   # rows of a prompt pass's logits held (roofline/memory.py prefill_logit_rows)
            rows = _leaf(sec, "prefill_logits", f"{where}.cache", src, "cache")
            out["prefill_logits"] = choice(rows, PREFILL_LOGITS, f"{where}.cache.prefill_logits")
        if "prefill_logits_fp32" in sec:   # families whose CausalLM forward runs logits.float() in that release
            fams = _leaf(sec, "prefill_logits_fp32", f"{where}.cache", src, "cache")
            if not isinstance(fams, list) or not all(isinstance(f, str) for f in fams):
                raise WhatifError(f"{where}.cache.prefill_logits_fp32: {fams!r} is not valid; valid: a list of model "
                                  "families (llama, mistral, ...)")
            out["logits_fp32_families"] = tuple(fams)
    if "disaggregation" in data:   # how its disaggregated pools hand a request's KV over (simulator/kv_fanout.py)
        sec = check_mapping(data["disaggregation"], {"mla_kv_fanout", "prefill_send_slots",
                                                     "prefill_rows_held_to_send", "first_token_from_prefill",
                                                     "decode_migration_gate"}, f"{where}.disaggregation")
        if "mla_kv_fanout" in sec:
            fanout = _leaf(sec, "mla_kv_fanout", f"{where}.disaggregation", src, "disaggregation")
            out["mla_kv_fanout"] = boolean(fanout, f"{where}.disaggregation.mla_kv_fanout")
        if "prefill_send_slots" in sec:   # (simulator/prefill_send_slots.py)
            slots = _leaf(sec, "prefill_send_slots", f"{where}.disaggregation", src, "disaggregation")
            out["prefill_send_slots"] = integer(slots, f"{where}.disaggregation.prefill_send_slots", 0, 16,
                                                what="slots per running request")
        if "prefill_rows_held_to_send" in sec:   # (simulator/prefill_rows.py)
            rows = _leaf(sec, "prefill_rows_held_to_send", f"{where}.disaggregation", src, "disaggregation")
            out["prefill_rows_held_to_send"] = boolean(rows, f"{where}.disaggregation.prefill_rows_held_to_send")
        if "first_token_from_prefill" in sec:   # (simulator/replica.py Replica.first_token)
            first = _leaf(sec, "first_token_from_prefill", f"{where}.disaggregation", src, "disaggregation")
            out["first_token_from_prefill"] = boolean(first, f"{where}.disaggregation.first_token_from_prefill")
        if "decode_migration_gate" in sec:   # (simulator/decode_migration.py)
            gate = _leaf(sec, "decode_migration_gate", f"{where}.disaggregation", src, "disaggregation")
            out["decode_migration_gate"] = number(gate, f"{where}.disaggregation.decode_migration_gate", 0.0, 1.0)
    if "frontend" in data:
        sec = check_mapping(data["frontend"], {"per_request_s", "per_prompt_token_s"}, f"{where}.frontend")
        out["frontend"] = FrontEnd(*(number(_leaf(sec, k, f"{where}.frontend", src, "frontend"),
                                             f"{where}.frontend.{k}", 0.0, 10.0)
                                     for k in ("per_request_s", "per_prompt_token_s")))
    return out


def engine_names() -> tuple[str, ...]:
    return tuple(profile_index(ENGINE_DIR))


def version_names() -> tuple[str, ...]:
    """Profiles of older engine versions (engine_profiles/versions/, e.g. trtllm-0.6): their engine's fits, amended."""
    return tuple(profile_index(VERSION_DIR))


def engine_mapping(path: Path) -> dict:
    """A profile file's mapping. A release profile may list only what differs from its engine's: `extends: <engine>`
    (an engine_profiles/*.yaml name, or a version's, itself resolved the same way: a launch of that release with
    other flags, e.g. vllm-0.2-ray) takes that profile and lays each of its own sections' leaves over the base's
    (name and description its own; a leaf replaced whole, none removed); its fits default to the base engine's."""
    data = read_yaml(path)
    base = data.get("extends")
    if base is None:
        return data
    index = {**profile_index(ENGINE_DIR), **profile_index(VERSION_DIR)}
    if base not in index or index[base] == path:
        raise WhatifError(f"{path.name}.extends: {base!r} is not valid; valid: {', '.join(index)}")
    merged = engine_mapping(index[base])
    for key, value in data.items():
        both = isinstance(value, dict) and isinstance(merged.get(key), dict)
        merged[key] = {**merged[key], **value} if both else value
    return merged


@cache
def load_engine(name: str) -> EngineSpec:
    """A shipped engine profile by name (vllm, sglang, trtllm, or a version such as trtllm-0.6) or a YAML path."""
    if looks_like_path(name):
        path = Path(name)
    else:
        index = {**profile_index(ENGINE_DIR), **profile_index(VERSION_DIR)}
        if name not in index:
            raise WhatifError(f"--engine: '{name}' is not valid; valid: {', '.join(index)}")
        path = index[name]
    return engine_from_mapping(engine_mapping(path), path.name)
