"""The HTML page flags of the commands: --report FILE, checked before any work and written after it."""
from __future__ import annotations

import importlib.util
import sys

from ..errors import WhatifError


def add_report_flag(p) -> None:
    p.add_argument("--report", metavar="FILE",
                   help="also write the result as one self-contained HTML page (charts, works offline) to FILE")


def start_report(path: str | None, flag: str = "--report") -> None:
    """Before any work: the page can be written at `path` and plotly (which draws it) is installed."""
    if path is None:
        return
    if importlib.util.find_spec("plotly") is None:
        raise WhatifError(f"{flag} needs the plotly package: pip install 'whatif[report]'")
    from ..reports.page import check_out_path
    check_out_path(path, flag)


def write_report(page, path: str, flag: str = "--report", stream=None) -> int:
    """Write `page` to `path` and say so on `stream` (default stderr: stdout keeps the command's own output)."""
    from ..specs.units import nbytes
    size = page.write(path, flag)
    print(f"report: {path} ({nbytes(size)}, {page.figures} charts)", file=stream or sys.stderr)
    return size
