"""Capacity: the highest arrival rate meeting the SLO per configuration, and every probe of the search as SLO
attainment, goodput and tail latency versus arrival rate (a sweep over rate)."""
from __future__ import annotations

from ..specs import units
from .page import COLOURS, Section, esc, layout, note, table


def _sorted_probes(r):
    return sorted(r.probes, key=lambda p: p.rate_rps)


def capacity_bar_figure(results: dict) -> dict:
    names = [esc(n) for n in results]
    rates = [r.rate_rps for r in results.values()]
    data = [{"type": "bar", "x": names, "y": rates, "text": [units.rate(x, "req/s", 4) for x in rates],
             "textposition": "outside", "marker": {"color": [COLOURS[i % len(COLOURS)] for i in range(len(rates))]},
             "hovertemplate": "%{x}<br>capacity %{text}<extra></extra>", "showlegend": False}]
    return {"data": data, "layout": layout("Capacity: highest arrival rate meeting the SLO", "", "capacity (req/s)",
                                           xaxis={"automargin": True})}


def attainment_figure(results: dict) -> dict:
    data = []
    target = None
    for i, (name, r) in enumerate(results.items()):
        target = r.slo.attainment
        probes = _sorted_probes(r)
        colour = COLOURS[i % len(COLOURS)]
        data.append({"type": "scatter", "mode": "lines+markers", "name": esc(name),
                     "x": [p.rate_rps for p in probes], "y": [100 * p.attainment for p in probes],
                     "line": {"color": colour}, "marker": {"symbol": ["circle" if p.passed else "x" for p in probes],
                                                           "size": 8, "color": colour},
                     "hovertemplate": esc(name) + "<br>%{x:.4g} req/s: %{y:.1f}% attain the SLO<extra></extra>"})
    if target is not None:
        xs = [p.rate_rps for r in results.values() for p in r.probes]
        if xs:
            data.append({"type": "scatter", "mode": "lines", "name": f"target {target:.0%}",
                         "x": [min(xs), max(xs)], "y": [100 * target] * 2,
                         "line": {"color": "#d62728", "dash": "dash"}, "hoverinfo": "skip"})
    return {"data": data, "layout": layout("SLO attainment versus arrival rate (x: a failing probe)",
                                           "arrival rate (req/s)", "requests attaining the SLO (%)",
                                           xaxis={"type": "log"}, yaxis={"range": [0, 102]})}


def rate_latency_figure(results: dict) -> dict:
    """Goodput and p90 TTFT / TPOT versus offered rate: throughput against latency as the rate grows."""
    data = []
    for i, (name, r) in enumerate(results.items()):
        probes = _sorted_probes(r)
        colour = COLOURS[i % len(COLOURS)]
        rates = [p.rate_rps for p in probes]
        data.append({"type": "scatter", "mode": "lines+markers", "name": esc(f"{name}: goodput"), "x": rates,
                     "y": [p.goodput_rps for p in probes], "line": {"color": colour}, "legendgroup": str(i),
                     "hovertemplate": "%{x:.4g} req/s offered: goodput %{y:.4g} req/s<extra></extra>"})
        data.append({"type": "scatter", "mode": "lines+markers", "name": esc(f"{name}: p90 TTFT"), "x": rates,
                     "y": [p.ttft_p90_s for p in probes], "xaxis": "x2", "yaxis": "y2", "legendgroup": str(i),
                     "line": {"color": colour}, "hovertemplate": "%{x:.4g} req/s: p90 TTFT %{y:.3g} s<extra></extra>"})
        data.append({"type": "scatter", "mode": "lines+markers", "name": esc(f"{name}: p90 TPOT"), "x": rates,
                     "y": [p.tpot_p90_s for p in probes], "xaxis": "x2", "yaxis": "y2", "legendgroup": str(i),
                     "line": {"color": colour, "dash": "dot"},
                     "hovertemplate": "%{x:.4g} req/s: p90 TPOT %{y:.3g} s<extra></extra>"})
    lay = layout("Goodput and tail latency versus arrival rate",
                 xaxis={"domain": [0, 0.45], "type": "log", "title": {"text": "arrival rate (req/s)"}},
                 yaxis={"title": {"text": "goodput (req/s meeting the SLO)"}},
                 xaxis2={"domain": [0.55, 1], "type": "log", "anchor": "y2", "title": {"text": "arrival rate (req/s)"},
                         "gridcolor": "#e6e9ee"},
                 yaxis2={"anchor": "x2", "type": "log", "title": {"text": "p90 latency (s)"}, "gridcolor": "#e6e9ee"})
    return {"data": data, "layout": lay}


def _opt(x, fmt) -> str:
    return "-" if x is None else fmt(x)


def capacity_section(results: dict, traffic: str = "", title: str = "Capacity under the SLO") -> Section:
    from ..simulator.capacity import slo_label, verdict
    s = Section("capacity", title)
    first = next(iter(results.values()), None)
    if first is not None:
        s.html(f"<p>{esc(f'Capacity under {slo_label(first.slo)}' + (f'; {traffic}' if traffic else ''))}</p>")
    s.html(table(["configuration", "capacity", "runs", "note"],
                 [[n, units.rate(r.rate_rps, "req/s", 4), str(len(r.probes)), r.note] for n, r in results.items()],
                 numeric={1, 2}))
    s.figure(capacity_bar_figure(results), height=380)
    s.figure(attainment_figure(results), height=440)
    s.figure(rate_latency_figure(results), height=440)
    rows = [[n, str(i + 1), units.rate(p.rate_rps, "req/s", 4), f"{p.attainment:.1%}",
             _opt(p.goodput_rps, lambda x: units.rate(x, "req/s")), _opt(p.ttft_p90_s, units.seconds),
             _opt(p.tpot_p90_s, units.seconds), verdict(p)]
            for n, r in results.items() for i, p in enumerate(r.probes)]
    s.html("<h3>Every probe of the search</h3>")
    s.html(table(["configuration", "run", "rate", "attainment", "goodput", "p90 TTFT", "p90 TPOT", "SLO"], rows,
                 numeric={1, 2, 3, 4, 5, 6}))
    s.html(note("Each probe simulates the same seeded traffic at one arrival rate; the search doubles the rate until "
                "a probe fails, then bisects. Attainment counts every arrived request (rejected and unfinished ones "
                "miss)."))
    return s
