"""The one accuracy scorer (`score`, `error_stats`): predicted versus measured per kernel family and regime
(MAPE, median, worst with the worst shapes named), re-predicted under the chosen efficiency model, for
`whatif validate report` (a text table, the CSV that `whatif report --measurements` plots, an HTML page),
calibration's held-out figures and the benchmarks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..roofline.timing import time_op
from .table import Measurement, Row, measurement

WORST_NAMED = 3      # worst shapes named per group


@dataclass(frozen=True)
class Scored:
    row: Row
    predicted_s: float

    @property
    def error(self) -> float:
        return (self.predicted_s - self.row.measured_s) / self.row.measured_s


@dataclass(frozen=True)
class GroupStats:
    family: str
    regime: str
    split: str
    rows: int
    mape: float
    median_abs: float
    median_signed: float
    worst: tuple[Scored, ...]   # largest |error| first


def error_stats(rows) -> dict:
    """Error statistics of rows that have a signed relative `error` (Scored rows, or the report's Measurements)."""
    e = np.array([r.error for r in rows])
    a = np.abs(e)
    return {"n": len(rows), "mape": float(a.mean()), "median_abs": float(np.median(a)),
            "median_signed": float(np.median(e)), "within_10": float((a <= 0.10).mean()),
            "within_25": float((a <= 0.25).mean()), "worst": float(e[np.argmax(a)])}


def abs_error_stats(abs_errors) -> dict:
    """MAPE, median and p90 of absolute relative errors given as an array (the corpus fits' form); NaN
    entries (rows a model could not time) are left out."""
    a = np.asarray(abs_errors, dtype=float)
    a = a[~np.isnan(a)]
    if not len(a):
        return {"n": 0, "mape": float("nan"), "median": float("nan"), "p90": float("nan")}
    return {"n": int(len(a)), "mape": float(a.mean()), "median": float(np.median(a)),
            "p90": float(np.percentile(a, 90))}


def ape_table(frame, predicted: dict, by, stats: dict, label="{name}_{stat}", measured: str = "latency_s"):
    """Absolute % error of each predicted column against `measured`, per group of `by` (columns or arrays):
    predicted maps column -> name, stats maps stat name -> pandas aggregation; one column per name x stat,
    labelled by `label`. The fitted kernel tables' summary (benchmarks/accuracy_moe.py, accuracy_modern.py)."""
    import pandas as pd
    cols = []
    for column, name in predicted.items():
        ape = (frame[column] / frame[measured] - 1).abs() * 100
        cols.append(ape.groupby(by).agg(list(stats.values())).set_axis(
            [label.format(name=name, stat=stat) for stat in stats], axis=1))
    return pd.concat(cols, axis=1).round(1)


def grouped(rows: list, key) -> dict[tuple, list]:
    """`rows` grouped by key(row), groups in sorted key order."""
    out: dict[tuple, list] = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return dict(sorted(out.items()))


def score(rows: list[Row], efficiency_for) -> list[Scored]:
    """Each timed row with its prediction under efficiency_for(gpu_name) -> (gpu, Efficiency)."""
    out = []
    for r in rows:
        if r.ok:
            gpu, eff = efficiency_for(r.gpu)
            out.append(Scored(r, time_op(r.op(), gpu, eff).time_s))
    return out


def group_stats(scored: list[Scored]) -> list[GroupStats]:
    out = []
    for (family, regime, split), mine in grouped(scored, lambda s: (s.row.family, s.row.regime, s.row.split)).items():
        st = error_stats(mine)
        worst = tuple(sorted(mine, key=lambda s: -abs(s.error))[:WORST_NAMED])
        out.append(GroupStats(family, regime, split, st["n"], st["mape"], st["median_abs"], st["median_signed"], worst))
    return out


def overall(scored: list[Scored], split: str | None = None) -> dict:
    mine = [s for s in scored if split is None or s.row.split == split]
    if not mine:
        return {"rows": 0}
    st = error_stats(mine)
    return {"rows": st["n"], **{k: st[k] for k in ("mape", "median_abs", "within_10", "within_25")}}


def text_table(stats: list[GroupStats]) -> str:
    head = f"{'family':<20} {'regime':<14} {'split':<9} {'rows':>5} {'MAPE':>7} {'median':>7} {'bias':>7}  worst"
    lines = [head, "-" * len(head)]
    for g in stats:
        w = g.worst[0]
        lines.append(f"{g.family:<20} {g.regime:<14} {g.split:<9} {g.rows:>5} {g.mape:>7.1%} {g.median_abs:>7.1%} "
                     f"{g.median_signed:>+7.1%}  {w.error:+.0%} {w.row.kernel}")
    return "\n".join(lines)


def worst_lines(scored: list[Scored], n: int = 10) -> list[str]:
    """The n worst rows overall, named with shape, measured and predicted time."""
    lines = []
    for s in sorted(scored, key=lambda s: -abs(s.error))[:n]:
        lines.append(f"{s.error:+7.1%}  {s.row.kernel} [{s.row.regime}, {s.row.split}]: measured "
                     f"{s.row.measured_s * 1e6:.3g} us, predicted {s.predicted_s * 1e6:.3g} us")
    return lines


def as_measurements(scored: list[Scored]) -> list[Measurement]:
    """The scored rows in the shape the HTML report's validation section plots."""
    return [measurement(s.row, s.predicted_s) for s in scored]
