"""A prediction as something a user can deploy: the engine's launch line and the benchmark that checks it.

Pure functions of a `Deployment` (model id, engine, pools, precisions, scheduler limits) and a `Load` (lengths,
concurrency or rate). Flag names are the engines' own, as of vLLM 0.10-0.11 (`vllm serve`, `vllm bench serve`),
SGLang 0.4-0.5 (`python -m sglang.launch_server`, `python -m sglang.bench_serving`) and TensorRT-LLM 1.0
(`trtllm-serve`, PyTorch backend; options without a flag go in its --extra_llm_api_options YAML). Disaggregated
serving is launched differently by each engine; the commands name the pieces and say what the user still chooses
(ports, hosts, the proxy or router), in '#' lines."""
from __future__ import annotations

import json
from dataclasses import dataclass

from ..errors import WhatifError
from ..specs.quantization import SCHEMES

ENGINES = ("vllm", "sglang", "trtllm")
PORTS = {"vllm": 8000, "sglang": 30000, "trtllm": 8000}   # each engine's default server port
BENCH_PROMPTS_PER_SLOT = 10    # requests per concurrent slot: enough for a steady state past the first wave


@dataclass(frozen=True)
class Pool:
    """One replica layout and how many copies of it serve (`role`: mixed, prefill or decode)."""

    role: str = "mixed"
    replicas: int = 1
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp_attention: bool = False
    attention_dp: int = 0             # attention-DP ranks (each of tp / ranks GPUs); 0: one per GPU of the TP group
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None


@dataclass(frozen=True)
class Deployment:
    engine: str
    model: str                        # a Hugging Face id or a local checkpoint folder
    pools: tuple[Pool, ...]
    kv_dtype: str = "bf16"
    quantization: str = ""            # a scheme of specs/quantization.py ('' : none named)
    weight_dtype: str = "bf16"        # shown when no scheme names the format
    memory_fraction: float | None = None
    max_model_len: int | None = None
    eager: bool = False
    chunked_prefill: bool = True
    notes: tuple[str, ...] = ()       # '#' lines: what the command cannot say (techniques priced as what-ifs)


@dataclass(frozen=True)
class Load:
    """The traffic a prediction was made for: fixed lengths, and a concurrency (closed loop) or a rate."""

    prompt: int
    output: int
    concurrency: int | None = None
    rate: float | None = None         # requests per second (Poisson unless burstiness says otherwise)
    requests: int | None = None
    burstiness: float = 1.0           # vLLM's gamma shape: 1 is Poisson, lower is burstier
    goodput_ms: tuple[tuple[str, float], ...] = ()   # SLO targets (ttft, tpot, e2el; ms) its goodput counts by
    claim: str = ""                   # a '#' line: which figure of the prediction the benchmark's output checks
    range_ratio: float = 1.0          # each length uniform in [ratio x L, L] (simulate --range-ratio); 1: fixed


def _kv(engine: str, kv: str) -> list[str]:
    if kv in ("bf16", "fp16"):
        return []            # the engines' 'auto': the model's dtype
    if kv != "fp8":
        raise WhatifError(f"--serve-command: KV cache {kv} has no {engine} flag; valid: bf16, fp16, fp8")
    return ["--kv-cache-dtype", "fp8_e4m3" if engine == "sglang" else "fp8"]


def _quant_notes(d: Deployment) -> tuple[list[str], list[str]]:
    """(flags, '#' notes) for the weights' format."""
    s = SCHEMES.get(d.quantization)
    if s is None:
        if d.weight_dtype in ("bf16", "fp16", "fp32"):
            return [], []
        return [], [f"# weights {d.weight_dtype} (a what-if dtype, not a named scheme): use a checkpoint in that "
                    "format; see --quantization for the schemes the engines run"]
    if s.name == "fp8" and d.engine in ("vllm", "sglang"):
        return ["--quantization", "fp8"], []     # online per-tensor quantization of a 16-bit checkpoint
    need = s.checkpoint or f"an {s.name} checkpoint"
    if d.engine == "trtllm" and s.name == "fp8":
        need = "an FP8 checkpoint (e.g. quantized with NVIDIA ModelOpt)"
    return [], [f"# {s.name}: MODEL must be {need}; the engine reads its quantization_config"]


def vllm_runs_ep(p: Pool) -> bool:
    """Whether vLLM can run the pool's expert split (config_search.space.vllm_ep_sizes: a replica's tp here is its
    DP x TP group)."""
    from ..config_search.space import vllm_ep_sizes
    return p.ep in vllm_ep_sizes(p.tp)


def _vllm_ep_note(p: Pool) -> list[str]:
    """A '#' line where the priced EP x moe-tp has no vLLM launch (what the command runs instead, who runs it)."""
    if vllm_runs_ep(p):
        return []
    return [f"# vLLM cannot run the priced experts (EP {p.ep} x moe-tp {p.tp // p.ep}): its experts span all {p.tp} "
            f"GPUs, whole with --enable-expert-parallel (EP {p.tp}, below) or split without it; TensorRT-LLM "
            f"(--ep_size {p.ep}: moe_tp {p.tp // p.ep}) runs it"]


def _vllm(d: Deployment, p: Pool) -> list[str]:
    cmd = ["vllm", "serve", d.model]
    expert_parallel = ["--enable-expert-parallel"] if p.ep > 1 else []   # (ep 1: experts split like TP)
    if p.dp_attention:   # attention data parallel: vLLM's DP ranks with tp / ranks TP each
        ranks = p.attention_dp or p.tp
        cmd += ["--data-parallel-size", str(ranks * (p.replicas if p.role == "mixed" else 1))] + expert_parallel
        if p.tp // ranks > 1:
            cmd += ["--tensor-parallel-size", str(p.tp // ranks)]
    else:
        cmd += ["--tensor-parallel-size", str(p.tp)]
        if p.pp > 1:
            cmd += ["--pipeline-parallel-size", str(p.pp)]
        cmd += expert_parallel
        if p.replicas > 1 and p.role == "mixed":   # replicas behind vLLM's own data-parallel load balancing
            cmd += ["--data-parallel-size", str(p.replicas)]
    if p.max_num_seqs:
        cmd += ["--max-num-seqs", str(p.max_num_seqs)]
    if p.max_num_batched_tokens:
        cmd += ["--max-num-batched-tokens", str(p.max_num_batched_tokens)]
    if d.max_model_len:
        cmd += ["--max-model-len", str(d.max_model_len)]
    if d.memory_fraction is not None:
        cmd += ["--gpu-memory-utilization", f"{d.memory_fraction:g}"]
    cmd += _kv("vllm", d.kv_dtype) + _quant_notes(d)[0]
    if not d.chunked_prefill:
        cmd += ["--no-enable-chunked-prefill"]
    if d.eager:
        cmd += ["--enforce-eager"]
    if p.role != "mixed":
        cmd += ["--port", str(PORTS["vllm"] + (100 if p.role == "prefill" else 200)), "--kv-transfer-config",
                "'" + json.dumps({"kv_connector": "NixlConnector", "kv_role": "kv_both"}, separators=(",", ":")) + "'"]
    return cmd


def _sglang(d: Deployment, p: Pool) -> list[str]:
    cmd = ["python", "-m", "sglang.launch_server", "--model-path", d.model, "--tp-size", str(p.tp)]
    if p.pp > 1:
        cmd += ["--pp-size", str(p.pp)]
    if p.ep > 1:
        cmd += ["--ep-size", str(p.ep)]
    if p.dp_attention:
        cmd += ["--dp-size", str(p.attention_dp or p.tp), "--enable-dp-attention"]
    elif p.replicas > 1 and p.role == "mixed":
        cmd += ["--dp-size", str(p.replicas)]   # data-parallel replicas behind SGLang's own router
    if p.max_num_seqs:
        cmd += ["--max-running-requests", str(p.max_num_seqs)]
    if p.max_num_batched_tokens:
        cmd += ["--chunked-prefill-size", str(p.max_num_batched_tokens)]
    if d.chunked_prefill:   # prefill chunks beside decodes in one batch (SGLang's default runs them apart)
        cmd += ["--enable-mixed-chunk"]
    if d.max_model_len:
        cmd += ["--context-length", str(d.max_model_len)]
    if d.memory_fraction is not None:
        cmd += ["--mem-fraction-static", f"{d.memory_fraction:g}"]
    cmd += _kv("sglang", d.kv_dtype) + _quant_notes(d)[0]
    if d.eager:
        cmd += ["--disable-cuda-graph"]
    if p.role != "mixed":
        cmd += ["--disaggregation-mode", p.role, "--port", str(PORTS["sglang"] + (0 if p.role == "prefill" else 1))]
    return cmd


def _trtllm_options(d: Deployment, p: Pool) -> dict:
    """What trtllm-serve takes only through --extra_llm_api_options (llm_args.py names)."""
    opts: dict = {}
    if d.kv_dtype == "fp8":
        opts["kv_cache_config"] = {"dtype": "fp8"}
    elif d.kv_dtype not in ("bf16", "fp16"):
        _kv("trtllm", d.kv_dtype)
    if p.dp_attention:
        opts["enable_attention_dp"] = True
    if d.chunked_prefill:
        opts["enable_chunked_prefill"] = True
    if d.eager:
        opts["cuda_graph_config"] = None
    if p.role != "mixed":
        opts["cache_transceiver_config"] = {"backend": "DEFAULT"}
        if p.role == "prefill":
            opts["disable_overlap_scheduler"] = True   # context servers run without the overlap scheduler
    return opts


def _trtllm(d: Deployment, p: Pool) -> tuple[list[str], dict]:
    cmd = ["trtllm-serve", d.model, "--backend", "pytorch", "--tp_size", str(p.tp)]
    if p.pp > 1:
        cmd += ["--pp_size", str(p.pp)]
    if p.ep > 1:
        cmd += ["--ep_size", str(p.ep)]
    if p.max_num_seqs:
        cmd += ["--max_batch_size", str(p.max_num_seqs)]
    if p.max_num_batched_tokens:
        cmd += ["--max_num_tokens", str(p.max_num_batched_tokens)]
    if d.max_model_len:
        cmd += ["--max_seq_len", str(d.max_model_len)]
    if d.memory_fraction is not None:
        cmd += ["--kv_cache_free_gpu_memory_fraction", f"{d.memory_fraction:g}"]
    if p.role != "mixed":
        cmd += ["--port", str(PORTS["trtllm"] + (1 if p.role == "prefill" else 2))]
    opts = _trtllm_options(d, p)
    if opts:
        cmd += ["--extra_llm_api_options", _options_file(p)]
    return cmd, opts


def _options_file(p: Pool) -> str:
    return "options.yaml" if p.role == "mixed" else f"{p.role}-options.yaml"


def _yaml(opts: dict) -> list[str]:
    """A flat YAML of the options (json-valued: YAML reads JSON)."""
    return [f"{k}: {json.dumps(v)}" for k, v in opts.items()]


def serve_lines(d: Deployment) -> list[str]:
    """The launch commands (one per pool) with their '#' notes, as lines of a shell script."""
    if d.engine not in ENGINES:
        raise WhatifError(f"--serve-command: no launch command for engine {d.engine!r}; valid: {', '.join(ENGINES)}")
    lines = list(d.notes) + _quant_notes(d)[1]
    disagg = any(p.role != "mixed" for p in d.pools)
    for p in d.pools:
        if disagg:
            lines.append(f"# {p.role} pool: {p.replicas} replica{'s' if p.replicas > 1 else ''} of {p.tp * p.pp} "
                         f"GPU{'s' if p.tp * p.pp > 1 else ''}: run this once per replica on its own GPUs "
                         "(CUDA_VISIBLE_DEVICES, or another node; one port each)")
        if d.engine == "vllm":
            lines += _vllm_ep_note(p)
            lines.append(" ".join(_vllm(d, p)))
        elif d.engine == "sglang":
            lines.append(" ".join(_sglang(d, p)))
        else:
            cmd, opts = _trtllm(d, p)
            if opts:
                lines += [f"cat > {_options_file(p)} <<'EOF'", *_yaml(opts), "EOF"]
            if p.replicas > 1 and not disagg:
                lines.append(f"# {p.replicas} replicas: run this once per set of {p.tp * p.pp} GPUs "
                             "(CUDA_VISIBLE_DEVICES, --port) behind a load balancer")
            lines.append(" ".join(cmd))
    if disagg:
        lines += _disagg_frontend(d)
    return lines


def _disagg_frontend(d: Deployment) -> list[str]:
    if d.engine == "vllm":
        return ["# then a proxy that sends each request to a prefill server, then a decode server (vLLM's "
                "examples/online_serving/disaggregated_serving proxy); KV moves over NIXL"]
    if d.engine == "sglang":
        return [f"python -m sglang_router.launch_router --pd-disaggregation --prefill http://127.0.0.1:"
                f"{PORTS['sglang']} --decode http://127.0.0.1:{PORTS['sglang'] + 1} --port 8000"]
    return ["cat > disagg.yaml <<'EOF'", "hostname: localhost", "port: 8000", "backend: pytorch",
            "context_servers: {num_instances: 1, urls: [\"localhost:8001\"]}",
            "generation_servers: {num_instances: 1, urls: [\"localhost:8002\"]}", "EOF",
            "trtllm-serve disaggregated -c disagg.yaml"]


def bench_line(d: Deployment, load: Load) -> str:
    """The benchmark client run that would check the prediction: the same fixed lengths, at its concurrency
    (closed loop) or its rate."""
    if load.concurrency is None and load.rate is None:
        raise WhatifError("--serve-command: the benchmark needs a concurrency or a request rate")
    slots = load.concurrency or max(1, round((load.rate or 1.0) * 10))
    port = 8000 if any(p.role != "mixed" for p in d.pools) else PORTS[d.engine]   # the proxy / router
    n = load.requests or max(100, BENCH_PROMPTS_PER_SLOT * slots)
    if d.engine == "sglang":
        cmd = ["python", "-m", "sglang.bench_serving", "--backend", "sglang", "--port", str(port),
               "--dataset-name", "random", "--random-input-len", str(load.prompt), "--random-output-len",
               str(load.output), "--random-range-ratio", f"{load.range_ratio:g}", "--num-prompts", str(n)]
    else:   # vllm bench serve speaks OpenAI to any server; trtllm-serve is one
        backend = "vllm" if d.engine == "vllm" else "openai"
        prompt, output, spread = _vllm_lengths(load)
        cmd = ["vllm", "bench", "serve", "--backend", backend, "--model", d.model, "--port", str(port),
               "--dataset-name", "random", "--random-input-len", str(prompt), "--random-output-len",
               str(output), *spread, "--ignore-eos", "--num-prompts", str(n)]
    if load.concurrency is not None:
        cmd += ["--max-concurrency", str(load.concurrency)]
    if load.rate is not None:
        cmd += ["--request-rate", f"{load.rate:.4g}"]
        if d.engine != "sglang" and load.burstiness != 1.0:
            cmd += ["--burstiness", f"{load.burstiness:g}"]
    if load.goodput_ms and d.engine != "sglang":
        # vllm bench serve's request goodput: requests/s that meet every target, "KEY:VALUE" pairs in ms
        # (vllm/benchmarks/serve.py --goodput, v0.31.0 line 1838; metrics ttft, tpot, e2el)
        cmd += ["--goodput", *(f"{k}:{v:.4g}" for k, v in load.goodput_ms)]
    return " ".join(cmd)


def _vllm_lengths(load: Load) -> tuple[int, int, list[str]]:
    """(input len, output len, range flags) of vllm bench serve for lengths uniform in [r L, L]: its random dataset
    draws [(1 - b) M, (1 + b) M] (vllm/benchmarks/datasets.py RandomDataset, default b 0: fixed), so M = (1 + r) L / 2
    and b = (1 - r) / (1 + r) (to the token)."""
    r = load.range_ratio
    if r >= 1:
        return load.prompt, load.output, []
    return (round((1 + r) * load.prompt / 2), round((1 + r) * load.output / 2),
            ["--random-range-ratio", f"{(1 - r) / (1 + r):.4g}"])


def serve_text(d: Deployment, load: Load) -> str:
    """The launch lines, then the benchmark, as `--serve-command` prints them."""
    return "\n".join([f"# launch ({d.engine})", *serve_lines(d), "# check the prediction", bench_line(d, load),
                      *([load.claim] if load.claim else [])])


def serve_dict(d: Deployment, load: Load) -> dict:
    """The same for JSON: the launch lines (notes included), the benchmark command and what its output checks."""
    return {"engine": d.engine, "serve": serve_lines(d), "bench": bench_line(d, load),
            **({"check": load.claim.removeprefix("# ")} if load.claim else {})}
