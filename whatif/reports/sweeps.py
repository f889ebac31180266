"""Sweeps: throughput versus latency as the batch grows, per configuration, and the Pareto frontier over all
of them (the configurations and batches no other one beats on both)."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..specs import units
from ..errors import WhatifError
from ..scenario import Scenario
from .page import COLOURS, Section, esc, layout, note, table

MAX_POINTS = 200          # per curve drawn; a longer sweep is thinned (its Pareto points kept when few)
MAX_TABLE_ROWS = 40       # rows of the Pareto table


@dataclass(frozen=True)
class SweepPoint:
    batch: int
    ttft_s: float
    tpot_s: float
    e2e_s: float
    throughput_tok_s: float
    fits: bool


@dataclass(frozen=True)
class Sweep:
    label: str
    points: tuple[SweepPoint, ...]
    max_batch: int


def default_batches(max_batch: int) -> list[int]:
    """1, 2, 4, ... up to the max batch, and the max batch itself (just 1 when nothing fits)."""
    out, b = [], 1
    while b <= max(1, max_batch):
        out.append(b)
        b *= 2
    if max_batch > 1 and out[-1] != max_batch:
        out.append(max_batch)
    return out


def parse_batches(text: str, flag: str = "--batches") -> list[int]:
    try:
        values = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise WhatifError(f"{flag}: {text!r} must be comma-separated positive integers") from None
    if not values or values[0] < 1:
        raise WhatifError(f"{flag}: {text!r} must be comma-separated positive integers")
    return values


def batch_sweep(label: str, scenario: Scenario, max_batch: int, batches: list[int] | None = None) -> Sweep:
    """The scenario at each batch size (its own prompt and output lengths)."""
    points = []
    for b in batches or default_batches(max_batch):
        e = replace(scenario, workload=replace(scenario.workload, batch=b)).run(with_max_batch=False)
        points.append(SweepPoint(b, e.ttft_s, e.tpot_s, e.e2e_s, e.throughput_tok_s, e.memory.fits))
    return Sweep(label, tuple(points), max_batch)


def pareto(sweeps: list[Sweep]) -> list[tuple[str, SweepPoint]]:
    """Fitting points no other beats on both TPOT (lower) and throughput (higher), by increasing TPOT."""
    pts = sorted(((s.label, p) for s in sweeps for p in s.points if p.fits),
                 key=lambda lp: (lp[1].tpot_s, -lp[1].throughput_tok_s))
    out, best = [], -math.inf
    for label, p in pts:
        if p.throughput_tok_s > best:
            out.append((label, p))
            best = p.throughput_tok_s
    return out


def thin(items: list, limit: int = MAX_POINTS, keep: set[int] = frozenset()) -> list:
    """At most about `limit` items (plus those at indices `keep`), evenly spaced, the first and last kept."""
    if len(items) <= limit:
        return items
    step = math.ceil(len(items) / limit)
    return [p for i, p in enumerate(items) if i % step == 0 or i == len(items) - 1 or i in keep]


HOVER = ("<b>%{fullData.name}</b><br>batch %{customdata[0]} sequences%{customdata[1]}<br>TPOT %{x:.3g} ms, "
         "TTFT %{customdata[2]:.3g} s, E2E %{customdata[3]:.3g} s<br>throughput %{y:,.1f} tok/s<extra></extra>")


def sweep_figure(sweeps: list[Sweep], title: str = "Throughput versus TPOT over batch size") -> dict:
    front = thin(pareto(sweeps))
    on_front = {(label, p.batch) for label, p in front}
    data = []
    tpots = []
    for i, s in enumerate(sweeps):
        keep = {j for j, p in enumerate(s.points) if (s.label, p.batch) in on_front}
        pts = thin(list(s.points), keep=keep if len(keep) <= MAX_POINTS else set())
        tpots += [p.tpot_s for p in pts]
        colour = COLOURS[i % len(COLOURS)]
        data.append({"type": "scatter", "mode": "lines+markers", "name": esc(s.label),
                     "x": [p.tpot_s * 1e3 for p in pts], "y": [p.throughput_tok_s for p in pts],
                     "customdata": [[p.batch, "" if p.fits else " (does not fit)", p.ttft_s, p.e2e_s] for p in pts],
                     "hovertemplate": HOVER, "line": {"color": colour, "width": 1.5},
                     "marker": {"color": [colour if p.fits else "#fff" for p in pts], "size": 8,
                                "symbol": ["circle" if p.fits else "circle-open" for p in pts],
                                "line": {"color": colour, "width": 1.5}}})
    if front:
        data.append({"type": "scatter", "mode": "lines", "name": "Pareto frontier (fitting points)",
                     "x": [p.tpot_s * 1e3 for _, p in front], "y": [p.throughput_tok_s for _, p in front],
                     "line": {"color": "#222", "dash": "dash", "width": 2, "shape": "hv"}, "hoverinfo": "skip"})
    spread = max(tpots) / min(tpots) if tpots and min(tpots) > 0 else 1
    lay = layout(title, "TPOT (ms per output token)", "throughput (generated tok/s)",
                 xaxis={"type": "log" if spread > 20 else "linear"})
    return {"data": data, "layout": lay}


def sweep_section(sweeps: list[Sweep], title: str = "Batch sweep") -> Section:
    s = Section("sweep", title)
    s.figure(sweep_figure(sweeps), height=500)
    front = pareto(sweeps)
    if front:
        shown = thin(front, MAX_TABLE_ROWS)
        rows = [[label, f"{p.batch} seqs", units.seconds(p.tpot_s), units.seconds(p.ttft_s),
                 f"{p.throughput_tok_s:,.1f} tok/s"] for label, p in shown]
        s.html("<h3>Pareto frontier</h3>")
        s.html(table(["configuration", "batch", "TPOT", "TTFT", "throughput"], rows))
        if len(shown) < len(front):
            s.html(note(f"{len(shown)} of the frontier's {len(front)} points, evenly spaced."))
    unfit = [sw.label for sw in sweeps if sw.max_batch == 0]
    s.html(note("Each curve runs the configuration at batch 1, 2, 4, ... up to its max batch (the largest that fits), "
                "same prompt and output lengths. Throughput counts generated tokens over the batch's end-to-end time "
                "(prefill included). Open markers do not fit in memory."
                + (f" Nothing fits for: {', '.join(unfit)}." if unfit else "")))
    return s
