"""The flags that describe one scenario (model, hardware, parallelism, precision, workload, efficiency,
techniques, memory tiers), shared by estimate, compare, crossover, size-tier, simulate, capacity and report,
and the Scenario they build."""
from __future__ import annotations

import argparse

from ..roofline.efficiency import SOURCES
from ..roofline.engines import DEFAULT_ENGINE, ENGINES
from ..roofline.config import MOE_A2A
from ..roofline.moe_kernels import MOE_KERNELS
from ..specs.engines import DECODE_GRAPH_MODES, MAX_GRAPH_BATCH
from ..specs.dtypes import ACTIVATION_DTYPES, KV_DTYPES, WEIGHT_DTYPES
from ..specs.engines import version_names
from ..specs.checks import (MAX_BATCH, MAX_GPUS, MAX_PARALLEL, MAX_TOKENS, MAX_WIDTH, Field, flag_float, flag_int,
                            flag_int_list, flag_text)

# The count flags: each with its stated bound (checked before any work) and help.
_COUNT_FLAGS = {
    "gpus": (Field("int", 1, MAX_GPUS, "GPUs"), "GPUs used (default: tp x pp, or the system's count)"),
    "nodes": (Field("int", 1, MAX_GPUS, "nodes"), "N nodes of the --hardware node profile (dgx-h100, hgx-h200, "
                                                  "dgx-b200, hgx-b300) as one system: NVLink inside a node, its NICs "
                                                  "between nodes (default 1)"),
    "tp": (Field("int", 1, MAX_PARALLEL), "tensor-parallel degree (default 1)"),
    "pp": (Field("int", 1, MAX_PARALLEL), "pipeline-parallel stages (default 1)"),
    "ep": (Field("int", 1, MAX_PARALLEL), "expert-parallel degree for MoE models: the routed experts split over "
                                           "ep GPUs of the TP group, a divisor of --tp (default 1)"),
    "moe-tp": (Field("int", 1, MAX_PARALLEL), "each routed expert's columns split over moe-tp GPUs "
                                               "(TensorRT-LLM moe_tp_size); ep x moe-tp = tp (default tp / ep)"),
    "redundant-experts": (Field("int", 0, MAX_PARALLEL * 64, "experts"),
                          "EPLB's redundant expert replicas over the EP group (SGLang --ep-num-redundant-experts): "
                          "they take slots and memory, and the balancer evens the ranks' load (default 0)"),
    "expert-skew": (Field("float", 0.0, 4.0), "routing skew: Zipf exponent of the experts' popularity; the "
                                              "busiest EP rank sets the MoE step (default 0: uniform, assumed)"),
    "batch": (Field("int", 1, MAX_BATCH, "sequences"), "sequences decoded together (default 1)"),
    "prompt": (Field("int", 1, MAX_TOKENS, "tokens"), "prompt tokens per sequence (default 512)"),
    "output": (Field("int", 1, MAX_TOKENS, "tokens"), "generated tokens per sequence (default 128)"),
    "prefill-chunk": (Field("int", 1, MAX_TOKENS, "tokens"), "tokens per prefill chunk (default 8192)"),
    "weight-group-size": (Field("int", 1, MAX_WIDTH), "quantization group of int8/int4 weights (default 128)"),
    "shared-prefix": (Field("int", 0, MAX_TOKENS, "tokens"), "leading prompt tokens all sequences share "
                                                              "(default 0)"),
}

# The spellings of vllm serve / vllm bench serve, sglang.launch_server and trtllm-serve for the same flags.
ENGINE_ALIASES = {
    "tp": ("--tensor-parallel-size", "-tp", "--tp-size", "--tp_size"),
    "pp": ("--pipeline-parallel-size", "-pp", "--pp-size", "--pp_size"),
    "ep": ("--ep-size", "--ep_size"),
    "prompt": ("--input-len", "--random-input-len"),
    "output": ("--output-len", "--random-output-len"),
    "kv-dtype": ("--kv-cache-dtype",),
    "memory-utilization": ("--gpu-memory-utilization",),
    "max-num-seqs": ("--max-running-requests", "--max-batch-size", "--max_batch_size"),
    "max-num-batched-tokens": ("--max_num_tokens", "--max-num-tokens"),
}


def spellings(flag: str) -> list[str]:
    """`--flag` and the engines' spellings of it (ENGINE_ALIASES)."""
    return [f"--{flag}", *ENGINE_ALIASES.get(flag, ())]


def add_hardware_flags(p):
    """--hardware, the efficiency model and --json: what every prediction needs, kernels included."""
    from ..specs.defaults import DEFAULT_HARDWARE
    p.add_argument("--hardware", default=None, type=flag_text,
                   help=f"GPU or system profile name, or a YAML path (default {DEFAULT_HARDWARE})")
    p.add_argument("--efficiency", choices=SOURCES, default=None, help="efficiency source (default: default)")
    p.add_argument("--calibration", default=None, type=flag_text,
                   help="calibration file (implies --efficiency calibrated; see `whatif validate calibrate`)")
    p.add_argument("--engine", choices=ENGINES + version_names(), default=None,
                   help=f"serving engine: its spec (engine_profiles/: CUDA-graph sizes, CPU per step, memory "
                        f"accounting, scheduler limits) and the measured kernels the default efficiency was fitted "
                        f"on (default {DEFAULT_ENGINE}); a version profile (engine_profiles/versions/, e.g. "
                        f"hf-transformers: Hugging Face generate, eager) runs its engine's kernel fits")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def add_scenario_flags(p, max_seqs_alias: str | None = None, unlisted: tuple[str, ...] = ()):
    """The flags that describe one scenario (estimate and compare share them). `max_seqs_alias`: another spelling
    of --max-num-seqs (a simulation's --max-batch); `unlisted`: flags parsed (to be refused by name) but not
    shown in --help."""
    p.add_argument("--scenario", type=flag_text, help="scenario YAML (flags given here override it)")
    p.add_argument("--model", type=flag_text, help="model profile name or path to a YAML / Hugging Face config.json")
    add_hardware_flags(p)
    for flag, (field, text) in _COUNT_FLAGS.items():
        p.add_argument(*spellings(flag), dest=flag.replace("-", "_"), type=field.flag_type(),
                       help=argparse.SUPPRESS if f"--{flag}" in unlisted else text)
    p.add_argument("--dp-attention", nargs="?", const=True, default=None, metavar="N",
                   type=flag_int(1, MAX_PARALLEL, "ranks"),
                   help="attention data parallel for MoE models (SGLang --enable-dp-attention --dp N, TensorRT-LLM "
                        "enable_attention_dp): N ranks (default: --tp) each run attention, dense MLPs and shared "
                        "experts on their own sequences, split over tp / N GPUs; the routed experts stay split "
                        "ep x moe-tp over the TP group")
    p.add_argument("--dtype", type=flag_text,
                   help=f"activation dtype, also the weights' and KV's unless given: {', '.join(ACTIVATION_DTYPES)} "
                        "(default bf16; fp4 is NVFP4, on GPUs with an fp4 peak such as B200)")
    p.add_argument("--weight-dtype", type=flag_text,
                   help=f"weight dtype: {', '.join(WEIGHT_DTYPES)} (default: --dtype); int8/int4 are weight-only "
                        "with a scale per --weight-group-size")
    p.add_argument(*spellings("kv-dtype"), dest="kv_dtype", type=flag_text,
                   help=f"KV-cache dtype: {', '.join(KV_DTYPES)} (default: --dtype)")
    add_quantization_flag(p)
    p.add_argument(*spellings("memory-utilization"), dest="memory_utilization",
                   type=flag_float(0, 1, "a fraction of HBM", low_open=True),
                   help="the engine's memory fraction (default: its spec's, e.g. vLLM's gpu_memory_utilization 0.9)")
    p.add_argument(*spellings("max-num-seqs"), *([max_seqs_alias] if max_seqs_alias else []),
                   dest="max_num_seqs",
                   type=flag_int(1, MAX_BATCH, "sequences"), metavar="N",
                   help="the engine's most running sequences (vLLM max_num_seqs, TensorRT-LLM max_batch_size): "
                        "its CUDA graphs stop at this batch; default: the engine spec's for the GPU")
    p.add_argument(*spellings("max-num-batched-tokens"), dest="max_num_batched_tokens",
                   type=flag_int(1, MAX_TOKENS, "tokens"), metavar="TOKENS",
                   help="the engine's token budget per step (vLLM max_num_batched_tokens, TensorRT-LLM "
                        "max_num_tokens): sizes its activation profile run; default: the engine spec's for the GPU")
    p.add_argument("--eager", action="store_true", help="no CUDA graphs in decode: pay CPU launch per kernel")
    p.add_argument("--technique", action="append", default=[], metavar="NAME[:key=value,...]", type=flag_text,
                   help="apply a technique (repeatable; see `whatif list techniques`)")
    t = p.add_argument_group("memory tiers and offloading")
    t.add_argument("--place", action="append", default=[], metavar="CLASS=TIER[:FRACTION]", type=flag_text,
                   help="keep a share of weights, kv or activations in a slower tier: a memory profile of the "
                        "system, its technology (ddr5, lpddr5x, cxl, nvme) or 'host' (repeatable)")
    t.add_argument("--access", choices=("stream", "direct"), default=None,
                   help="stream: copy offloaded bytes into HBM layer by layer (default); direct: kernels read "
                        "the tier in place (KV only; weights are always streamed)")
    t.add_argument("--no-overlap", action="store_true", help="streamed copies wait for compute instead of overlapping")
    t.add_argument("--add-tier", action="append", default=[], metavar="MEMORY[:COUNT]", type=flag_text,
                   help="attach COUNT devices of a memory profile behind the GPU's host link, e.g. "
                        "cxl-micron-cz120-256gb:4 (repeatable)")
    t.add_argument("--host-link", type=flag_text,
                   help="replace the GPU's host link, e.g. pcie-gen4-x16, pcie-gen5-x16, nvlink-c2c")
    t.add_argument("--price-per-hour", type=flag_float(0, 1e4, "USD per hour"),
                   help="USD per hour of the GPUs used (over profile prices)")
    t.add_argument("--launch-us", type=flag_float(0, 1e6, "microseconds"),
                   help="host CPU launch + queuing time per kernel in eager mode, microseconds (default: the GPU "
                        "profile's launch_overhead); e.g. a slower host CPU")
    p.add_argument("--moe-a2a", "--moe-a2a-backend", dest="moe_a2a", choices=MOE_A2A, default=None,
                   help="what carries the attention-DP MoE dispatch / combine: nccl (an NCCL all-to-all, default), "
                        "deepep (DeepEP's kernels: normal in prefill, low-latency in decode, as SGLang "
                        "--moe-a2a-backend deepep --deepep-mode auto) or gather (SGLang's default backend none: "
                        "every rank's tokens all-gathered, the outputs reduce-scattered); it applies under "
                        "--dp-attention with --ep above 1, where whatif prices a dispatch / combine")
    t.add_argument("--moe-kernels", choices=sorted(MOE_KERNELS), default=None,
                   help="the fused-MoE kernels the deployment picks where they are not its engine's own measured ones "
                        "(trtllm-gen: TensorRT-LLM's moe_config.backend TRTLLM, Blackwell only; trtllm-gen-mxfp8: "
                        "the same kernels over MXFP4 weights x MXFP8 activations, gpt-oss on Blackwell; marlin: vLLM's "
                        "VLLM_MXFP4_USE_MARLIN=1, MXFP4 experts on its weight-only MoE; triton: vLLM's Triton "
                        "fused MoE over block-FP8 experts, VLLM_USE_FLASHINFER_MOE_FP8=0 and "
                        "VLLM_MOE_USE_DEEP_GEMM=0, Hopper and Blackwell), priced by the rows that "
                        "timed them")
    t.add_argument("--moe-problem-cost", action="store_true", default=None,
                   help="price each local expert's grouped-GEMM problem where its kernel's rows measured one "
                        "(TensorRT-LLM's Hopper block-FP8 MoE: ~0.11 us an expert and ~5.6 us a layer); off by default")
    t.add_argument("--cudagraph-mode", choices=DECODE_GRAPH_MODES, default=None,
                   help="how captured decode batches run: full (one graph, vLLM's default FULL_AND_PIECEWISE) or "
                        "piecewise (graph pieces between eagerly run attention ops, vLLM --compilation-config "
                        "'{\"cudagraph_mode\": \"PIECEWISE\"}'); default: the engine spec's")
    t.add_argument("--cuda-graph-sizes", type=flag_int_list(MAX_GRAPH_BATCH), default=None, metavar="N,N,...",
                   help="decode batch sizes the launch captures as CUDA graphs, e.g. 1,2,4,8,16,32,64,128 (vLLM "
                        "--cuda-graph-sizes, TensorRT-LLM cuda_graph_config.batch_sizes, SGLang --cuda-graph-bs); "
                        "vLLM's last size also caps its graphed prefill steps; default: the engine spec's")
    t.add_argument("--disable-overlap-schedule", action="store_true", default=None,
                   help="the engine's host work (scheduling, sampling, detokenizing) runs after each GPU step instead "
                        "of beside the next (SGLang --disable-overlap-schedule; its speculative decoding on the V1 "
                        "workers runs so too); default: the engine spec's loop")
    t.add_argument("--context-window", type=flag_int(1, MAX_TOKENS, "tokens"),
                   help="what-if: treat the model's context window as this many tokens (e.g. RoPE scaling)")


def scenario_from_args(args):
    """The Scenario of the --scenario file (if any) with the flags given over it."""
    from ..inputs import PARALLEL, WORKLOAD, scenario_from_inputs
    given = {"model": args.model, "hardware": args.hardware, "gpus": args.gpus, "nodes": args.nodes,
             "efficiency": args.efficiency,
             "calibration": args.calibration, "kernel_engine": args.engine,
             "memory_utilization": args.memory_utilization, "max_num_seqs": args.max_num_seqs,
             "max_num_batched_tokens": args.max_num_batched_tokens, "cuda_graphs": False if args.eager else None,
             "access": args.access, "host_link": args.host_link, "price_per_hour": args.price_per_hour,
             "context_window": args.context_window, "launch_us": args.launch_us, "moe_kernels": args.moe_kernels,
             "moe_problem_cost": getattr(args, "moe_problem_cost", None),
             "cudagraph_mode": getattr(args, "cudagraph_mode", None),
             "cuda_graph_sizes": getattr(args, "cuda_graph_sizes", None), "overlap": False if args.no_overlap else None,
             "overlap_schedule": False if getattr(args, "disable_overlap_schedule", None) else None,
             **dp_attention_given(getattr(args, "dp_attention", None)),
             **{key: getattr(args, key) for key in PARALLEL + WORKLOAD if key not in ("dp_attention", "attention_dp")}}
    return scenario_from_inputs(args.scenario, given, args.dtype, args.weight_dtype, args.kv_dtype,
                                args.weight_group_size, appended={"techniques": args.technique, "place": args.place,
                                                                  "add_tiers": args.add_tier},
                                quantization=args.quantization,
                                expert_quantization=getattr(args, "expert_quantization", None),
                                quantize_experts_only=True if getattr(args, "quantize_experts_only", False) else None)


def add_quantization_flag(p):
    """--quantization: a scheme as the engines name it (specs/quantization.py)."""
    from ..specs.quantization import SCHEMES
    p.add_argument("--quantization", "-q", type=flag_text, metavar="SCHEME",
                   help="quantization scheme as deployed (vllm serve --quantization): "
                        + "; ".join(f"{s.name}: {s.label}" for s in SCHEMES.values())
                        + ". Sets weights and activations; the KV cache stays --kv-dtype. The dtype flags stay for "
                          "what-ifs. Default: the checkpoint's quantization_config when --model is a checkpoint's")
    p.add_argument("--expert-quantization", type=flag_text, metavar="SCHEME",
                   help="the routed experts' own scheme (e.g. nvfp4 experts beside fp8 layers; 'none': 16-bit), "
                        "over --quantization")
    p.add_argument("--quantize-experts-only", action="store_true",
                   help="apply --quantization to the routed experts only; every other layer keeps 16-bit weights "
                        "(TensorRT-LLM / ModelOpt's experts-only recipes)")


def dp_attention_given(value) -> dict:
    """--dp-attention alone is the shorthand (ranks = --tp); --dp-attention N gives the ranks."""
    if value is None:
        return {}
    return {"dp_attention": True} if value is True else {"attention_dp": value}
