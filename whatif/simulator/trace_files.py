"""Trace files: requests read from and written to CSV or JSON-lines files (arrival, prompt and output
tokens, optional shared prefixes); errors name the file, the line and the column."""
from __future__ import annotations

import csv
import json
import math
import os

from ..errors import WhatifError, shown
from ..specs.checks import MAX_REQUESTS, MAX_SECONDS, MAX_TOKENS
from ..specs.safe_yaml import parse_json
from .request import Request

TRACE_EXTENSIONS = (".csv", ".jsonl", ".json")   # .json is read as JSON lines too
ARRIVAL_COLUMNS = ("arrival_s", "arrival_time", "timestamp")
PROMPT_COLUMNS = ("prompt_tokens", "input_tokens", "num_prefill_tokens")
OUTPUT_COLUMNS = ("output_tokens", "num_decode_tokens")
TRACE_COLUMNS = ("arrival_s", "prompt_tokens", "output_tokens", "prefix_id", "prefix_tokens", "shared_tokens")


def check_trace_path(path) -> None:
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise WhatifError(f"--trace: {path!r} must be a file path")
    if os.path.splitext(os.fspath(path))[1].lower() not in TRACE_EXTENSIONS:
        raise WhatifError(f"--trace: {os.fspath(path)!r} has an unknown extension; valid: "
                          f"{', '.join(TRACE_EXTENSIONS)}")


def read_trace(path) -> list[Request]:
    """Requests from a CSV (header row) or JSON-lines file, sorted by arrival (stable), ids 0..n-1.

    Columns: arrival_s (or arrival_time, timestamp), prompt_tokens (or input_tokens, num_prefill_tokens),
    output_tokens (or num_decode_tokens); optional prefix_id, prefix_tokens (default 0) and shared_tokens
    (default prefix_tokens). Errors name the file, the line and the column."""
    check_trace_path(path)
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise WhatifError(f"--trace: {path!r}: no such file")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(_csv_rows(f, path) if path.lower().endswith(".csv") else _json_rows(f, path))
    except UnicodeDecodeError as e:
        raise WhatifError(f"--trace {path}: not UTF-8 text ({e.reason})") from None
    except csv.Error as e:   # a field over the csv module's limit, a NUL byte
        raise WhatifError(f"--trace {path}: not a CSV trace ({shown(str(e))})") from None
    if not rows:
        raise WhatifError(f"--trace {path}: no requests in it")
    if len(rows) > MAX_REQUESTS:
        raise WhatifError(f"--trace {path}: {len(rows):,} requests; valid: at most {MAX_REQUESTS:,}")
    rows.sort(key=lambda r: r[0])   # stable: equal arrivals keep file order
    return [Request(i, *row) for i, row in enumerate(rows)]


def _csv_rows(f, path: str):
    reader = csv.reader(f)
    header = next(reader, None)
    if header is None:
        raise WhatifError(f"--trace {path} line 1: empty file; expected a header row with "
                          f"{', '.join(TRACE_COLUMNS[:3])}")
    names = [h.strip().lower() for h in header]
    index = {name: i for i, name in reversed(list(enumerate(names)))}   # the first of a repeated name wins
    columns = {c: _find_column(index, aliases, path) for c, aliases in
               (("arrival", ARRIVAL_COLUMNS), ("prompt", PROMPT_COLUMNS), ("output", OUTPUT_COLUMNS))}
    for optional in TRACE_COLUMNS[3:]:
        columns[optional] = (index[optional], optional) if optional in index else None
    columns = {key: column for key, column in columns.items() if column is not None}
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        cells = {key: (row[i] if i < len(row) else None, name) for key, (i, name) in columns.items()}
        yield _trace_row(cells, path, reader.line_num)


def _find_column(index: dict, aliases: tuple, path: str):
    for name in aliases:
        if name in index:
            return index[name], name
    raise WhatifError(f"--trace {path} line 1: no {aliases[0]} column (also accepted: {', '.join(aliases[1:])})")


def _json_rows(f, path: str):
    for line_no, line in enumerate(f, start=1):
        if not line.strip():
            continue
        obj = parse_json(line, f"--trace {path} line {line_no}")
        if not isinstance(obj, dict):
            raise WhatifError(f"--trace {path} line {line_no}: expected a JSON object, got {type(obj).__name__}")
        cells = {}
        for key, aliases in (("arrival", ARRIVAL_COLUMNS), ("prompt", PROMPT_COLUMNS), ("output", OUTPUT_COLUMNS)):
            name = next((a for a in aliases if a in obj), None)
            if name is None:
                raise WhatifError(f"--trace {path} line {line_no}: no {aliases[0]} "
                                  f"(also accepted: {', '.join(aliases[1:])})")
            cells[key] = (obj[name], name)
        for optional in TRACE_COLUMNS[3:]:
            if optional in obj:
                cells[optional] = (obj[optional], optional)
        yield _trace_row(cells, path, line_no)


def _trace_row(cells: dict, path: str, line_no: int) -> tuple:
    """(arrival_s, prompt, output, prefix_id, prefix_tokens, shared_tokens) of one trace row, checked."""
    def where(name):
        return f"--trace {path} line {line_no}, column {name}"

    arrival = _parse_number(*cells["arrival"], where)
    if not 0 <= arrival <= MAX_SECONDS:
        raise WhatifError(f"{where(cells['arrival'][1])}: {arrival:g} is out of range; valid: >= 0 and <= "
                          f"{MAX_SECONDS:g} seconds (~32 years)")
    prompt = _parse_tokens(*cells["prompt"], where, low=1)
    output = _parse_tokens(*cells["output"], where, low=1)
    prefix_id = _blank_to_none(cells.get("prefix_id", (None, ""))[0])
    if prefix_id is not None and (not isinstance(prefix_id, (str, int)) or isinstance(prefix_id, bool)
                                  or len(str(prefix_id)) > 200):
        raise WhatifError(f"{where('prefix_id')}: {shown(prefix_id)}; valid: a name or a number (at most 200 "
                          f"characters)")
    prefix_tokens = 0
    if _blank_to_none(cells.get("prefix_tokens", (None, ""))[0]) is not None:
        prefix_tokens = _parse_tokens(*cells["prefix_tokens"], where, low=0)
    shared_tokens = prefix_tokens
    if _blank_to_none(cells.get("shared_tokens", (None, ""))[0]) is not None:
        shared_tokens = _parse_tokens(*cells["shared_tokens"], where, low=0)
    if prefix_tokens > prompt:
        raise WhatifError(f"{where('prefix_tokens')}: {prefix_tokens} is more than the prompt's {prompt} tokens")
    if shared_tokens > prompt + output:
        raise WhatifError(f"{where('shared_tokens')}: {shared_tokens} is more than the request's "
                          f"{prompt + output} tokens (prompt + output)")
    return arrival, prompt, output, None if prefix_id is None else str(prefix_id), prefix_tokens, shared_tokens


def _blank_to_none(value):
    return None if value is None or (isinstance(value, str) and not value.strip()) else value


def _parse_number(value, name: str, where) -> float:
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    else:
        number = None
    if number is None or not math.isfinite(number):
        raise WhatifError(f"{where(name)}: {shown(value)} is not a finite number")
    return number


def _parse_tokens(value, name: str, where, low: int) -> int:
    if _blank_to_none(value) is None:
        raise WhatifError(f"{where(name)}: empty; expected a whole number of tokens >= {low}")
    number = _parse_number(value, name, where)
    if not number.is_integer() or not low <= number <= MAX_TOKENS:
        raise WhatifError(f"{where(name)}: {shown(value)} must be a whole number of tokens >= {low} and <= "
                          f"{MAX_TOKENS:,}")
    return int(number)


def write_trace(requests, path) -> None:
    """Write `requests` as a trace read_trace reads back to the same requests: JSON lines for .jsonl/.json,
    else CSV, in the columns TRACE_COLUMNS (arrival times written exactly, shortest round-trip repr)."""
    path = os.fspath(path)
    rows = ((r.arrival_s, r.prompt, r.output, r.prefix_id, r.prefix_tokens, r.shared_tokens) for r in requests)
    with open(path, "w", newline="", encoding="utf-8") as f:
        if path.lower().endswith((".jsonl", ".json")):
            for row in rows:
                f.write(json.dumps(dict(zip(TRACE_COLUMNS, row))) + "\n")
        else:
            writer = csv.writer(f)
            writer.writerow(TRACE_COLUMNS)
            for a, p, o, pid, pt, st in rows:
                writer.writerow((repr(float(a)), p, o, "" if pid is None else pid, pt, st))


# ---------------------------------------------------------------- description
