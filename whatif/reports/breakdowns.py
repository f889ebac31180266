"""Breakdowns: where the time goes (by op class, prefill and decode) and where the bytes live (by memory
tier and category, against each tier's usable capacity)."""
from __future__ import annotations

from ..specs import units
from ..roofline.estimate import Estimate
from .page import COLOURS, Section, esc, layout, note, table

GAPS = "launch and gaps"          # pass time outside kernels: CPU launches (eager) or inter-kernel gaps
DRAFT = "drafting"
ROUND_OTHER = "other per-round work"
CATEGORIES = ("weights", "KV cache", "activations", "runtime reserve", "staging buffers")
CATEGORY_COLOURS = dict(zip(CATEGORIES, ("#4c72b0", "#dd8452", "#55a868", "#8172b3", "#c44e52")))


# ---------------------------------------------------------------- latency

def _by_class(passes) -> dict[str, float]:
    """Seconds per op class over [(PassTime, times it runs)], with the time outside kernels as GAPS."""
    out: dict[str, float] = {}
    gaps = 0.0
    for p, n in passes:
        kernels = 0.0
        for t in p.op_times:
            out[t.op.op_class] = out.get(t.op.op_class, 0.0) + n * t.total_s
            kernels += t.total_s
        gaps += n * max(0.0, p.time_s - kernels)
    if gaps > 0:
        out[GAPS] = gaps
    return out


def prefill_by_class(e: Estimate) -> dict[str, float]:
    """Seconds per op class summed over every prefill pass of the batch."""
    return _by_class(e.prefill)


def decode_by_class(e: Estimate) -> dict[str, float]:
    """Seconds per op class of one decode step at mid-generation (a decoder's round: its verify pass, drafting
    and other per-round work)."""
    if e.decode is None:
        return {}
    out = _by_class([(e.decode, 1)])
    r = e.decode_round
    if r is not None:
        if r.draft_s and not r.overlap:
            out[DRAFT] = r.draft_s
        if r.overhead_s:
            out[ROUND_OTHER] = r.overhead_s
    return out


def _time_unit(values) -> tuple[float, str]:
    top = max(values, default=0.0)
    return (1.0, "s") if top >= 1 else (1e3, "ms") if top >= 1e-3 else (1e6, "us")


def latency_figure(rows: list[tuple[str, dict[str, float]]], title: str, normalise: bool = False) -> dict:
    """Horizontal stacked bars, one per (label, seconds per class); in % of each bar's total when `normalise`."""
    classes = list(dict.fromkeys(c for _, d in rows for c in sorted(d, key=lambda k: -d[k])))
    scale, unit = _time_unit([sum(d.values()) for _, d in rows])
    labels = [esc(label) for label, _ in rows]
    data = []
    for i, cls in enumerate(classes):
        seconds = [d.get(cls, 0.0) for _, d in rows]
        totals = [sum(d.values()) or 1.0 for _, d in rows]
        x = [100 * s / t for s, t in zip(seconds, totals)] if normalise else [s * scale for s in seconds]
        data.append({"type": "bar", "orientation": "h", "name": esc(cls), "y": labels, "x": x,
                     "marker": {"color": COLOURS[i % len(COLOURS)]},
                     "text": [f"{esc(cls)}: {units.seconds(s)} ({s / t:.1%})" for s, t in zip(seconds, totals)],
                     "hovertemplate": "%{y}<br>%{text}<extra></extra>"})
    xtitle = "share of the phase's time (%)" if normalise else f"time ({unit})"
    lay = layout(title, xtitle, "", barmode="stack", yaxis={"automargin": True, "autorange": "reversed"},
                 legend={"traceorder": "normal"})
    return {"data": data, "layout": lay}


def latency_section(e: Estimate) -> Section:
    pre, dec = prefill_by_class(e), decode_by_class(e)
    passes = e.prefill_pass_count
    rows = [(f"prefill: {passes} pass{'es' if passes > 1 else ''}, {units.seconds(sum(pre.values()))}", pre)]
    if dec:
        what = "decode step" if e.decode_round is None else f"decode round ({e.decode_round.tokens:.3g} tokens)"
        rows.append((f"{what}: {units.seconds(sum(dec.values()))}", dec))
    s = Section("latency", "Latency breakdown")
    s.figure(latency_figure(rows, "Time by op class (share of each phase; hover for seconds)", normalise=True),
             height=300)
    table_rows = []
    for cls in dict.fromkeys(list(pre) + list(dec)):
        table_rows.append([cls, units.seconds(pre[cls]) if cls in pre else "-",
                           units.seconds(dec[cls]) if cls in dec else "-"])
    s.html(table(["op class", "prefill, all passes", rows[-1][0].split(":")[0] if dec else "decode"], table_rows))
    s.html(note(f"TTFT {units.seconds(e.ttft_s)}, TPOT {units.seconds(e.tpot_s)}. The decode figures are one step at "
                "mid-generation context; TPOT integrates the steps over the whole output. Transfers that overlap "
                f"compute are counted in full here; '{GAPS}' is pass time outside kernels (CPU launches in eager "
                "mode, gaps between CUDA-graph kernels)."))
    return s


# ---------------------------------------------------------------- memory

def memory_by_tier(e: Estimate) -> dict[str, dict[str, float]]:
    """{tier: {category: bytes per GPU}}, HBM first, from the memory plan and the placement's shares."""
    m, p = e.memory, e.placement
    if not m.budgets:
        return {"hbm": {"weights": m.weights_bytes, "KV cache": m.kv_cache_bytes, "activations": m.activation_bytes,
                        "runtime reserve": m.workspace_bytes}}
    kv, act = m.kv_cache_bytes, m.activation_bytes
    out: dict[str, dict[str, float]] = {}
    offloaded_weights = 0.0
    for b in m.budgets[1:]:
        a = sum(f for tier, f in p.of("activations") if tier == b.name) * act
        w = max(0.0, b.fixed_bytes - a)
        offloaded_weights += w
        out[b.name] = {"weights": w, "KV cache": b.kv_share * kv, "activations": a}
    hbm = {"weights": m.weights_bytes - offloaded_weights, "KV cache": (1 - p.offloaded("kv")) * kv,
           "activations": (1 - p.offloaded("activations")) * act, "runtime reserve": m.workspace_bytes,
           "staging buffers": m.staging_bytes}
    return {"hbm": hbm, **out}


def tier_limits(e: Estimate) -> dict[str, tuple[float, float]]:
    """{tier: (usable bytes, capacity bytes)} per GPU."""
    m = e.memory
    out = {"hbm": (m.usable_bytes, m.capacity_bytes)}
    for b in m.budgets[1:]:
        path = (e.tier_paths or {}).get(b.name)
        cap = path.capacity if path is not None and path.capacity else b.usable_bytes / max(m.utilization, 1e-9)
        out[b.name] = (b.usable_bytes, cap)
    return out


def memory_figure(items: list[tuple[str, Estimate]], title: str = "Memory per GPU by tier and category") -> dict:
    """Stacked bars (GB) per (configuration, tier), with each tier's usable capacity as a red tick."""
    bars, limits = [], []
    for label, e in items:
        lims = tier_limits(e)
        for tier, cats in memory_by_tier(e).items():
            name = tier if len(items) == 1 else f"{label} | {tier}"
            bars.append((esc(name), cats))
            limits.append((esc(name), *lims.get(tier, (None, None))))
    data = []
    for cat in CATEGORIES:
        ys = [cats.get(cat, 0.0) / 1e9 for _, cats in bars]
        if not any(ys):
            continue
        data.append({"type": "bar", "name": cat, "x": [b for b, _ in bars], "y": ys,
                     "marker": {"color": CATEGORY_COLOURS[cat]},
                     "hovertemplate": "%{x}<br>" + cat + ": %{y:.3g} GB<extra></extra>"})
    data.append({"type": "scatter", "mode": "markers", "name": "usable capacity (utilization x capacity)",
                 "x": [n for n, _, _ in limits], "y": [u / 1e9 if u else None for _, u, _ in limits],
                 "marker": {"symbol": "line-ew-open", "size": 36, "line": {"width": 3, "color": "#d62728"},
                            "color": "#d62728"},
                 "hovertemplate": "%{x}<br>usable %{y:.3g} GB<extra></extra>"})
    data.append({"type": "scatter", "mode": "markers", "name": "capacity per GPU",
                 "x": [n for n, _, _ in limits], "y": [c / 1e9 if c else None for _, _, c in limits],
                 "marker": {"symbol": "line-ew-open", "size": 36, "line": {"width": 1.5, "color": "#555"},
                            "color": "#555"},
                 "hovertemplate": "%{x}<br>capacity %{y:.4g} GB<extra></extra>"})
    lay = layout(title, "", "bytes per GPU (GB)", barmode="stack", bargap=0.5 if len(bars) < 3 else 0.2,
                 xaxis={"tickangle": -25})
    return {"data": data, "layout": lay}


def memory_table(e: Estimate) -> str:
    by_tier, lims = memory_by_tier(e), tier_limits(e)
    rows = []
    for tier, cats in by_tier.items():
        used = sum(cats.values())
        usable, cap = lims[tier]
        fits = used <= usable * (1 + 1e-9)
        rows.append([tier, *(units.nbytes(cats[c]) if cats.get(c) else "-" for c in CATEGORIES), units.nbytes(used),
                     f"{units.nbytes(usable)} of {units.nbytes(cap)}",
                     "yes" if fits else f"NO: over by {units.nbytes(used - usable)}"])
    return table(["tier", *CATEGORIES, "total", "usable of capacity", "fits"], rows)


def memory_section(e: Estimate) -> Section:
    s = Section("memory", "Memory breakdown")
    s.figure(memory_figure([("", e)]), height=420)
    s.html(memory_table(e))
    m = e.memory
    s.html(note(f"Per GPU, heaviest pipeline stage; KV cache {units.nbytes(m.kv_bytes_per_token)}/token at batch "
                f"{e.workload.batch} and {e.workload.prompt + e.workload.output:,} tokens per sequence. Usable = "
                f"{m.utilization:.0%} of capacity (--memory-utilization); the runtime reserve is assumed."))
    return s
