"""The HTML shell of a report: one self-contained page, plotly.js inlined once, every user string escaped.

A figure is a plain plotly dict ({"data": [...], "layout": {...}}): it is serialised once, with floats
rounded to a few significant digits and `<`, `>`, `&` written as JSON escapes, so no text inside a figure
can close the script that holds it. Text outside figures goes through `esc` (html.escape)."""
from __future__ import annotations

import html
import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..errors import WhatifError
from ..specs import units

FLOAT_DIGITS = 4        # significant digits kept in figure data (sizes stay small; the eye cannot see more)
PLOT_CONFIG = {"responsive": True, "displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 32px}
header h1{margin:0 0 6px;font-size:22px}
header p{margin:2px 0;color:#c9cfdb;font-size:13px}
nav{padding:8px 32px;background:#e8ebf0;font-size:14px;position:sticky;top:0;z-index:5}
nav a{margin-right:16px;color:#1d4f91;text-decoration:none}
main{padding:8px 32px 40px;max-width:1400px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;margin:18px 0;padding:14px 20px}
h2{font-size:18px;margin:4px 0 10px}
h3{font-size:15px;margin:16px 0 6px}
p.note{color:#555d6b;font-size:13px;margin:6px 0}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
div.scroll{overflow-x:auto;max-width:100%}
th,td{border-bottom:1px solid #e4e7ec;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f0f2f5}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.prose{min-width:260px}
.bad{color:#b3261e;font-weight:600}
.good{color:#1b7f3b}
.whatif-figure{width:100%;min-height:420px}
.whatif-figure.failed{color:#b3261e;min-height:0}
dl.kv{display:grid;grid-template-columns:max-content auto;gap:2px 16px;font-size:14px;margin:6px 0}
dl.kv dt{color:#555d6b}
dl.kv dd{margin:0}
"""

RENDER_JS = """
function whatifPlot(id, fig) {
  var el = document.getElementById(id);
  try {
    Plotly.newPlot(el, fig.data, fig.layout, fig.config);
  } catch (e) {
    el.className += ' failed';
    el.textContent = 'This chart could not be drawn: ' + e;
    console.error(e);
  }
}
"""


def esc(text) -> str:
    """Text for HTML (element content or a quoted attribute)."""
    return html.escape(str(text), quote=True)


def clean(value):
    """A figure's data made JSON-safe and small: floats rounded to FLOAT_DIGITS significant digits, NaN and
    infinities as null, numpy scalars and arrays as plain numbers and lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return float(f"{value:.{FLOAT_DIGITS}g}")
    if isinstance(value, int):
        return value
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    if hasattr(value, "tolist"):          # numpy arrays and scalars
        return clean(value.tolist())
    return str(value)


def script_json(value) -> str:
    """JSON that can sit inside a <script> element: no '<', '>' or '&' characters, no line separators."""
    text = json.dumps(clean(value), separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def table(headers: list[str], rows: list[list], numeric: set[int] | None = None, raw: set[int] = frozenset(),
          prose: set[int] = frozenset()) -> str:
    """An HTML table; every cell is escaped except columns in `raw` (already-built HTML). Columns in `numeric`
    are right-aligned (default: all but the first); columns in `prose` hold sentences (kept wide enough)."""
    numeric = set(range(1, len(headers))) if numeric is None else numeric
    if rows:   # a column of times in one unit (units.one_time_unit), as the text tables
        rows = [list(r) for r in zip(*(col if i in raw else units.one_time_unit(list(col))
                                       for i, col in enumerate(zip(*rows))))]
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            text = cell if i in raw else esc(cell)
            cls = ' class="num"' if i in numeric else ' class="prose"' if i in prose else ""
            cells.append(f"<td{cls}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def definitions(pairs: list[tuple[str, str]]) -> str:
    """A two-column list of (term, value), both escaped."""
    return '<dl class="kv">' + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in pairs) + "</dl>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


@dataclass
class Section:
    """One titled part of a page: HTML blocks and figures, in order."""

    id: str
    title: str
    blocks: list = field(default_factory=list)   # str (HTML) or Figure

    def html(self, text: str) -> Section:
        self.blocks.append(text)
        return self

    def figure(self, fig: dict, height: int = 460) -> Section:
        self.blocks.append(Figure(fig, height))
        return self


@dataclass(frozen=True)
class Figure:
    fig: dict
    height: int


def layout(title: str, xtitle: str = "", ytitle: str = "", **more) -> dict:
    """A plotly layout with the report's defaults; axis titles carry the units."""
    base = {"title": {"text": esc(title), "x": 0.01, "xanchor": "left", "font": {"size": 15}},
            "margin": {"l": 70, "r": 20, "t": 50, "b": 60}, "template": None, "paper_bgcolor": "#fff",
            "plot_bgcolor": "#fff", "hovermode": "closest", "legend": {"orientation": "v"},
            "xaxis": {"title": {"text": xtitle}, "gridcolor": "#e6e9ee", "zeroline": False, "automargin": True},
            "yaxis": {"title": {"text": ytitle}, "gridcolor": "#e6e9ee", "zeroline": False, "automargin": True}}
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    base.pop("template")
    return base


def plotly_js() -> str:
    """plotly.js, read from the plotly package (no network, no CDN)."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise WhatifError("an HTML report needs the plotly package: pip install 'whatif[report]'") from None
    js = get_plotlyjs()
    return js.replace("</script", "<\\/script")


def plotly_version() -> str:
    try:
        import plotly
        return plotly.__version__
    except ImportError:     # pragma: no cover - plotly_js() has reported it already
        return "?"


@dataclass
class Page:
    """A report page: a title, a subtitle line or two, sections in order."""

    title: str
    subtitle: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)

    def add(self, section: Section | None) -> Section | None:
        if section is not None:
            self.sections.append(section)
        return section

    @property
    def figures(self) -> int:
        return sum(isinstance(b, Figure) for s in self.sections for b in s.blocks)

    def render(self) -> str:
        from .. import __version__
        js = plotly_js()
        when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        nav = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in self.sections)
        body, n = [], 0
        for s in self.sections:
            parts = [f'<section id="{esc(s.id)}"><h2>{esc(s.title)}</h2>']
            for block in s.blocks:
                if isinstance(block, Figure):
                    n += 1
                    fig = {"data": block.fig["data"], "layout": {**block.fig["layout"], "height": block.height},
                           "config": PLOT_CONFIG}
                    parts.append(f'<div class="whatif-figure" id="fig-{n}" style="min-height:{block.height}px">'
                                 f'</div><script>whatifPlot("fig-{n}", {script_json(fig)});</script>')
                else:
                    parts.append(block)
            parts.append("</section>")
            body.append("".join(parts))
        subtitle = "".join(f"<p>{esc(line)}</p>" for line in self.subtitle)
        return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">'
                f"<title>{esc(self.title)}</title><style>{CSS}</style>"
                f"<script>/* plotly.js {esc(plotly_version())}, inlined: the page works offline */\n{js}</script>"
                f"<script>{RENDER_JS}</script></head><body>"
                f"<header><h1>{esc(self.title)}</h1>{subtitle}"
                f"<p>whatif {esc(__version__)}, {when}; a self-contained page (no network needed)</p></header>"
                f"<nav>{nav}</nav><main>{''.join(body)}</main></body></html>\n")

    def write(self, path: str, flag: str = "--report") -> int:
        """Write the page to `path`; returns its size in bytes. An unwritable path is a one-line error."""
        check_out_path(path, flag)
        text = self.render()
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise WhatifError(f"{flag}: cannot write {path!r}: {exc.strerror}") from None
        return len(text.encode("utf-8"))


def check_out_path(path: str, flag: str = "--report") -> None:
    """Before any work: the report's file can be created (its folder exists and is writable, it is no folder)."""
    if not isinstance(path, str) or not path.strip():
        raise WhatifError(f"{flag}: give a file name, e.g. report.html")
    if os.path.isdir(path):
        example = os.path.join(path, "report.html")
        raise WhatifError(f"{flag}: {path!r} is a directory; give a file name, e.g. {example}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise WhatifError(f"{flag}: cannot write {path!r}: no such directory {folder!r}")
    if (os.path.exists(path) and not os.access(path, os.W_OK)) or not os.access(folder, os.W_OK):
        raise WhatifError(f"{flag}: cannot write {path!r}: permission denied")
    from ..specs.checks import writable_file
    writable_file(path, flag, "report.html")   # probes it: /proc, /sys and over-long names fail here, before the work
