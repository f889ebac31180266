"""The rows that --csv and --parquet write, one list of columns per command, each named with its unit.

These names are a stable, documented interface (docs/tables.md): add columns at the end, never
rename one. Units: `_s` seconds, `_bytes` bytes, `_tok_s` tokens per second, `_req_s` requests per second,
`_flop_s` FLOP per second, `_tokens` tokens, `_fraction` a share in [0, 1], `_usd` US dollars; bytes are per GPU
(the heaviest pipeline stage) unless the name says otherwise. An empty cell is a figure that does not exist."""
from __future__ import annotations

import math

ESTIMATE_COLUMNS = [
    "model", "hardware", "gpus", "tp", "pp", "ep", "weight_dtype", "activation_dtype", "kv_dtype",
    "quantization", "batch", "prompt_tokens", "output_tokens", "techniques", "efficiency",
    "ttft_s", "tpot_s", "e2e_s", "throughput_tok_s", "decode_throughput_tok_s",
    "max_batch", "max_batch_throughput_tok_s", "max_context_tokens",
    "weights_bytes", "kv_bytes", "kv_bytes_per_token", "activation_bytes", "total_bytes", "usable_bytes", "fits",
    "usd_per_million_tokens",
]
RATIO_COLUMNS = ["ttft_speedup", "tpot_speedup", "throughput_ratio", "max_batch_ratio", "max_batch_throughput_ratio"]
LAYOUT_COLUMNS = ["moe_tp", "attention_dp", "nodes"]   # added later: at the end of each table that has them
COMPARE_COLUMNS = ["variant", "configuration", *ESTIMATE_COLUMNS, *RATIO_COLUMNS, *LAYOUT_COLUMNS]
ESTIMATE_COLUMNS = ESTIMATE_COLUMNS + LAYOUT_COLUMNS
KERNEL_COLUMNS = ["kernel", "hardware", "dtype", "efficiency", "time_s", "compute_s", "memory_s", "overhead_s",
                  "flop", "hbm_bytes", "intensity_flop_per_byte", "attained_flop_s", "bound"]
LATENCIES = ("ttft", "tpot", "itl", "e2e", "queue")
STATS = ("p50", "p90", "p95", "p99", "mean", "max")
SIMULATE_COLUMNS = [
    "model", "hardware", "techniques",
    "requests_arrived", "requests_finished", "requests_queued", "requests_running", "requests_rejected",
    *(f"{name}_{stat}_s" for name in LATENCIES for stat in STATS),
    "throughput_req_s", "output_tok_s", "input_tok_s", "window_s",
    "slo_ttft_s", "slo_tpot_s", "slo_target_fraction", "slo_attainment_fraction", "goodput_req_s",
    "preemptions", "prefix_cache_hit_fraction", "batch_mean_seqs", "batch_max_seqs",
    "kv_peak_fraction", "kv_mean_fraction", "iterations",
]
CAPACITY_COLUMNS = ["configuration", "model", "hardware", "techniques", "capacity_req_s", "runs",
                    "slo_ttft_s", "slo_tpot_s", "slo_attainment_fraction", "note"]


def _num(x):
    """A finite number as is; inf and NaN (no figure) as an empty cell."""
    return x if x is None or not isinstance(x, float) or math.isfinite(x) else None


def estimate_row(e) -> dict:
    from ..reports.output import decoded
    m, w, p = e.memory, e.workload, e.parallel
    row = {
        "model": e.model.name, "hardware": e.system.name, "gpus": p.gpus, "tp": p.tp, "pp": p.pp, "ep": p.ep,
        "weight_dtype": e.precision.weight, "activation_dtype": e.precision.gemm_activation, "kv_dtype": e.precision.kv,
        "quantization": e.precision.quantization or None,
        "expert_quantization": e.precision.module("experts").quantization or None
        if e.precision.per_module and e.model.moe is not None else None,
        "batch": w.batch, "prompt_tokens": w.prompt, "output_tokens": w.output,
        "techniques": e.techniques.label() if e.techniques else "", "efficiency": e.efficiency.source,
        "ttft_s": e.ttft_s, "tpot_s": decoded(e, e.tpot_s), "e2e_s": e.e2e_s,
        "throughput_tok_s": e.throughput_tok_s, "decode_throughput_tok_s": decoded(e, e.decode_throughput_tok_s),
        "max_batch": e.max_batch,
        "max_batch_throughput_tok_s": e.max_batch_throughput_tok_s, "max_context_tokens": e.max_context,
        "weights_bytes": m.weights_bytes, "kv_bytes": m.kv_cache_bytes, "kv_bytes_per_token": m.kv_bytes_per_token,
        "activation_bytes": m.activation_bytes, "total_bytes": m.total_bytes, "usable_bytes": m.usable_bytes,
        "fits": m.fits, "usd_per_million_tokens": e.cost_per_mtok,
        "moe_tp": p.moe_tp, "attention_dp": p.attention_dp,
        "nodes": -(-p.gpus // (e.system.gpus_per_node or e.system.gpu_count)),
    }
    return {k: _num(row[k]) for k in ESTIMATE_COLUMNS}


def compare_rows(c) -> list[dict]:
    from ..queries.compare import RAN_KEYS, row_dict
    rows = []
    for r in c.rows:
        d = row_dict(r, c.baseline)   # a row that does not fit: its latency, throughput and cost cells empty
        ran = {k: _num(d[k]) for k in RAN_KEYS}
        if not d["fits"]:
            ran["decode_throughput_tok_s"] = None
        rows.append({"variant": r.label, "configuration": r.hardware, **estimate_row(r.estimate), **ran,
                     **{k: _num(d["vs_baseline"].get(k)) for k in RATIO_COLUMNS}})
    return rows


def kernel_row(t, hardware: str, eff) -> dict:
    from ..roofline.ops import link_bytes
    op = t.op
    return {"kernel": op.name, "hardware": hardware, "dtype": op.dtype, "efficiency": eff.source,
            "time_s": t.time_s, "compute_s": t.compute_s, "memory_s": t.memory_s, "overhead_s": t.overhead_s,
            "flop": op.flops, "hbm_bytes": op.hbm_bytes or link_bytes(op) or op.bytes.get("link", 0),
            "intensity_flop_per_byte": _num(op.intensity), "attained_flop_s": _num(t.attained_flops),
            "bound": t.bound}


def simulation_row(summary: dict, scenario) -> dict:
    """One row of a simulation's summary (`SimulationResult.summary()`): counts, latency percentiles, rates."""
    def get(section: str, key: str):
        return _num((summary.get(section) or {}).get(key))

    latency = summary.get("latency") or {}
    row = {"model": scenario.model, "hardware": scenario.hardware,
           "techniques": "+".join(str(t) for t in scenario.techniques),
           **{f"requests_{k}": get("requests", k) for k in ("arrived", "finished", "queued", "running", "rejected")},
           **{f"{name}_{stat}_s": _num((latency.get(f"{name}_s") or {}).get(stat))
              for name in LATENCIES for stat in STATS},
           "throughput_req_s": get("throughput", "finished_rps"), "output_tok_s": get("throughput", "output_tok_s"),
           "input_tok_s": get("throughput", "input_tok_s"), "window_s": get("throughput", "window_s"),
           "slo_ttft_s": get("slo", "ttft_s"), "slo_tpot_s": get("slo", "tpot_s"),
           "slo_target_fraction": get("slo", "target"), "slo_attainment_fraction": get("slo", "attainment"),
           "goodput_req_s": get("slo", "goodput_rps"), "preemptions": get("preemptions", "total"),
           "prefix_cache_hit_fraction": get("prefix_cache", "hit_rate"),
           "batch_mean_seqs": get("batch", "mean_seqs"), "batch_max_seqs": get("batch", "max_seqs"),
           "kv_peak_fraction": get("kv_memory", "peak_fraction"), "kv_mean_fraction": get("kv_memory", "mean_fraction"),
           "iterations": _num(summary.get("iterations"))}
    return {k: row.get(k) for k in SIMULATE_COLUMNS}


def capacity_rows(configs: list[tuple], results: dict) -> list[dict]:
    rows = []
    for label, sc in configs:
        r = results[label]
        rows.append({"configuration": label, "model": sc.model, "hardware": sc.hardware,
                     "techniques": "+".join(str(t) for t in sc.techniques), "capacity_req_s": r.rate_rps,
                     "runs": len(r.probes), "slo_ttft_s": r.slo.ttft_s, "slo_tpot_s": r.slo.tpot_s,
                     "slo_attainment_fraction": r.slo.attainment, "note": r.note})
    return rows
