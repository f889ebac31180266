"""Comparisons: technique sets and systems side by side against a baseline (speedup, memory, max batch, cost
per million tokens where a price is known)."""
from __future__ import annotations

from ..specs import units
from ..queries.compare import Comparison, no_fit_reason, or_dash, row_dict
from .breakdowns import decode_by_class, latency_figure, memory_figure, prefill_by_class
from .page import COLOURS, Section, esc, layout, note, table


def row_name(r) -> str:
    return f"{r.label} on {r.hardware}"


def _x(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}x"


def comparison_rows(c: Comparison) -> tuple[list[str], list[list[str]]]:
    priced = any(r.estimate.price for r in c.rows)
    headers = ["configuration", "techniques", "placement", "GPUs", "fits", "TTFT", "TPOT", "throughput",
               "max batch", "throughput @max batch", "HBM per GPU", "KV per token", "TPOT speedup",
               "throughput x", "max batch x", "@max x"]
    if priced:
        headers += ["USD per 1M tokens @max batch", "cost x"]
    rows = []
    for r in c.rows:
        d = row_dict(r, c.baseline)
        v = d["vs_baseline"]
        fits = "yes" if d["fits"] else "NO"
        row = [row_name(r), d["techniques"], d["placement"], str(d["gpus"]), fits, or_dash(d["ttft_s"], units.seconds),
               or_dash(d["tpot_s"], units.seconds), or_dash(d["throughput_tok_s"], "{:,.1f} tok/s".format),
               f"{d['max_batch']} seqs",
               f"{d['max_batch_throughput_tok_s']:,.1f} tok/s", units.nbytes(d["hbm_bytes"]),
               units.nbytes(d["kv_bytes_per_token"]), _x(v["tpot_speedup"]), _x(v["throughput_ratio"]),
               _x(v["max_batch_ratio"]), _x(v["max_batch_throughput_ratio"])]
        if priced:
            cost = d["usd_per_million_tokens_at_max_batch"]
            row += ["-" if cost is None else f"{cost:.3g} USD", _x(v["cost_per_token_ratio"])]
        rows.append(row)
    return headers, rows


def _bars(c: Comparison, title: str, ytitle: str, values: list, text: list[str], log_if_spread: bool = False) -> dict:
    names = [esc(row_name(r)) for r in c.rows]
    colours = [COLOURS[i % len(COLOURS)] if r.estimate.memory.fits else "#c7c7c7" for i, r in enumerate(c.rows)]
    data = [{"type": "bar", "x": names, "y": values, "text": text, "textposition": "outside",
             "marker": {"color": colours}, "hovertemplate": "%{x}<br>%{text}<extra></extra>", "showlegend": False}]
    shown = [v for v in values if v]
    log = log_if_spread and shown and min(shown) > 0 and max(shown) / min(shown) > 20
    return {"data": data, "layout": layout(title + (" (log scale)" if log else ""), "", ytitle,
                                           xaxis={"tickangle": -25}, yaxis={"type": "log" if log else "linear"})}


def comparison_section(c: Comparison, title: str = "Comparison") -> Section:
    b = c.baseline
    s = Section("comparison", title)
    headers, rows = comparison_rows(c)
    fits_col = headers.index("fits")
    for row in rows:
        row[fits_col] = '<span class="bad">NO</span>' if row[fits_col] == "NO" else "yes"
    s.html(table(headers, rows, numeric=set(range(3, len(headers))) - {fits_col}, raw={fits_col}))
    unfit = [f"{row_name(r)}: {no_fit_reason(r.estimate)}" for r in c.rows if not r.estimate.memory.fits]
    s.html(note(f"Baseline: {row_name(b)}. Ratios > 1 are better than the baseline (faster, more tokens/s, a larger "
                "batch, cheaper). 'NO' rows do not fit in memory as configured: they cannot run, so their TTFT, TPOT "
                "and throughput read '-' and their latency bars are left out"
                + (" (" + "; ".join(unfit) + ")" if unfit else "") + ". Throughput @max batch is the same scenario "
                "at the largest batch that fits, where most papers measure."
                + ("" if any(r.estimate.price for r in c.rows)
                   else " No price is known for these systems: give --price-per-hour for cost per 1M tokens.")))
    ests = [r.estimate for r in c.rows]
    s.figure(_bars(c, "TPOT (lower is better)", "TPOT (ms)", [e.tpot_s * 1e3 if e.memory.fits else None for e in ests],
                   [units.seconds(e.tpot_s) if e.memory.fits else "does not fit" for e in ests], log_if_spread=True),
             height=420)
    s.figure(_bars(c, "Throughput at max batch (higher is better)", "throughput (tok/s)",
                   [e.max_batch_throughput_tok_s for e in ests],
                   [f"{e.max_batch_throughput_tok_s:,.0f} tok/s at batch {e.max_batch}" for e in ests]), height=420)
    s.figure(_bars(c, "Max batch that fits", "max batch (sequences)", [e.max_batch for e in ests],
                   [f"{e.max_batch} seqs" for e in ests]), height=380)
    if any(e.price for e in ests):
        costs = [e.max_batch_cost_per_mtok for e in ests]
        s.figure(_bars(c, "Cost per 1M tokens at max batch (lower is better)", "USD per 1M tokens", costs,
                       ["-" if x is None else f"{x:.3g} USD" for x in costs]), height=380)
    s.figure(memory_figure([(row_name(r), r.estimate) for r in c.rows]), height=520)
    ran = [r for r in c.rows if r.estimate.memory.fits]   # a row that cannot run has no step times
    if ran:
        s.figure(latency_figure([(row_name(r), decode_by_class(r.estimate)) for r in ran],
                                "Decode step time by op class (mid-generation; hover for details)"),
                 height=max(300, 60 + 34 * len(ran)))
        s.figure(latency_figure([(row_name(r), prefill_by_class(r.estimate)) for r in ran],
                                "Prefill time by op class (all prefill passes of the batch)"),
                 height=max(300, 60 + 34 * len(ran)))
    return s
