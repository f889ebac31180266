"""HTML reports: one self-contained page (plotly.js inlined once, works offline) per estimate, comparison,
simulation, capacity search, validation table or reproduction table; `whatif demo` builds the flagship one.

Modules, one concept each: page (the HTML shell, escaping), summary, roofline_chart, breakdowns, comparison,
sweeps, simulation, capacity, validation, reproduction, build (a page per result type), demo; output
(estimate and kernel results as JSON dicts and aligned text: the CLI's and the API's)."""
__all__ = ["Page", "Section", "check_out_path"]


def __getattr__(name):   # page.py on first use: an estimate's text output (reports.output) needs no HTML shell
    if name in __all__:
        from . import page
        return getattr(page, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
