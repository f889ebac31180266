"""Validation: predicted versus measured kernel times, with error bands, and the error by kernel family and
regime.

The input is a measurement table: one row per measured kernel with the prediction beside it (the columns of
MEASUREMENT_COLUMNS). `vidur_measurements` builds one from the public Vidur operator timings the default
efficiency model was fitted on (reference/vidur-profiling); `read_measurements` reads one from a CSV file, the
shape a validation run on a real GPU writes. Statistics use every row; the scatter draws at most
MAX_POINTS_PER_FAMILY rows of each family (an even stride), so the page stays small."""
from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..specs import units
from ..errors import WhatifError
from ..validate.accuracy import error_stats, grouped
from .page import COLOURS, Section, esc, layout, note, table

MEASUREMENT_COLUMNS = ("gpu", "family", "kernel", "regime", "measured_s", "predicted_s", "split", "source")
REQUIRED = ("family", "measured_s", "predicted_s")
MAX_POINTS_PER_FAMILY = 800
BANDS = (0.10, 0.25)             # relative error bands drawn around y = x
ALLREDUCE_TRAIN_GPUS = (2, 8)    # as benchmarks/accuracy_reference.py: TRAIN_WORKERS (4-GPU timings held out)
SMALL_TOKENS = 64                # as benchmarks/accuracy_reference.py: regime()


@dataclass(frozen=True)
class Measurement:
    gpu: str
    family: str                  # kernel family: the op class (gemm, norm, attention_decode, comm, ...)
    kernel: str                  # the kernel's name (e.g. mlp_up_proj, all_reduce)
    regime: str                  # e.g. compute-bound, memory-bound, small (<=64 tokens), 4 GPUs <= 1 MB
    measured_s: float
    predicted_s: float
    split: str = ""              # train / held-out / "" (unknown)
    source: str = ""

    @property
    def error(self) -> float:
        """Signed relative error of the prediction: (predicted - measured) / measured."""
        return (self.predicted_s - self.measured_s) / self.measured_s


def _regime(t, tokens: int, op) -> str:
    if op.op_class == "comm":
        return f"{tokens} GPUs, " + ("<= 1 MB" if op.shape["bytes"] <= 1e6 else "> 1 MB")
    if tokens <= SMALL_TOKENS:
        return f"small (<={SMALL_TOKENS} tokens)"
    return "compute-bound" if t.compute_s >= t.memory_s else "memory-bound"


def vidur_measurements(directory: Path | None = None) -> list[Measurement]:
    """The Vidur reference timings (A100 and H100 kernels, NVSwitch all-reduces) with whatif's default-efficiency
    prediction of each, rebuilt from the shapes alone; split says whether the default fit saw it."""
    from ..specs.hardware import load_component, load_system
    from ..specs.profiles import read_yaml
    from ..roofline.efficiency import DEFAULT_FILE, default_efficiency
    from ..roofline.timing import time_op
    from ..roofline.vidur_reference import DEFAULT_DIR, GPU_NAMES, SYSTEMS, load_network_samples, load_samples
    directory = Path(directory) if directory is not None else DEFAULT_DIR
    if not directory.is_dir():
        raise WhatifError(f"--validation: the reference measurements are not in this checkout ({directory}); "
                          "give a measurement table with --measurements FILE")
    train_models = set(read_yaml(DEFAULT_FILE).get("train_models", []))
    samples, network = load_samples(directory), load_network_samples(directory)
    out = []
    for vidur_gpu, gpu_name in GPU_NAMES.items():
        gpu, system = load_component(gpu_name), load_system(SYSTEMS[vidur_gpu])
        eff = default_efficiency(gpu)
        mine = [s for s in samples if s.gpu == gpu_name] + [s for s in network if s.gpu == system.name]
        for s in mine:
            t = time_op(s.op, gpu, eff, system.gpu_link)
            comm = s.vidur_op == "all_reduce"
            train = s.tp in ALLREDUCE_TRAIN_GPUS if comm else s.model in train_models
            out.append(Measurement(gpu_name, s.op.op_class, s.vidur_op, _regime(t, s.tokens, s.op), s.measured_s,
                                   t.time_s, "train" if train else "held-out", f"vidur {s.model}"))
    return out


def _number(value: str, column: str, where: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise WhatifError(f"{where}: {column} {value!r} is not a number") from None
    if not math.isfinite(x) or x <= 0:
        raise WhatifError(f"{where}: {column} {value!r} must be a positive number of seconds")
    return x


def read_measurements(path: str) -> list[Measurement]:
    """A measurement table from CSV: columns family, measured_s, predicted_s (seconds), and optionally gpu,
    kernel, regime, split, source."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            columns = set(reader.fieldnames or [])
            missing = [c for c in REQUIRED if c not in columns]
            if missing:
                raise WhatifError(f"--measurements {path}: missing column(s) {', '.join(missing)}; the table needs "
                                  f"{', '.join(REQUIRED)} and may have {', '.join(MEASUREMENT_COLUMNS)}")
            rows = []
            for i, row in enumerate(reader, start=2):
                where = f"--measurements {path}:{i}"
                rows.append(Measurement(
                    row.get("gpu") or "", row["family"] or "?", row.get("kernel") or row["family"] or "?",
                    row.get("regime") or "all", _number(row["measured_s"], "measured_s", where),
                    _number(row["predicted_s"], "predicted_s", where), row.get("split") or "",
                    row.get("source") or Path(path).name))
    except OSError as exc:
        raise WhatifError(f"--measurements: cannot read {path!r}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise WhatifError(f"--measurements {path}: not a CSV table ({exc})") from None
    if not rows:
        raise WhatifError(f"--measurements {path}: the table has no rows")
    return rows


def write_measurements(path: str, rows: list[Measurement]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=MEASUREMENT_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))


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
