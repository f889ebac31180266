"""Turning results into JSON-ready dicts and aligned text (the CLI's two faces)."""
from __future__ import annotations

import math

from ..queries.provenance import efficiency_line
from ..specs import units
from ..specs.hf_ids import model_heading
from ..specs.sfu import default_sfu_exp2
from ..roofline.estimate import Estimate, PassTime
from ..roofline.memory import CONTEXT_SEARCH_LIMIT
from ..roofline.ops import OpClass, link_bytes, shape_record
from ..roofline.timing import OpTime


def _finite(x: float):
    return x if math.isfinite(x) else None


def op_time_dict(t: OpTime, stage: int | None = None) -> dict:
    op = t.op
    d = {"name": op.name, "op_class": op.op_class, "count": op.count, "dtype": op.dtype,
         "time_s": t.time_s, "total_s": t.total_s, "compute_s": t.compute_s, "memory_s": t.memory_s,
         "overhead_s": t.overhead_s, "bound": t.bound, "flops": op.flops, "bytes": dict(op.bytes),
         "hbm_bytes": op.hbm_bytes, "intensity_flop_per_byte": _finite(op.intensity),
         "attained_flop_s": t.attained_flops, "shape": shape_record(op), "formula": op.formula}
    if stage is not None:
        d["stage"] = stage
    return d


def pass_ops(p: PassTime) -> list[dict]:
    return [op_time_dict(t, s) for s, stage in enumerate(p.stages) for t in stage]


def tier_rows(e: Estimate) -> list[dict]:
    """Memory tiers beyond HBM, as one GPU of the estimate sees them, with the bytes placed in each."""
    rows = []
    for t in e.system.tiers:
        p = e.tier_paths[t.tier.name]
        rows.append({"memory": t.tier.name, "technology": t.tier.technology, "count": t.count,
                     "per_gpu": t.per_gpu, "capacity_bytes": t.capacity, "capacity_per_gpu_bytes": p.capacity,
                     "bandwidth_h2d_b_s": p.bandwidth, "bandwidth_d2h_b_s": p.rate("d2h"), "latency_s": p.latency,
                     "path": [link.name for link in t.path],
                     "placed_bytes": e.memory.tiers.get(t.tier.name, 0.0)})
    return rows


def cost_dict(e: Estimate) -> dict | None:
    if e.price is None:
        return None
    return {"price_usd_per_hour": e.price.usd_per_hour, "provenance": e.price.provenance,
            "usd_per_million_tokens": e.cost_per_mtok, "usd_per_million_tokens_at_max_batch": e.max_batch_cost_per_mtok}


def estimate_dict(e: Estimate) -> dict:
    gpu, w = e.system.gpu, e.workload
    act = e.precision.gemm_activation   # what the header says: a W8A8 technique's fp8
    return {
        "model": e.model.name, "hardware": e.system.name, "gpu": gpu.name, "gpus": e.parallel.gpus,
        "nodes": -(-e.parallel.gpus // (e.system.gpus_per_node or e.system.gpu_count)),
        "parallel": {"tp": e.parallel.tp, "pp": e.parallel.pp, "ep": e.parallel.ep,
                     "dp_attention": e.parallel.dp_attention, "pipeline_microbatches": e.pipeline_microbatches,
                     "moe_tp": e.parallel.moe_tp, "attention_dp": e.parallel.attention_dp},
        "precision": {"weight": e.precision.weight, "activation": act, "kv": e.precision.kv,
                      "quantization": e.precision.quantization or None,
                      **({"modules": e.precision.module_dict(), "source": e.precision.source or None}
                         if e.precision.per_module or e.precision.source else {}),
                      **({"kv_stored": stored} if (stored := e.techniques.kv_label(e.precision.kv)) != e.precision.kv
                         else {})},
        "workload": {"batch": w.batch, "prompt": w.prompt, "output": w.output, "prefill_chunk": w.prefill_chunk,
                     "shared_prefix": w.shared_prefix},
        "techniques": [{"name": t.name, "family": t.family, "parameters": t.values()} for t in e.techniques.items],
        "efficiency": {"source": e.efficiency.source, "provenance": e.efficiency.provenance},
        "engine": e.engine_spec.to_dict() if e.engine_spec is not None else None,
        "ttft_s": e.ttft_s, "tpot_s": decoded(e, e.tpot_s), "e2e_s": e.e2e_s,
        "served_ttft_s": e.served_ttft_s, "served_e2e_s": e.served_e2e_s, "frontend_s": e.frontend_s,
        "throughput_tok_s": e.throughput_tok_s, "decode_throughput_tok_s": decoded(e, e.decode_throughput_tok_s),
        "max_batch": e.max_batch, "max_batch_context_tokens": w.prompt + w.output,
        "max_batch_throughput_tok_s": e.max_batch_throughput_tok_s,
        "max_context_tokens": e.max_context, "memory_max_context_tokens": e.memory_max_context,
        "memory": e.memory.to_dict(),
        "placement": {"shares": [{"class": c, "tier": t, "fraction": f} for c, t, f in e.placement.shares],
                      "access": e.placement.access, "overlap": e.placement.overlap},
        "system_tiers": tier_rows(e),
        "cost": cost_dict(e),
        "ceilings": {"peak_flop_s": gpu.peak[act].__dict__ if act in gpu.peak else None,
                     "hbm_bandwidth_b_s": gpu.hbm_bandwidth.__dict__,
                     "hbm_capacity_b": gpu.hbm_capacity.__dict__,
                     "sfu_exp2_per_sm_clock": (gpu.sfu_exp2 or default_sfu_exp2(gpu.arch)).__dict__},
        "prefill_passes": e.prefill_pass_count,
        "passes": {"prefill": pass_dict(e.prefill[0][0]), "decode": pass_dict(e.decode) if e.decode else None},
        "decode_round": round_dict(e),
        "ops": {"prefill": pass_ops(e.prefill[0][0]),
                "decode": pass_ops(e.decode) if e.decode else []},
    }


def pass_dict(p) -> dict:
    """One pass's wall time and what sets it: the GPU's kernels and gaps, or the CPU launching them (eager)."""
    return {"tokens": p.batch.tokens, "kernels": p.kernels, "time_s": p.time_s, "gpu_s": p.gpu_s,
            "host_launch_s": p.launch_s, "host_bound": p.launch_s > p.gpu_s}


def round_dict(e: Estimate) -> dict | None:
    """A decoder's round at mid-generation: tokens it yields, drafting, verifying, time per token."""
    r = e.decode_round
    if r is None:
        return None
    return {"tokens_per_round": r.tokens, "draft_s": r.draft_s, "verify_s": r.verify.time_s,
            "overhead_s": r.overhead_s, "draft_overlaps_verify": r.overlap, "round_s": r.time_s,
            "time_per_token_s": r.per_token_s, "verify_tokens": r.verify.batch.tokens,
            "context_tokens": r.verify.batch.groups[0][1], "detail": r.detail}


def _served_rows(e) -> list:
    """TTFT as a client measures it through the engine's server (the spec's front end), when it has one."""
    if e.frontend_s <= 0:
        return []
    return [["TTFT through the server", f"{units.seconds(e.served_ttft_s)} (+{units.seconds(e.frontend_s)} "
                                        "front end, partly assumed)"]]


def _round_rows(e: Estimate) -> list[list[str]]:
    r = e.decode_round
    if r is None:
        return []
    seqs = r.verify.batch.sequences
    verify = f"{units.seconds(r.verify.time_s)} ({r.verify.batch.tokens // seqs} tokens/sequence)"
    rows = [["tokens per round (expected)", f"{r.tokens:.3g} tokens/sequence"],
            ["draft time per round", units.seconds(r.draft_s) + (" (beside the verify pass)" if r.overlap else "")],
            ["verify pass", verify]]
    if r.overhead_s:
        rows.append(["other per-round work", units.seconds(r.overhead_s)])
    rows.append(["round / per token (mid-generation)", f"{units.seconds(r.time_s)} / {units.seconds(r.per_token_s)}"])
    return rows


def _tier_budget_table(m) -> str:
    rows = []
    for b in m.to_dict()["tier_budgets"]:
        share = f" ({m.utilization:.0%} of capacity)" if b["tier"] == "hbm" else ""
        usable = units.nbytes(b["usable_bytes"]) + share
        over = b["bytes"] - b["usable_bytes"]
        rows.append([b["tier"], units.nbytes(b["bytes"]), usable, f"{b['kv_share']:.3g}",
                     "yes" if over <= 0 else f"NO: over by {units.nbytes(over)}"])
    return units.table(["tier", "bytes per GPU", "usable per GPU", "KV share", "fits"], rows, right={1, 2, 3})


NO_DECODE = "none: no decode step (--output 1: prefill makes the only token)"


def decoded(e, value: float) -> float | None:
    """A decode figure (TPOT, decode throughput), None when there is no decode step (one output token)."""
    return value if e.workload.output > 1 else None


def tok_rate(tok_s: float) -> str:
    """Tokens per second: one decimal from 10 tok/s up, else 3 significant figures (0.059 is not '0.1')."""
    return f"{tok_s:,.1f} tok/s" if tok_s >= 10 else f"{tok_s:.3g} tok/s"


def _tokens_or_unbounded(n: int) -> str:
    return "any length: the cache stops growing" if n >= CONTEXT_SEARCH_LIMIT else f"{n:,}"


def _cost_rows(e: Estimate) -> list[list[str]]:
    if e.price is None:
        return [["cost per 1M tokens", "no price known (--price-per-hour USD)"]]
    rows = [["price", f"{e.price.usd_per_hour:.4g} USD/h ({e.price.provenance})"],
            ["cost per 1M tokens (batch)", f"{e.cost_per_mtok:.4g} USD" if e.cost_per_mtok else "-"]]
    if e.max_batch_cost_per_mtok:
        rows.append([f"cost per 1M tokens at max batch ({e.max_batch})", f"{e.max_batch_cost_per_mtok:.4g} USD"])
    return rows


def _op_rows(p: PassTime) -> list[list[str]]:
    merged: dict[str, list[OpTime]] = {}
    for t in p.op_times:
        merged.setdefault(t.op.name, []).append(t)
    total = sum(t.total_s for t in p.op_times) or 1.0
    rows = []
    for name, ts in merged.items():
        t0, count = ts[0], sum(t.op.count for t in ts)
        tot = sum(t.total_s for t in ts)
        ai = t0.op.intensity
        rows.append([name, t0.op.op_class, str(count), units.seconds(t0.time_s), units.seconds(tot),
                     f"{tot / total:.1%}", units.flops(t0.op.flops), units.nbytes(t0.op.hbm_bytes or link_bytes(t0.op)
                                                                             or t0.op.bytes.get("link", 0)),
                     "-" if not math.isfinite(ai) else f"{ai:.3g}", t0.bound])
    return rows


OP_HEADERS = ["op", "class", "count", "time/each", "total", "share", "FLOPs/each", "bytes/each",
              "FLOP/B", "bound"]


def _basis_lines(e: Estimate, explain: bool) -> list[str]:
    """What the answer rests on (assumed inputs, engine spec, ceilings, the efficiency fit), after the answer."""
    gpu, act = e.system.gpu, e.precision.activation
    return [
        *([f"assumed: {'; '.join(notes)}"] if (notes := e.techniques.notes(e.model)) else []),
        f"engine: {e.engine_spec.summary() if e.engine_spec is not None else 'none (kernels only)'}",
        f"ceilings: {units.rate(gpu.peak_flops(act), 'FLOP/s')} {act} ({gpu.peak[act].provenance}), "
        f"HBM {units.rate(gpu.hbm_bandwidth.value, 'B/s')} ({gpu.hbm_bandwidth.provenance}), "
        f"{units.nbytes(gpu.hbm_capacity.value)} per GPU",
        *[f"quantization {s.name}{where}: {s.pricing}" for s, where in e.precision.schemes()],
        *([fabric] if (fabric := fabric_line(e.system)) else []),
        *([load] if (load := expert_load_line(e.model, e.parallel)) else []),
        *([pipe] if (pipe := pipeline_line(e)) else []),
        efficiency_line(e.efficiency, explain),
    ]


def expert_load_line(model, par) -> str:
    """How the routed tokens spread over the EP ranks, and where that assumption is set ('' without EP)."""
    if model.moe is None or par.ep == 1:
        return ""
    skew = (f"routing skew {par.expert_skew:g} (Zipf, given)" if par.expert_skew
            else "uniform routing (assumed; --expert-skew)")
    eplb = (f"{par.redundant_experts} redundant experts balanced as DeepSeek's EPLB" if par.redundant_experts
            else "no redundant experts (--redundant-experts)")
    return (f"expert load: {skew}, {eplb}: the busiest of {par.ep} EP ranks takes "
            f"{par.expert_load(model.moe.num_experts):.3g}x the mean tokens")


def pipeline_line(e: Estimate) -> str:
    """How a pipeline-parallel decode is split into micro-batches ('' without pp > 1 or a batch to split), by the
    engine's rule (roofline/pipeline_micro.py; docs/accuracy.md, Session 75 J)."""
    pp, batch = e.parallel.pp, e.workload.batch
    if pp == 1 or batch <= 1 or e.workload.output <= 1:
        return ""
    micro = e.pipeline_microbatches
    per = -(-batch // micro)
    what = f"{micro} micro-batch{'es' if micro > 1 else ''} of {per} sequences over {pp} stages"
    if e.engine_spec is not None and e.engine_spec.pp_batch_queue:
        return (f"pipeline: decode as {what}: vLLM V1's batch queue forms another micro-batch only from the prompts "
                f"a full {e.workload.prefill_chunk}-token budget leaves (a disaggregated decode pool: one)")
    return (f"pipeline: decode priced as {what}, even (the best case): the engine fills each slot by turn and does "
            f"not rebalance, so uneven ones run at the larger's step time (`whatif simulate` shows the split)")


def fabric_line(system) -> str:
    """Which link each collective's group crosses on a multi-node system ('' on one node)."""
    link = system.gpu_link
    if system.nodes <= 1 or link is None or link.scale_out is None:
        return ""
    nic = link.scale_out
    return (f"fabric: {system.nodes} nodes of {link.domain_gpus} GPUs; inside a node {link.name}, between nodes "
            f"{nic.name} at {units.rate(nic.bandwidth.value, 'B/s')} per GPU ({nic.bandwidth.provenance}; "
            f"{system.nics_per_node} NICs per node); a group spanning nodes runs NCCL's hierarchical form")


def kv_label(e: Estimate) -> str:
    """The KV row's name: a linear-attention or Mamba layer keeps a fixed state per sequence, which the per-token
    figure spreads over the planned sequence (memory.plan_memory), so the label says so and over how many tokens."""
    per = f"{units.nbytes(e.memory.kv_bytes_per_token)}/token"
    if e.model.linear_attention is None and e.model.mamba is None:
        return f"KV cache ({per})"
    return f"KV cache + recurrent state ({per}, over {e.workload.prompt + e.workload.output:,}-token sequences)"


def estimate_text(e: Estimate, show_ops: bool = True, explain: bool = False, asked=None) -> str:
    """The scenario in three lines, the answer, then what it rests on (`explain`: the efficiency fit whole);
    `asked`: the --model the user gave, named first where it resolved to another profile."""
    w, m = e.workload, e.memory
    lines = [
        f"{model_heading(e.model.name, asked)} on {e.system.name} "
        f"({e.parallel.gpus} GPU{'s' if e.parallel.gpus > 1 else ''}: "
        f"{e.parallel.label()}), {e.precision.label(e.techniques.kv_label(e.precision.kv))}",
        f"workload: batch {w.batch}, prompt {w.prompt} tokens, output {w.output} tokens"
        + (f", shared prefix {w.shared_prefix} tokens" if w.shared_prefix else ""),
        f"techniques: {e.techniques.label() if e.techniques else 'none'}",
        "",
        units.table(["metric", "value"], [
            ["TTFT", units.seconds(e.ttft_s)
             + (f" ({e.prefill_pass_count} prefill passes)" if e.prefill_pass_count > 1 else "")],
            ["TPOT (mean decode step)" if e.decode_round is None else "TPOT (effective: round time / tokens)",
             units.seconds(e.tpot_s) if w.output > 1 else NO_DECODE],
            *_round_rows(e),
            ["end-to-end latency", units.seconds(e.e2e_s)],
            *_served_rows(e),
            ["throughput (batch)", tok_rate(e.throughput_tok_s)],
            ["decode throughput", tok_rate(e.decode_throughput_tok_s) if w.output > 1 else NO_DECODE],
            [f"max batch at {w.prompt + w.output} tokens", str(e.max_batch)],
            [f"throughput at max batch ({e.max_batch})", tok_rate(e.max_batch_throughput_tok_s)],
            [f"max context at batch {w.batch}", f"{e.max_context:,} tokens"
             + (f" (model window; memory holds {_tokens_or_unbounded(e.memory_max_context)})"
                if e.max_context == e.model.max_position_embeddings else "")],
            *_cost_rows(e),
        ], right={1}),
        "",
        "memory per GPU (heaviest pipeline stage):",
        units.table(["category", "bytes"], [
            ["weights", units.nbytes(m.weights_bytes)],
            [kv_label(e), units.nbytes(m.kv_cache_bytes)],
            *([["  of which shared prefix (stored once)", units.nbytes(m.shared_kv_bytes)]]
              if m.shared_kv_bytes else []),
            ["activations (peak pass)", units.nbytes(m.activation_bytes)],
            ["runtime reserve (assumed)", units.nbytes(m.workspace_bytes)],
            *([["HBM staging buffers (streamed offload)", units.nbytes(m.staging_bytes)]] if m.staging_bytes else []),
            ["total", units.nbytes(m.total_bytes)],
            *([] if e.placement else [
                [f"usable ({m.utilization:.0%} of {units.nbytes(m.capacity_bytes)})", units.nbytes(m.usable_bytes)],
                ["fits", "yes" if m.fits else f"NO: over by {units.nbytes(m.total_bytes - m.usable_bytes)}"]]),
        ], right={1}),
    ]
    if e.placement:
        lines += ["", f"placement: {e.placement.label()}", _tier_budget_table(m)]
    if e.system.tiers:
        lines += ["", "memory tiers of the system, as one GPU sees them:"]
        lines += [f"  {t['memory']} x{t['count']}: {units.nbytes(t['capacity_per_gpu_bytes'])} at "
                  f"{units.rate(t['bandwidth_h2d_b_s'], 'B/s')} h2d / {units.rate(t['bandwidth_d2h_b_s'], 'B/s')} "
                  f"d2h via {' -> '.join(t['path'])}"
                  + (f"; holds {units.nbytes(t['placed_bytes'])}" if t["placed_bytes"] else "")
                  for t in tier_rows(e)]
    lines += ["", *_basis_lines(e, explain)]
    if show_ops:
        first = e.prefill[0][0]
        lines += ["", f"prefill pass ({first.batch.tokens} tokens, {units.seconds(first.time_s)}, "
                      f"{first.kernels} kernels{_host_bound(first)}):",
                  units.table(OP_HEADERS, _op_rows(first), set(range(2, 9)))]
        if e.decode is not None:
            ctx = e.decode.batch.groups[0][1]
            what = "decode step" if e.decode_round is None else "verify pass"
            lines += ["", f"{what} (batch {e.decode.batch.sequences}, context {ctx}, "
                          f"{units.seconds(e.decode.time_s)}, {e.decode.kernels} kernels{_host_bound(e.decode)}):",
                      units.table(OP_HEADERS, _op_rows(e.decode), set(range(2, 9)))]
    return "\n".join(lines)


def _host_bound(p) -> str:
    """Where an eager pass waits on the CPU's launches rather than the GPU: say so, with both times."""
    if p.launch_s <= p.gpu_s:
        return ""
    return (f"; host-bound: {p.kernels} eager launches x {units.seconds(p.launch_s / p.kernels)} = "
            f"{units.seconds(p.launch_s)} against {units.seconds(p.gpu_s)} of GPU work")


def kernel_dict(t: OpTime, hardware: str, eff) -> dict:
    d = op_time_dict(t)
    d.update({"hardware": hardware, "efficiency": eff.source, "efficiency_provenance": eff.provenance})
    return d


def kernel_text(t: OpTime, hardware: str, eff, explain: bool = False) -> str:
    op = t.op
    ai = op.intensity
    rows = [["time", units.seconds(t.time_s)], ["FLOPs", units.flops(op.flops)],
            ["bytes (HBM)" if op.op_class != OpClass.COMM else "bytes (link)",
             units.nbytes(op.hbm_bytes or link_bytes(op) or op.bytes.get("link", 0))],
            ["arithmetic intensity", "-" if not math.isfinite(ai) else f"{ai:.3g} FLOP/B"],
            ["attained", units.rate(t.attained_flops, "FLOP/s")], ["bound", t.bound],
            ["compute / memory / overhead",
             " / ".join(units.seconds(x) for x in (t.compute_s, t.memory_s, t.overhead_s))]]
    return (f"{op.name} on {hardware} [{op.formula}]\n" + units.table(["quantity", "value"], rows, right={1})
            + "\n" + efficiency_line(eff, explain))
