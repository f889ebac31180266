"""Configuration search (`whatif search --report`): the frontier of tokens/s per GPU against tokens/s per user with
the TPOT target's region, the chosen configuration highlighted, and why the others were rejected."""
from __future__ import annotations

from ..specs import units
from .page import Page, Section, definitions, esc, layout, note, table

MAX_POINTS = 4000     # feasible configurations drawn (an even sample beyond; the frontier is always drawn)


def _sample(configs: list, limit: int) -> list:
    step = max(1, -(-len(configs) // limit))
    return configs[::step]


def _hover(c) -> str:
    return esc(f"{c.label()} on {c.hardware}<br>TTFT {units.seconds(c.ttft_s)}, TPOT {units.seconds(c.tpot_s)}, "
               f"{c.gpus} GPUs, {c.tok_s:,.0f} tok/s" + (f"<br>{c.reason}" if c.reason else ""))


def _points(configs: list, name: str, colour: str, symbol: str) -> dict:
    return {"type": "scatter", "mode": "markers", "name": esc(name), "x": [c.tok_s_per_user for c in configs],
            "y": [c.tok_s_per_gpu for c in configs], "text": [_hover(c) for c in configs],
            "marker": {"color": colour, "symbol": symbol, "size": 6, "opacity": 0.55},
            "hovertemplate": "%{text}<br>%{x:.3g} tok/s/user, %{y:.3g} tok/s/GPU<extra></extra>"}


def frontier_figure(result) -> dict:
    feasible = [c for c in result.configs if c.feasible]
    data = []
    for status, colour in (("ok", "#2ca02c"), ("misses SLO", "#9aa3b1")):
        for mode, symbol in (("aggregated", "circle"), ("disaggregated", "diamond")):
            group = [c for c in feasible if c.status == status and c.mode == mode]
            if group:
                label = f"{mode}, {'meets the SLOs' if status == 'ok' else 'misses an SLO'}"
                data.append(_points(_sample(group, MAX_POINTS // 4), label, colour, symbol))
    front = result.frontier
    data.append({"type": "scatter", "mode": "lines+markers", "name": "Pareto frontier",
                 "x": [c.tok_s_per_user for c in front], "y": [c.tok_s_per_gpu for c in front],
                 "text": [_hover(c) for c in front], "line": {"color": "#1f77b4", "shape": "hv"},
                 "marker": {"size": 7, "color": "#1f77b4"},
                 "hovertemplate": "%{text}<br>%{x:.3g} tok/s/user, %{y:.3g} tok/s/GPU<extra></extra>"})
    best = result.best
    if best is not None:
        data.append({"type": "scatter", "mode": "markers", "name": "best under the SLOs",
                     "x": [best.tok_s_per_user], "y": [best.tok_s_per_gpu], "text": [_hover(best)],
                     "marker": {"symbol": "star", "size": 18, "color": "#d62728",
                                "line": {"color": "#000", "width": 1}},
                     "hovertemplate": "%{text}<extra>best</extra>"})
    shapes = []
    tpot = result.space.slo.tpot_s
    if tpot is not None and feasible:
        right = max(c.tok_s_per_user for c in feasible) * 1.2
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": 1 / tpot, "x1": max(right, 1.2 / tpot),
                       "y0": 0, "y1": 1, "fillcolor": "#2ca02c", "opacity": 0.07, "line": {"width": 0}})
    return {"data": data, "layout": layout("Tokens/s per GPU against tokens/s per user (shaded: meets the TPOT target)",
                                           "tokens/s per user (1 / TPOT)", "output tokens/s per GPU",
                                           xaxis={"type": "log"}, shapes=shapes)}


def _row(c, best: bool = False) -> list[str]:
    return [("* " if best else "") + c.mode, c.label(), c.hardware, str(c.gpus), units.seconds(c.ttft_s),
            units.seconds(c.tpot_s),
            f"{c.tok_s_per_user:,.1f}", f"{c.tok_s_per_gpu:,.1f}", f"{c.tok_s:,.0f}",
            "yes" if c.status == "ok" else c.reason]


def search_section(result) -> Section:
    s = Section("search", "Configuration search")
    sp, counts, best = result.space, result.counts(), result.best
    slo = ", ".join(f"{n} <= {units.seconds(v)}" for n, v in (("TTFT", sp.slo.ttft_s), ("TPOT", sp.slo.tpot_s),
                                                               ("E2E", sp.slo.e2e_s)) if v is not None) or "none"
    s.html(definitions([("model", sp.model), ("pool", f"{', '.join(sp.hardware)}, at most {sp.gpu_budget} GPUs"),
                        ("workload", f"prompt {sp.prompt:,} / output {sp.output:,} tokens"), ("SLOs", slo),
                        ("searched", f"{len(result.configs):,} configurations from {result.replica_setups} "
                                     f"replica setups ({result.estimates} roofline estimates)"),
                        ("verdicts", ", ".join(f"{n:,} {k}" for k, n in counts.items())),
                        ("best", f"{best.mode} {best.label()}: {best.tok_s_per_gpu:,.1f} tok/s/GPU"
                         + (" (the highest simulated goodput; * in the tables)" if result.rechecked else "")
                         if best else "none meets the SLOs")]))
    s.figure(frontier_figure(result), height=520)
    s.html(note("Steady-state serving model (whatif/config_search/configs.py): aggregated TPOT includes the prefills "
                "of the requests that replace finished ones; a disaggregated cluster serves its slower pool's rate. "
                f"At most {MAX_POINTS:,} configurations are drawn (an even sample); the tables and --csv hold all."))
    headers = ["mode", "configuration", "hardware", "GPUs", "TTFT", "TPOT", "tok/s/user", "tok/s/GPU", "tok/s",
               "meets SLOs"]
    s.html("<h3>Pareto frontier</h3>")
    shown = list(result.frontier) + ([best] if best is not None and not any(c is best for c in result.frontier)
                                     else [])      # a best the simulator picked off the frontier is shown too
    s.html(table(headers, [_row(c, c is best) for c in shown], numeric={3, 4, 5, 6, 7, 8}, prose={9}))
    if result.rechecked:
        s.html("<h3>Simulator re-check (goodput: highest rate with 90% of requests meeting the SLOs)</h3>")
        s.html(table(["configuration", "GPUs", "predicted", "goodput", "goodput tok/s/GPU", "runs", "note"],
                     [[r["config"].label(), str(r["config"].gpus), units.rate(r["predicted_req_s"], "req/s"),
                       (">= " if r.get("capped") else "") + units.rate(r["goodput_req_s"], "req/s"),
                       f"{r['goodput_per_gpu_tok_s']:,.1f}", str(r["runs"]),
                       "; ".join(x for x in (r["note"], r.get("caveat", "")) if x)] for r in result.rechecked],
                     numeric={1, 2, 3, 4, 5}, prose={6}))
    reasons = result.reasons()
    if reasons:
        s.html("<h3>Rejected, and why</h3>")
        s.html(table(["reason", "configurations", "example"], [[k, f"{n:,}", e] for k, n, e in reasons],
                     numeric={1}, prose={2}))
    return s


def search_page(result) -> Page:
    sp = result.space
    page = Page(f"whatif search: {sp.model} on {', '.join(sp.hardware)}",
                [f"at most {sp.gpu_budget} GPUs; prompt {sp.prompt:,} / output {sp.output:,} tokens"])
    page.add(search_section(result))
    return page
