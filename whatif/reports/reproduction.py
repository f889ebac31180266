"""The reproduction table: each paper claim's figure against whatif's prediction for the same setup (the
claims in whatif/claims, as benchmarks/reproduce.py evaluates them into docs/reproduction.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .page import Section, esc, layout, note, table


@dataclass(frozen=True)
class ReproRow:
    family: str
    technique: str
    paper: str
    metric: str
    unit: str
    baseline: float
    predicted: float
    gain: float
    claimed: float | None
    band: tuple[float, float] | None
    in_band: bool | None
    why: str
    scored: bool = True               # False: conditional, illustrative or no figure (claims/claim.py's kinds)
    kind: str = "scored"

    @property
    def ratio(self) -> float | None:
        return self.gain / self.claimed if self.claimed else None


def evaluate_claims(claims: list | None = None) -> list[ReproRow]:
    """Evaluate (family, claim) pairs (default: every claim of every family module) into rows."""
    import importlib

    from ..claims import evaluate
    from ..claims.claim import FAMILY_MODULES, metric_unit
    if claims is None:
        claims = [(module.split("_")[1].upper(), c) for module in FAMILY_MODULES
                  for c in importlib.import_module(f"whatif.claims.{module}").CLAIMS]
    rows = []
    for family, c in claims:
        o = evaluate(c)
        lead = (f"Miss: {c.miss}. " if c.miss else f"Illustrative: {c.not_scored_because}. "
                if c.kind == "illustrative" else f"Conditional on {c.assumed.name}. " if c.assumed else "")
        rows.append(ReproRow(family, c.technique, c.paper, c.metric, metric_unit(c.metric), o.baseline, o.predicted,
                             o.gain, c.claimed, c.effective_band, o.in_band,
                             lead + c.why + (f" Setup: {c.setup_note}" if c.setup_note else ""), c.scored, c.kind))
    return rows


def _x(v: float | None) -> str:
    return "-" if v is None or not math.isfinite(v) else f"{v:.2f}x"


def scatter_figure(rows: list[ReproRow]) -> dict:
    shown = [r for r in rows if r.claimed and math.isfinite(r.gain) and r.gain > 0]
    groups = (("inside its band", "#2ca02c", lambda r: r.in_band is True),
              ("outside its band", "#d62728", lambda r: r.in_band is False),
              ("reported only (no band)", "#7f7f7f", lambda r: r.in_band is None))
    data = []
    values = [r.gain for r in shown] + [r.claimed for r in shown] or [1.0]
    lo, hi = min(values) / 1.3, max(values) * 1.3
    data.append({"type": "scatter", "mode": "lines", "x": [lo, hi], "y": [lo, hi], "name": "whatif = paper",
                 "line": {"color": "#222", "width": 1}, "hoverinfo": "skip"})
    for name, colour, test in groups:
        mine = [r for r in shown if test(r)]
        if not mine:
            continue
        data.append({"type": "scatter", "mode": "markers", "name": f"{name} ({len(mine)})",
                     "x": [r.claimed for r in mine], "y": [r.gain for r in mine],
                     "text": [esc(f"{r.technique} ({r.family}): {r.metric}") for r in mine],
                     "hovertemplate": "%{text}<br>paper %{x:.3g}x, whatif %{y:.3g}x<extra></extra>",
                     "marker": {"color": colour, "size": 9, "opacity": 0.8}})
    lay = layout("Paper's claimed gain versus whatif's predicted gain", "paper's figure (x, > 1 is better)",
                 "whatif's gain (x, > 1 is better)", xaxis={"type": "log"}, yaxis={"type": "log"})
    return {"data": data, "layout": lay}


def reproduction_section(rows: list[ReproRow]) -> Section:
    from ..claims.claim import metric_text
    s = Section("reproduction", "Reproduction: paper claims versus predictions")
    scored = [r for r in rows if r.scored]
    n_in = sum(r.in_band is True for r in scored)
    conditional = sum(r.kind == "conditional" for r in rows)
    s.html(f"<p>{len(rows)} claims; {len(scored)} scored (bands from the paper's figure), {n_in} of them inside "
           f"their band; {conditional} conditional on an assumed input; {len(rows) - len(scored) - conditional} "
           "illustrative or without a figure, shown and not counted.</p>")
    s.figure(scatter_figure(rows), height=520)
    cells = []
    for r in rows:
        band = "-" if r.band is None else f"{r.band[0]:g}-{r.band[1]:g}"
        status = ("-" if r.in_band is None else '<span class="good">ok</span>' if r.in_band
                  else '<span class="bad">MISS</span>')
        cells.append([esc(r.family), esc(r.technique), esc(r.paper), esc(r.metric),
                      esc(metric_text(r.unit, r.baseline)), esc(metric_text(r.unit, r.predicted)), esc(_x(r.gain)),
                      esc(_x(r.claimed)), esc(_x(r.ratio)),
                      esc(band), status, esc(r.why)])
    s.html(table(["family", "technique", "paper claim", "metric", "baseline", "with technique", "whatif gain",
                  "claimed", "ratio", "band", "in band", "why they differ"], cells, numeric={4, 5, 6, 7, 8},
                 raw=set(range(12)), prose={2, 11}))
    s.html(note("Each claim's setup is built as a whatif scenario (closest model and hardware); the gain is oriented "
                "so that > 1 means the technique is better, as papers report 'N x'. Efficiency: the default model "
                "(fitted on public kernel timings; see the scenario pages for its provenance). A miss is explained, "
                "never tuned away (docs/reproduction.md has the setups)."))
    return s
