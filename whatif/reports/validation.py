"""Validation: predicted versus measured kernel times, with error bands, and the error by kernel family and
regime.

The input is a list of `Measurement`s (validate/table.py: the one measurement schema and reader; one row per
measured kernel with the prediction beside it). Statistics use every row (validate/accuracy.py computes them);
the scatter draws at most MAX_POINTS_PER_FAMILY rows of each family (an even stride), so the page stays small."""
from __future__ import annotations

import numpy as np

from ..specs import units
from ..validate.accuracy import error_stats, grouped
from ..validate.table import Measurement, read_measurements, write_measurements  # noqa: F401 (re-exported)
from .page import COLOURS, Section, esc, layout, note, table

MAX_POINTS_PER_FAMILY = 800
BANDS = (0.10, 0.25)             # relative error bands drawn around y = x


# ---------------------------------------------------------------- statistics (validate/accuracy.py computes them)

def _stat_row(name: list[str], st: dict) -> list[str]:
    return [*name, f"{st['n']:,}", f"{st['mape']:.1%}", f"{st['median_abs']:.1%}", f"{st['median_signed']:+.1%}",
            f"{st['within_10']:.0%}", f"{st['within_25']:.0%}", f"{st['worst']:+.0%}"]


STAT_HEADERS = ["n", "MAPE", "median |error|", "median error (bias)", "within 10%", "within 25%", "worst"]


# ---------------------------------------------------------------- figures

def _stride(rows: list, limit: int) -> list:
    if len(rows) <= limit:
        return rows
    step = len(rows) / limit
    return [rows[int(i * step)] for i in range(limit)]


def scatter_figure(rows: list[Measurement], limit: int = MAX_POINTS_PER_FAMILY) -> dict:
    data = []
    lo = min(min(r.measured_s, r.predicted_s) for r in rows)
    hi = max(max(r.measured_s, r.predicted_s) for r in rows)
    lo, hi = lo / 1.5, hi * 1.5
    xs = [lo * 1e6, hi * 1e6]
    for band in reversed(BANDS):
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": [x * (1 - band) for x in xs],
                     "line": {"width": 0}, "showlegend": False, "hoverinfo": "skip"})
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": [x * (1 + band) for x in xs],
                     "fill": "tonexty", "line": {"width": 0}, "name": f"within +/-{band:.0%}", "hoverinfo": "skip",
                     "fillcolor": f"rgba(44,160,44,{0.10 if band == BANDS[-1] else 0.18})"})
    data.append({"type": "scatter", "mode": "lines", "x": xs, "y": xs, "name": "predicted = measured",
                 "line": {"color": "#222", "width": 1}, "hoverinfo": "skip"})
    for i, ((family,), mine) in enumerate(grouped(rows, lambda r: (r.family,)).items()):
        shown = _stride(mine, limit)
        data.append({"type": "scatter", "mode": "markers", "name": esc(f"{family} ({len(mine):,})"),
                     "x": [r.measured_s * 1e6 for r in shown], "y": [r.predicted_s * 1e6 for r in shown],
                     "customdata": [round(100 * r.error, 1) for r in shown],
                     "hovertemplate": "%{fullData.name}<br>measured %{x:.3g} us, predicted %{y:.3g} us<br>"
                                      "error %{customdata:+.1f}%<extra></extra>",
                     "marker": {"color": COLOURS[i % len(COLOURS)], "size": 4, "opacity": 0.6}})
    lay = layout("Predicted versus measured kernel time", "measured (us)", "predicted (us)",
                 xaxis={"type": "log"}, yaxis={"type": "log"})
    return {"data": data, "layout": lay}


def error_figure(rows: list[Measurement]) -> dict:
    """Signed error by family and regime as box plots from precomputed quartiles (whiskers: 5th-95th pct)."""
    groups = grouped(rows, lambda r: (r.family, r.regime))
    names, stats = [], {"q1": [], "median": [], "q3": [], "lowerfence": [], "upperfence": []}
    for (family, regime), mine in groups.items():
        e = 100 * np.array([r.error for r in mine])
        names.append(esc(f"{family}: {regime} ({len(mine):,})"))
        for key, q in (("lowerfence", 5), ("q1", 25), ("median", 50), ("q3", 75), ("upperfence", 95)):
            stats[key].append(float(np.percentile(e, q)))
    data = [{"type": "box", "orientation": "h", "y": names, **{k: v for k, v in stats.items()},
             "name": "signed error", "marker": {"color": "#1f77b4"}, "showlegend": False}]
    lay = layout("Error by kernel family and regime (box: quartiles; whiskers: 5th-95th percentile)",
                 "prediction error, (predicted - measured) / measured (%)", "",
                 yaxis={"automargin": True, "autorange": "reversed"},
                 shapes=[{"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1,
                          "line": {"color": "#222", "width": 1}}])
    return {"data": data, "layout": lay}


def validation_section(rows: list[Measurement], source: str) -> Section:
    s = Section("validation", "Validation: predicted versus measured")
    if not rows:
        return s.html(note("No measurements."))
    st = error_stats(rows)
    s.html(f"<p>{esc(source)}: {st['n']:,} measured kernels; MAPE {st['mape']:.1%}, median |error| "
           f"{st['median_abs']:.1%}, {st['within_25']:.0%} within 25%.</p>")
    s.figure(scatter_figure(rows), height=560)
    groups = grouped(rows, lambda r: (r.family, r.regime))
    s.figure(error_figure(rows), height=max(320, 80 + 26 * len(groups)))
    by_split = grouped(rows, lambda r: (r.gpu, r.split or "-", r.family))
    s.html("<h3>Error by GPU, split and kernel family</h3>")
    s.html(table(["GPU", "split", "family", *STAT_HEADERS],
                 [_stat_row(list(k), error_stats(v)) for k, v in by_split.items()], numeric=set(range(3, 10))))
    s.html("<h3>Error by kernel family and regime</h3>")
    s.html(table(["family", "regime", *STAT_HEADERS],
                 [_stat_row(list(k), error_stats(v)) for k, v in groups.items()], numeric=set(range(2, 9))))
    shown = sum(min(len(v), MAX_POINTS_PER_FAMILY) for v in grouped(rows, lambda r: (r.family,)).values())
    s.html(note(f"Error = (predicted - measured) / measured. 'train' rows are the ones the default efficiency fit "
                f"saw; 'held-out' ones it did not. The scatter draws {shown:,} of the {len(rows):,} rows (an even "
                f"stride per family, at most {MAX_POINTS_PER_FAMILY:,} each); the statistics use all of them. "
                f"Times span {units.seconds(min(r.measured_s for r in rows))} to "
                f"{units.seconds(max(r.measured_s for r in rows))}."))
    return s
