"""The Deployment and Load of an estimate, a simulation or a search configuration (serve_command.py prints them).

An estimate's batch is the engine's --max-num-seqs and the benchmark's concurrency; a simulation carries its own
scheduler limits, pools and traffic; a search configuration its layout, batch limit and prefill chunk. What the
engines cannot be told (a technique, a what-if tier placement) is said in a '#' note, not dropped silently."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError
from ..specs.stored_format import model_id, stored_format_note   # (re-exported: serve_command's notes)
from .serve_command import ENGINES, Deployment, Load, Pool


def engine_name(engine: str) -> str:
    """The server a spec (or a version profile of it, e.g. vllm-0.6) stands for."""
    base = next((e for e in ENGINES if engine == e or engine.startswith(e + "-")), None)
    if base is None:
        raise WhatifError(f"--serve-command: {engine!r} is not a serving engine; valid: {', '.join(ENGINES)} "
                          "(--engine)")
    return base


def _notes(scenario) -> tuple[str, ...]:
    out = []
    if scenario.techniques:
        out.append(f"# techniques {'+'.join(map(str, scenario.techniques))} were priced as what-ifs: no engine "
                   "flag turns them on; this command runs without them")
    if scenario.place or scenario.add_tiers:
        out.append("# memory-tier placements are what-ifs: this command keeps everything in HBM")
    return tuple(out)


def _base(scenario, pools: tuple[Pool, ...], prompt: int, output: int, chunked: bool) -> Deployment:
    prec = scenario.precision
    notes = _notes(scenario)
    if prec.per_module:   # no engine flag mixes schemes: the checkpoint's quantization_config does
        classes = ", ".join(f"{c.replace('_', ' ')} {q}" for c, q in prec.module_dict().items())
        notes += (f"# per-module precision ({classes}): MODEL must be a checkpoint quantized that way (its "
                  "quantization_config and ignore list); the engine reads it, no flag sets it",)
    if not prec.per_module:
        notes += stored_format_note(scenario.model, model_id(scenario.model), prec.quantization, prec.weight)
    return Deployment(engine=engine_name(scenario.kernel_engine), model=model_id(scenario.model), pools=pools,
                      kv_dtype=prec.kv, quantization="" if prec.per_module else prec.quantization,
                      weight_dtype="bf16" if prec.per_module else prec.weight, memory_fraction=scenario.utilization(),
                      max_model_len=prompt + output,
                      eager=scenario.cuda_graphs is False, chunked_prefill=chunked, notes=notes)


def from_estimate(scenario) -> tuple[Deployment, Load]:
    """An estimate: one replica running its batch (--max-num-seqs = batch), at that concurrency."""
    w, par = scenario.workload, scenario.parallel
    pool = Pool(tp=par.tp, pp=par.pp, ep=par.ep, dp_attention=par.dp_attention, attention_dp=par.attention_dp,
                max_num_seqs=scenario.max_num_seqs or w.batch,
                max_num_batched_tokens=scenario.max_num_batched_tokens or w.prefill_chunk)
    chunked = scenario.engine_spec().chunked_prefill
    return _base(scenario, (pool,), w.prompt, w.output, chunked), Load(w.prompt, w.output, concurrency=w.batch)


def from_simulation(cfg) -> tuple[Deployment, Load]:
    """A simulation: its scheduler limits, its pools (prefill and decode when disaggregated) and its traffic."""
    sc, s, cl, t = cfg.scenario, cfg.scheduler, cfg.cluster, cfg.workload
    par = sc.parallel
    decode = Pool(role="decode" if cl.prefill_replicas else "mixed", replicas=cl.replicas, tp=par.tp, pp=par.pp,
                  ep=par.ep, dp_attention=par.dp_attention, attention_dp=par.attention_dp, max_num_seqs=s.max_batch,
                  max_num_batched_tokens=s.token_budget)
    pools = (decode,)
    if cl.prefill_replicas:
        pre = cl.prefill_parallel(par)
        prefill = replace(decode, role="prefill", replicas=cl.prefill_replicas, tp=pre.tp, pp=pre.pp, ep=pre.ep,
                          dp_attention=pre.dp_attention, max_num_seqs=cl.prefill_max_batch or s.max_batch,
                          max_num_batched_tokens=cl.prefill_token_budget or s.token_budget)
        pools = (prefill, decode)
    d = _base(sc, pools, t.prompt + t.prefix_tokens, t.output, s.chunked_prefill)
    notes = list(d.notes)
    if t.trace or t.lengths != "fixed" or t.turns > 1:
        notes.append(f"# the simulated traffic ({'a trace' if t.trace else t.lengths + ' lengths'}"
                     f"{', multi-turn' if t.turns > 1 else ''}) is not the benchmark's: it sends fixed lengths "
                     f"{t.prompt + t.prefix_tokens} / {t.output}")
    load = (Load(t.prompt + t.prefix_tokens, t.output, concurrency=t.concurrency, requests=t.requests,
                 range_ratio=t.range_ratio)
            if t.concurrency else
            Load(t.prompt + t.prefix_tokens, t.output, rate=t.rate, requests=t.requests,
                 burstiness=t.gamma_shape, range_ratio=t.range_ratio))
    return replace(d, notes=tuple(notes)), load


def from_search(space, config) -> tuple[Deployment, Load]:
    """A search configuration, as its engine would run it (the search prices that engine's kernels and loop)."""
    from ..config_search.checkpoint_scheme import CHECKPOINT, looks_like_id, setup_precision
    from ..specs.checkpoint_quant import names_own_scheme
    e, p = config.replica, config.prefill
    prec = setup_precision(space.model, e.quantization, e.weight, e.kv)
    # the engine reads the checkpoint's own config (`--quantizations fp8` on DeepSeek-R1's FP8 blocks: as stored)
    stored = e.quantization == CHECKPOINT or prec.per_module or (
        looks_like_id(space.model) and names_own_scheme(space.model, e.quantization))

    from ..config_search.evaluate import PREFILL_PROMPTS_PER_RANK
    from ..roofline.engines import engine_limit_for_group, engine_spec

    def pool(key, role: str, replicas: int) -> Pool:
        # the engine limit under which the pool's ranks run what the search priced (vLLM's is each DP engine's)
        group = PREFILL_PROMPTS_PER_RANK * key.attention_dp if role == "prefill" else config.batch
        seqs = engine_limit_for_group(engine_spec(space.engine), group, key.attention_dp)
        return Pool(role=role, replicas=replicas, tp=key.tp, pp=key.pp, ep=key.ep, dp_attention=key.dp_attention,
                    attention_dp=key.attention_dp, max_num_seqs=seqs, max_num_batched_tokens=config.chunk)
    disagg = config.mode == "disaggregated" and p is not None
    pools = ((pool(p, "prefill", config.prefill_replicas), pool(e, "decode", config.replicas)) if disagg
             else (pool(e, "mixed", config.replicas),))
    notes = (f"# techniques {'+'.join(map(str, e.techniques))} were priced as what-ifs: no engine flag turns them "
             "on",) if e.techniques else ()
    if not stored:
        notes += stored_format_note(space.model, model_id(space.model), prec.quantization, prec.weight)
    d = Deployment(engine=engine_spec(space.engine).base_engine, model=model_id(space.model), pools=pools,
                   kv_dtype=prec.kv,
                   quantization="" if stored else prec.quantization, weight_dtype="bf16" if stored else prec.weight,
                   max_model_len=space.prompt + space.output, notes=notes)
    return d, search_load(space, config)


def search_load(space, config) -> Load:
    """The traffic a search configuration's claim is about, and which figure the benchmark checks. Under a TTFT
    target the search prices Poisson arrivals at its request rate with the SLOs held for the attainment share
    (configs.py; the --simulate-top re-check serves the same): the benchmark sends that rate, as many requests as
    the re-check runs, and counts goodput by the targets. Without one the figures are full load, a closed loop of
    the deployment's B x replicas clients."""
    from ..config_search.queueing import ATTAINMENT
    from ..config_search.recheck import run_requests, slots
    slo = space.slo
    targets = tuple((k, v * 1e3) for k, v in (("ttft", slo.ttft_s), ("tpot", slo.tpot_s), ("e2el", slo.e2e_s))
                    if v is not None)
    if slo.ttft_s is None:
        claim = (f"# compare: a closed loop of {slots(config)} clients; the search predicts {config.request_rate:.3g} "
                 f"req/s, TTFT {config.ttft_s * 1e3:.4g} ms, TPOT {config.tpot_s * 1e3:.4g} ms (means)")
        return Load(space.prompt, space.output, concurrency=slots(config), goodput_ms=targets, claim=claim)
    shown = ", ".join(f"{k.upper()} <= {v:.4g} ms" for k, v in targets)
    claim = (f"# compare: Poisson arrivals at the search's {config.request_rate:.3g} req/s; it predicts {shown} for "
             f"{ATTAINMENT:.0%} of requests, i.e. a request goodput of at least {ATTAINMENT * config.request_rate:.3g} "
             f"req/s (vllm bench serve --goodput counts it; other clients: the share of requests within the targets)")
    return Load(space.prompt, space.output, rate=config.request_rate, requests=run_requests(config, None),
                goodput_ms=targets, claim=claim)
