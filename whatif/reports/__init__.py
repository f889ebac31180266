"""HTML reports: one self-contained page (plotly.js inlined once, works offline) per estimate, comparison,
simulation, capacity search, validation table or reproduction table; `whatif demo` builds the flagship one.

Modules, one concept each: page (the HTML shell, escaping), summary, roofline_chart, breakdowns, comparison,
sweeps, simulation, capacity, validation, reproduction, build (a page per result type), demo; output
(estimate and kernel results as JSON dicts and aligned text: the CLI's and the API's)."""
from .page import Page, Section, check_out_path

__all__ = ["Page", "Section", "check_out_path"]
