"""--csv FILE and --parquet FILE: a command's result as a table, checked before any work and written after it.

`write_rows` is the one writer: rows of {column: value} to CSV or Parquet, columns in a given order. The
columns each command writes, with units in their names, are in result_rows.py."""
from __future__ import annotations

import importlib.util
import os
import sys

from ..errors import WhatifError

FORMATS = ("csv", "parquet")


def add_table_flags(p) -> None:
    p.add_argument("--csv", metavar="FILE", help="also write the result as a table (CSV, one row per result; "
                                                 "columns in docs/tables.md, units in their names) to FILE")
    p.add_argument("--parquet", metavar="FILE", help="the same table as --csv, as Parquet (needs pyarrow: "
                                                     "pip install 'whatif[parquet]')")


def _flag_paths(args) -> list[tuple[str, str]]:
    """(format, path) of each table flag given."""
    return [(fmt, getattr(args, fmt)) for fmt in FORMATS if getattr(args, fmt, None) is not None]


def check_table_path(path: str, fmt: str) -> None:
    """Before any work: `path` can be written as `fmt` (a file in an existing folder; pyarrow for Parquet)."""
    flag = f"--{fmt}"
    if fmt not in FORMATS:
        raise WhatifError(f"table format {fmt!r}: valid: {', '.join(FORMATS)}")
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        raise WhatifError(f"{flag} needs the pyarrow package: pip install 'whatif[parquet]'")
    if not path or os.path.isdir(path):
        raise WhatifError(f"{flag}: {path!r} is a directory; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise WhatifError(f"{flag}: folder {folder!r} does not exist")


def start_tables(args) -> None:
    for fmt, path in _flag_paths(args):
        check_table_path(path, fmt)


def write_rows(rows: list[dict], path: str, fmt: str | None = None, columns: list[str] | None = None) -> int:
    """Write `rows` ({column: value}; None is an empty cell) to `path` as CSV or Parquet (`fmt`, else the file
    name's suffix: .parquet or .pq is Parquet, anything else CSV), in the order of `columns` (default: the first
    row's keys). Returns the number of rows written."""
    import pandas as pd

    fmt = fmt or ("parquet" if path.lower().endswith((".parquet", ".pq")) else "csv")
    check_table_path(path, fmt)
    frame = pd.DataFrame(rows, columns=columns if columns is not None else (list(rows[0]) if rows else []))
    try:
        if fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            frame.to_parquet(path, index=False)
    except OSError as e:
        raise WhatifError(f"--{fmt}: cannot write {path!r}: {e.strerror or e}") from None
    return len(frame)


def write_tables(args, rows: list[dict], columns: list[str], stream=None) -> None:
    """Write `rows` to every table flag given, and say so on `stream` (default stderr: stdout keeps the output)."""
    for fmt, path in _flag_paths(args):
        n = write_rows(rows, path, fmt, columns)
        print(f"{fmt}: {path} ({n} row{'s' if n != 1 else ''}, {len(columns)} columns)", file=stream or sys.stderr)
