"""`whatif compare`: several technique sets and systems side by side against a baseline.

The baseline is the scenario as given (its own techniques included) on the first system; every
other row adds one variant's techniques and/or runs on another system. Ratios are oriented so that
> 1 means better than the baseline (faster, more throughput, larger batch, less memory).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..specs import units
from .provenance import efficiency_line
from ..roofline.estimate import Estimate
from ..scenario import Scenario

BASELINE_NAMES = ("baseline", "none", "")


@dataclass(frozen=True)
class Row:
    label: str
    hardware: str
    techniques: str
    estimate: Estimate


@dataclass(frozen=True)
class Comparison:
    rows: tuple[Row, ...]

    @property
    def baseline(self) -> Row:
        return self.rows[0]


SYSTEM_KEYS = ("tp", "pp", "ep", "moe_tp", "dp", "nodes")   # dp: attention-DP ranks; nodes: --nodes


def on_system(base: Scenario, spec: str) -> Scenario:
    """`base` on the system `spec` names: 'NAME' or 'NAME:tp=N[:pp=N][:ep=N][:moe_tp=N][:dp=N][:nodes=N]' (its own
    parallelism, attention-DP ranks and node count)."""
    from ..errors import WhatifError
    name, *keys = spec.split(":")
    par = {}
    for item in keys:
        key, _, value = item.partition("=")
        if key not in SYSTEM_KEYS or not value.isdigit() or int(value) < 1 or key in par:
            raise WhatifError(f"--systems: {spec!r}: {item!r} is not valid; write NAME or NAME:tp=N:pp=N:ep=N "
                              f"(also moe_tp=N, dp=N attention-DP ranks, nodes=N; each at most once, a positive "
                              f"integer)")
        par[key] = int(value)
    nodes = par.pop("nodes", None)
    if "dp" in par:
        par["attention_dp"] = par.pop("dp")
    if nodes is not None:
        base = replace(base, nodes=nodes)
    if not par:
        return replace(base, hardware=name)
    if base.gpus is not None:
        raise WhatifError(f"--systems: {spec!r} sets its own parallelism; drop --gpus (give --tp/--pp instead)")
    return replace(base, hardware=name, parallel=replace(base.parallel, **par))


def compare_rows(base: Scenario, variants: list[str], other_systems: list[str],
                 host_links: list[str] | None = None) -> list[tuple[str, Scenario]]:
    """(variant, scenario) of each row: baseline on the base system, then each variant there, then
    baseline + variants on each other system; with `host_links`, every system with each of those links."""
    sets = ["baseline"] + [v for v in variants if v.strip().lower() not in BASELINE_NAMES]
    rows = []
    for system in [base] + [on_system(base, spec) for spec in other_systems]:
        for link in host_links or [base.host_link]:
            for variant in sets:
                techniques = tuple(base.techniques) + (() if variant == "baseline" else (variant,))
                rows.append((variant, replace(system, techniques=techniques, host_link=link)))
    return rows


def run_compare(base: Scenario, variants: list[str], other_systems: list[str],
                host_links: list[str] | None = None) -> Comparison:
    runs = [(variant, scenario, scenario.run()) for variant, scenario in compare_rows(base, variants, other_systems,
                                                                                      host_links)]
    # rows name their parallelism when it differs between them (--systems NAME:tp=N)
    mixed = len({(e.parallel.tp, e.parallel.pp, e.parallel.ep, e.parallel.moe_tp, e.parallel.attention_dp)
                 for _, _, e in runs}) > 1
    rows = []
    for variant, scenario, est in runs:
        p = est.parallel
        layout = (f" tp={p.tp} pp={p.pp}" + (f" ep={p.ep}" if p.ep > 1 else "")
                  + (f" moe_tp={p.moe_tp}" if 1 < p.ep < p.tp else "")
                  + (f" dp={p.attention_dp}" if p.dp_attention else ""))
        label = (scenario.hardware + (f" x{scenario.nodes}" if scenario.nodes and scenario.nodes > 1 else "")
                 + (layout if mixed else "")
                 + (f" via {scenario.host_link}" if scenario.host_link else ""))
        rows.append(Row(variant, label, est.techniques.label(), est))
    return Comparison(tuple(rows))


def no_fit_reason(e: Estimate) -> str | None:
    """Why a row cannot run as configured (every tier it overfills), or None when it fits."""
    from ..roofline.overflow_text import tiers_over
    over = e.memory.overflow()
    return f"does not fit: {tiers_over(over)}" if over else None


def _ratio(new: float | None, old: float | None, higher_better: bool) -> float | None:
    if new is None or old is None:   # a row that does not fit has no latency to compare
        return None
    if higher_better:
        return new / old if old > 0 else None
    return old / new if new > 0 else None


RAN_KEYS = ("ttft_s", "tpot_s", "e2e_s", "throughput_tok_s", "usd_per_million_tokens")   # figures of the batch as given


def ran(e: Estimate) -> dict:
    """The figures of the batch as given, each None where it does not fit: a configuration that cannot run has no
    latency, throughput or cost of its own (its max-batch figures stay: that batch fits, or is 0)."""
    fits = e.memory.fits
    return dict(zip(RAN_KEYS, (v if fits else None for v in (e.ttft_s, e.tpot_s, e.e2e_s, e.throughput_tok_s,
                                                              e.cost_per_mtok))))


def row_dict(row: Row, base: Row) -> dict:
    e, b = row.estimate, base.estimate
    m = e.memory
    mine, theirs = ran(e), ran(b)
    return {
        "label": row.label, "hardware": row.hardware, "techniques": row.techniques,
        "gpus": e.parallel.gpus, "fits": m.fits, "no_fit_reason": no_fit_reason(e),
        "ttft_s": mine["ttft_s"], "tpot_s": mine["tpot_s"], "e2e_s": mine["e2e_s"],
        "throughput_tok_s": mine["throughput_tok_s"],
        "max_batch": e.max_batch, "max_batch_throughput_tok_s": e.max_batch_throughput_tok_s,
        "memory_total_bytes": m.total_bytes, "hbm_bytes": m.hbm_bytes, "kv_cache_bytes": m.kv_cache_bytes,
        "placement": e.placement.label(),
        "usd_per_million_tokens": mine["usd_per_million_tokens"],
        "usd_per_million_tokens_at_max_batch": e.max_batch_cost_per_mtok,
        "kv_bytes_per_token": m.kv_bytes_per_token, "weights_bytes": m.weights_bytes,
        "vs_baseline": {
            "ttft_speedup": _ratio(mine["ttft_s"], theirs["ttft_s"], False),
            "tpot_speedup": _ratio(mine["tpot_s"], theirs["tpot_s"], False),
            "throughput_ratio": _ratio(mine["throughput_tok_s"], theirs["throughput_tok_s"], True),
            "max_batch_ratio": _ratio(e.max_batch, b.max_batch, True),
            "max_batch_throughput_ratio": _ratio(e.max_batch_throughput_tok_s, b.max_batch_throughput_tok_s, True),
            "kv_memory_reduction": _ratio(m.kv_cache_bytes, b.memory.kv_cache_bytes, False),
            "cost_per_token_ratio": (_ratio(e.max_batch_cost_per_mtok, b.max_batch_cost_per_mtok, False)
                                     if e.max_batch_cost_per_mtok and b.max_batch_cost_per_mtok else None),
        },
    }


def compare_dict(c: Comparison) -> dict:
    b = c.baseline.estimate
    w = b.workload
    return {"model": b.model.name, "baseline": {"label": c.baseline.label, "hardware": c.baseline.hardware,
                                                 "parallel": b.parallel.label(), "precision": b.precision.label()},
            "workload": {"batch": w.batch, "prompt": w.prompt, "output": w.output, "shared_prefix": w.shared_prefix},
            "efficiency": {"source": b.efficiency.source, "provenance": b.efficiency.provenance},
            "efficiency_by_hardware": {r.hardware: {"source": r.estimate.efficiency.source,
                                                    "provenance": r.estimate.efficiency.provenance} for r in c.rows},
            "rows": [row_dict(r, c.baseline) for r in c.rows]}


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def or_dash(value: float | None, fmt) -> str:
    """`fmt(value)`, or '-' where there is no figure (a row that does not fit)."""
    return "-" if value is None else fmt(value)


def compare_text(c: Comparison, explain: bool = False, asked=None) -> str:
    """The question, the table, then the baseline's efficiency fit (`explain`: whole); `asked`: the --model the
    user gave, named first where it resolved to another profile. The baseline line says its layout and precision
    (a checkpoint's own scheme included), which the rows share unless their technique set changes it."""
    from ..specs.hf_ids import model_heading
    b = c.baseline.estimate
    w = b.workload
    head = (f"{model_heading(b.model.name, asked)}: batch {w.batch}, prompt {w.prompt} tokens, output {w.output} tokens"
            + (f", shared prefix {w.shared_prefix} tokens" if w.shared_prefix else "")
            + f"\nbaseline: {c.baseline.label} on {c.baseline.hardware} ({b.parallel.label()}), {b.precision.label()}"
            + "; ratios > 1 are better than the baseline")
    rows = []
    for r in c.rows:
        d = row_dict(r, c.baseline)
        v = d["vs_baseline"]
        rows.append([r.label, r.hardware, or_dash(d["ttft_s"], units.seconds), or_dash(d["tpot_s"], units.seconds),
                     or_dash(d["throughput_tok_s"], "{:,.0f}".format), str(d["max_batch"]),
                     f"{d['max_batch_throughput_tok_s']:,.0f}",
                     units.nbytes(d["hbm_bytes"]) + ("" if d["fits"] else " (no fit)"),
                     _x(v["tpot_speedup"]), _x(v["throughput_ratio"]), _x(v["max_batch_ratio"]),
                     _x(v["max_batch_throughput_ratio"])])
        if any(r.estimate.price for r in c.rows):
            cost = d["usd_per_million_tokens_at_max_batch"]
            rows[-1].append("-" if cost is None else f"{cost:.3g}")
    headers = ["techniques", "hardware", "TTFT", "TPOT", "tok/s", "max batch", "tok/s @max", "HBM/GPU",
               "TPOT x", "tok/s x", "batch x", "@max x"]
    if any(r.estimate.price for r in c.rows):
        headers.append("USD/Mtok @max")
    table = units.table(headers, rows, right=set(range(2, len(headers))))
    placements = {r.estimate.placement.label() for r in c.rows}
    note = f"\nplacement: {placements.pop()}" if len(placements) == 1 and c.baseline.estimate.placement else ""
    if len(placements) > 1:   # one --place, each system's own tier ('host': DDR5 on one, LPDDR5X on another)
        by_hw = {r.hardware: r.estimate.placement.label() for r in c.rows}
        note = "\nplacement: " + "; ".join(f"{hw}: {label or 'none'}" for hw, label in by_hw.items())
    return head + note + "\n\n" + table + _no_fit_lines(c) + "\n\n" + _efficiency_lines(c, explain)


def _no_fit_lines(c: Comparison) -> str:
    """One line per row that does not fit: why its TTFT, TPOT and tok/s read '-'."""
    lines = [f"{r.label} on {r.hardware}: {no_fit_reason(r.estimate)}; TTFT, TPOT and tok/s not shown (it cannot run "
             f"at batch {r.estimate.workload.batch}; max batch {r.estimate.max_batch})"
             for r in c.rows if not r.estimate.memory.fits]
    return "".join("\n" + line for line in lines)


def _efficiency_lines(c: Comparison, explain: bool) -> str:
    """The baseline's efficiency line; across vendors (an AMD GPU's assumed CDNA family entry beside fitted
    NVIDIA kernels), one line per hardware, so that no AMD row is read as fitted."""
    seen = {}
    for r in c.rows:
        seen.setdefault(r.estimate.efficiency.provenance, (r.hardware, r.estimate.efficiency))
    if len(seen) == 1 or not any("CDNA family" in p for p in seen):   # NVIDIA only: the baseline's line, as before
        return efficiency_line(c.baseline.estimate.efficiency, explain)
    return "\n".join(f"{hw}: " + efficiency_line(eff, explain) for hw, eff in seen.values())
