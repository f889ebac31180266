"""Simulation: TTFT, TPOT and E2E distributions (CDFs, with the SLO), the batch and the KV memory over time,
and the run's summary. Long runs are decimated: a CDF keeps at most MAX_CDF quantiles, a time series at most
MAX_SERIES time buckets (each the bucket's maximum, so peaks survive)."""
from __future__ import annotations

import numpy as np

from ..specs import units
from .page import COLOURS, Section, definitions, esc, layout, note, table

MAX_CDF = 400
MAX_SERIES = 1500
LATENCIES = (("TTFT", "ttft_s"), ("TPOT", "tpot_s"), ("E2E", "e2e_s"))


def cdf_points(values, limit: int = MAX_CDF) -> tuple[np.ndarray, np.ndarray]:
    """(sorted values, cumulative %) of a sample, at most `limit` points (quantiles of it when longer)."""
    a = np.sort(np.asarray([v for v in values if v is not None], dtype=float))
    if a.size == 0:
        return a, a
    if a.size <= limit:
        return a, 100.0 * np.arange(1, a.size + 1) / a.size
    q = np.linspace(0.0, 1.0, limit)
    return np.quantile(a, q), 100.0 * q


def bucket_max(t, columns: dict[str, np.ndarray], limit: int = MAX_SERIES) -> tuple[np.ndarray, dict]:
    """Time series of at most `limit` points: equal time buckets, each column's maximum in each (empty buckets
    dropped), stamped at the bucket's last time."""
    t = np.asarray(t, dtype=float)
    if t.size <= limit:
        return t, {k: np.asarray(v, dtype=float) for k, v in columns.items()}
    edges = np.linspace(t.min(), t.max(), limit + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, limit - 1)
    used = np.unique(idx)
    out = {}
    for k, v in columns.items():
        v = np.asarray(v, dtype=float)
        m = np.full(limit, -np.inf)
        np.maximum.at(m, idx, v)
        out[k] = m[used]
    stamp = np.zeros(limit)
    np.maximum.at(stamp, idx, t)
    return stamp[used], out


def _unit(values: np.ndarray) -> tuple[float, str]:
    top = float(values.max()) if values.size else 0.0
    return (1.0, "s") if top >= 1 else (1e3, "ms")


def latency_cdf_figure(result) -> dict:
    done = result.finished()
    data, lay_axes = [], {}
    slo = {"ttft_s": result.slo.ttft_s, "tpot_s": result.slo.tpot_s}
    n = len(LATENCIES)
    gap = 0.06
    width = (1 - gap * (n - 1)) / n
    for i, (name, key) in enumerate(LATENCIES):
        x, y = cdf_points([getattr(r, key) for r in done])
        scale, unit = _unit(x)
        ax = "" if i == 0 else str(i + 1)
        data.append({"type": "scatter", "mode": "lines", "name": name, "x": x * scale, "y": y,
                     "xaxis": f"x{ax}", "yaxis": f"y{ax}", "line": {"color": COLOURS[i], "width": 2, "shape": "hv"},
                     "hovertemplate": f"{name} %{{x:.3g}} {unit}: %{{y:.1f}}% of finished requests<extra></extra>"})
        lo = i * (width + gap)
        lay_axes[f"xaxis{ax}"] = {"domain": [lo, lo + width], "title": {"text": f"{name} ({unit})"},
                                  "anchor": f"y{ax}", "gridcolor": "#e6e9ee"}
        lay_axes[f"yaxis{ax}"] = {"range": [0, 101], "anchor": f"x{ax}", "gridcolor": "#e6e9ee",
                                  "title": {"text": "requests at or below (%)" if i == 0 else ""}}
        target = slo.get(key)
        if target is not None:
            data.append({"type": "scatter", "mode": "lines", "name": f"{name} SLO {units.seconds(target)}",
                         "x": [target * scale, target * scale], "y": [0, 100], "xaxis": f"x{ax}", "yaxis": f"y{ax}",
                         "line": {"color": "#d62728", "dash": "dash", "width": 1.5},
                         "hovertemplate": f"SLO {units.seconds(target)}<extra></extra>"})
    lay = layout(f"Latency distributions ({len(done)} finished requests)", **lay_axes)
    return {"data": data, "layout": lay}


def over_time_figure(result) -> dict:
    cols = result.log.columns
    data = []
    if not cols["start_s"]:
        return {"data": data, "layout": layout("Batch and KV memory over time (no iterations ran)")}
    rep = np.asarray(cols["replica"])
    end = np.asarray(cols["start_s"], dtype=float) + np.asarray(cols["duration_s"], dtype=float)
    seqs = np.asarray(cols["decode_seqs"], dtype=float) + np.asarray(cols["prefill_seqs"], dtype=float)
    used = np.asarray(cols["kv_blocks_used"], dtype=float)
    waiting = np.asarray(cols["waiting"], dtype=float)
    for i, info in enumerate(result.replicas):
        mine = rep == info.index
        kv = 100.0 * used[mine] / info.kv_blocks if info.kv_blocks else np.zeros(mine.sum())
        t, c = bucket_max(end[mine], {"seqs": seqs[mine], "kv": kv, "waiting": waiting[mine]})
        colour = COLOURS[i % len(COLOURS)]
        tag = f"#{info.index} {info.role}" if len(result.replicas) > 1 else ""
        data.append({"type": "scatter", "mode": "lines", "name": esc(f"running sequences {tag}".strip()), "x": t,
                     "y": c["seqs"], "line": {"color": colour, "width": 1.2, "shape": "hv"},
                     "hovertemplate": "%{x:.4g} s: %{y} sequences in the batch<extra></extra>"})
        data.append({"type": "scatter", "mode": "lines", "name": esc(f"waiting requests {tag}".strip()), "x": t,
                     "y": c["waiting"], "line": {"color": colour, "width": 1, "dash": "dot", "shape": "hv"},
                     "hovertemplate": "%{x:.4g} s: %{y} requests waiting<extra></extra>"})
        data.append({"type": "scatter", "mode": "lines", "name": esc(f"KV memory {tag}".strip()), "x": t,
                     "y": c["kv"], "xaxis": "x2", "yaxis": "y2", "line": {"color": colour, "width": 1.2, "shape": "hv"},
                     "hovertemplate": "%{x:.4g} s: %{y:.1f}% of KV blocks in use<extra></extra>"})
    lay = layout("Batch size and KV memory over time",
                 xaxis={"domain": [0, 1], "anchor": "y", "title": {"text": ""}, "matches": "x2"},
                 yaxis={"domain": [0.55, 1], "title": {"text": "sequences / requests"}},
                 xaxis2={"domain": [0, 1], "anchor": "y2", "title": {"text": "simulated time (s)"},
                         "gridcolor": "#e6e9ee"},
                 yaxis2={"domain": [0, 0.42], "anchor": "x2", "title": {"text": "KV blocks in use (%)"},
                         "range": [0, 101], "gridcolor": "#e6e9ee"})
    return {"data": data, "layout": lay}


def _s(x) -> str:
    return "-" if x is None else units.seconds(x)


def _pct(x) -> str:
    return "-" if x is None else f"{x:.1%}"


def _rate(x, unit: str) -> str:
    return "-" if x is None else units.rate(x, unit)


def latency_table(summary: dict) -> str:
    """One column per latency, one row per statistic; tails marked + (unbounded) in an overloaded run."""
    from ..simulator.metrics_text import LATENCY_ROWS, QUEUED_LATENCIES, STAT_KEYS, TAIL_KEYS, UNBOUNDED_MARK
    over = (summary.get("overload") or {}).get("overloaded")
    rows = [[k] + [_s(summary["latency"][key][k]) + (UNBOUNDED_MARK if over and key in QUEUED_LATENCIES
                                                     and k in TAIL_KEYS else "") for _, key in LATENCY_ROWS]
            for k in STAT_KEYS]
    return table(["latency"] + [name for name, _ in LATENCY_ROWS], rows)


def headline_pairs(summary: dict, slo) -> list[tuple[str, str]]:
    from ..simulator.overload import verdict_line
    from ..simulator.run_length import short_line
    c, t, kv, b = summary["requests"], summary["throughput"], summary["kv_memory"], summary["batch"]
    verdict = verdict_line(summary.get("overload") or {})
    short = short_line(summary.get("run_length") or {}, c["arrived"], bool(verdict))
    pairs = ([("overload", verdict)] if verdict else []) + ([("run length", short)] if short else [])
    pairs += [("requests", f"{c['arrived']} arrived, {c['finished']} finished, {c['queued']} still queued, "
                          f"{c['running']} still running, {c['rejected']} rejected"),
             ("throughput", f"{_rate(t['finished_rps'], 'req/s')}, {_rate(t['output_tok_s'], 'tok/s')} out, "
                            f"{_rate(t['input_tok_s'], 'tok/s')} in (busy window {_s(t['window_s'])})")]
    if slo.given:
        s = summary["slo"]
        objectives = " and ".join(f"{n} <= {units.seconds(v)}" for n, v in (("TTFT", slo.ttft_s), ("TPOT", slo.tpot_s))
                                  if v is not None)
        pairs.append(("SLO", f"{objectives}: {_pct(s['attainment'])} of requests attain it (target "
                             f"{slo.attainment:.0%}), goodput {_rate(s['goodput_rps'], 'req/s')}"))
    pairs.append(("KV memory", f"peak {_pct(kv['peak_fraction'])}, mean {_pct(kv['mean_fraction'])} of blocks "
                               "(busiest replica)"))
    mean = "-" if b["mean_seqs"] is None else f"{b['mean_seqs']:.3g}"
    pairs.append(("batch", f"mean {mean} sequences, max {b['max_seqs'] if b['max_seqs'] is not None else '-'} "
                           f"sequences over {summary['iterations']} iterations"))
    p = summary["preemptions"]
    pairs.append(("preemptions", f"{p['total']} ({p['requests_preempted']} requests)"))
    return pairs


def simulation_section(result, title: str = "Serving simulation", section_id: str = "simulation") -> Section:
    summary = result.summary()
    s = Section(section_id, title)
    setup = [(k, v) for k, v in result.setup.items() if isinstance(v, str)]
    s.html(definitions(setup + headline_pairs(summary, result.slo)))
    s.html(latency_table(summary))
    s.figure(latency_cdf_figure(result), height=400)
    s.figure(over_time_figure(result), height=520)
    s.html(note("Every iteration's duration is the roofline's for that batch (no measurement). CDFs count finished "
                f"requests (at most {MAX_CDF} quantiles drawn); the time series show each bucket's maximum (at most "
                f"{MAX_SERIES} buckets per replica). SLO attainment versus arrival rate: `whatif capacity --report`."))
    return s
