"""Reading a user's YAML or JSON file safely: the one place every input file is decoded and parsed.

Safe loading only (python tags are refused), UTF-8 with a clear error, and limits that keep a hostile or
broken file from hanging or exhausting memory: file size, nesting depth, alias count (a "billion laughs"
file expands exponentially through aliases), total nodes, string length and integer digits. Keys must be
strings and numbers finite. Every error is one line naming the file (and the field or line).
"""
from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

from ..errors import WhatifError, shown

MAX_FILE_BYTES = 20_000_000      # 20 MB: the largest shipped data file is under 1 MB
MAX_DEPTH = 32                   # nesting of mappings/lists; the shipped profiles use 5
MAX_ALIASES = 50                 # YAML aliases (*name) per file; the shipped files use none
MAX_NODES = 200_000              # values in one file, aliases followed; the largest shipped file has 1,838
MAX_STRING = 100_000             # characters of one string value
MAX_INT_DIGITS = 30              # an integer with more digits is no count or size of anything real


def read_text(path, what: str = "file") -> str:
    """The file's text: it exists, is at most MAX_FILE_BYTES and is UTF-8 (each error names the file)."""
    path = Path(path)
    try:
        if path.is_dir():
            raise WhatifError(f"{path}: is a directory; expected a {what}")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise WhatifError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise WhatifError(f"{path}: larger than {MAX_FILE_BYTES // 1_000_000} MB; not a {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WhatifError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); expected a {what}") from None


@cache
def _limited_loader():
    """SafeLoader that counts aliases and nesting depth while composing, before anything is expanded (made on
    first use: PyYAML is imported only when a file is parsed; the shipped ones load precompiled)."""
    import yaml

    class LimitedLoader(yaml.SafeLoader):
        def __init__(self, stream):
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_ALIASES:
                    raise _Limit(f"more than {MAX_ALIASES} aliases (*name); write the values out")
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise _Limit(f"nested deeper than {MAX_DEPTH} levels")
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1
    return LimitedLoader


class _Limit(Exception):
    pass


def _check_tree(data, where: str, int_keys: bool = False, non_finite: bool = False) -> None:
    """Keys are strings (or ints with `int_keys`), integers short, floats finite (unless `non_finite`), strings
    bounded, and not too many values in all."""
    stack, seen = [(data, where, 0)], 0
    while stack:
        value, at, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            raise WhatifError(f"{where}: more than {MAX_NODES:,} values (aliases expanding?); not a whatif file")
        if depth > MAX_DEPTH:
            raise WhatifError(f"{at}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str) and not (int_keys and type(key) is int):
                    raise WhatifError(f"{at}: key {shown(key)} is not a string (a null or number key?); "
                                      f"field names are text")
                stack.append((item, f"{at}.{key}" if len(at) < 200 else at, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, f"{at}[{i}]", depth + 1) for i, item in enumerate(value))
        elif isinstance(value, bool):
            pass
        elif isinstance(value, int):
            if value.bit_length() > MAX_INT_DIGITS * 3.33:
                raise WhatifError(f"{at}: {shown(value)}: an integer of more than {MAX_INT_DIGITS} digits is no "
                                  f"count or size of anything real")
        elif isinstance(value, float):
            if not math.isfinite(value) and not non_finite:
                raise WhatifError(f"{at}: {value!r} is not a finite number")
        elif isinstance(value, str):
            if len(value) > MAX_STRING:
                raise WhatifError(f"{at}: a string of {len(value):,} characters; valid: at most {MAX_STRING:,}")
        elif value is not None and not isinstance(value, (str,)):
            # dates and binary from YAML's safe tags: no whatif field takes them
            raise WhatifError(f"{at}: {shown(value)} ({type(value).__name__}) is not valid here; "
                              f"valid: text, numbers, true/false, lists and mappings")


def parse_yaml(text: str, name: str, shipped: bool = False):
    """Parse YAML text with the limits above; `name` is the file as named in errors. `shipped`: one of
    whatif's own files (inside the package), read by libyaml's safe loader where PyYAML has it (8x faster
    than the pure-Python one: start-up reads several) and not walked again for the limits, which guard
    users' files (tests/test_shipped_yaml.py holds every shipped file to them)."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if shipped else _limited_loader()
    try:
        data = yaml.load(text, Loader=loader)   # noqa: S506 (safe loaders only)
    except _Limit as exc:
        raise WhatifError(f"{name}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise WhatifError(f"{name}:{at}: malformed YAML ({problem})") from None
    except (RecursionError, ValueError, OverflowError) as exc:
        raise WhatifError(f"{name}: malformed YAML ({type(exc).__name__})") from None
    if not shipped:
        _check_tree(data, name)
    return data


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text):,} digits (more than {MAX_INT_DIGITS} digits)")
    return int(text)


def _json_constant(text: str):
    raise ValueError(f"{text} is not a finite number")


def parse_json(text: str, name: str, non_finite: bool = False):
    """Parse JSON text: integers of at most MAX_INT_DIGITS digits, no NaN/Infinity (kept as floats with
    `non_finite`: a reader that refuses them in the fields it uses), bounded depth."""
    try:
        data = json.loads(text, parse_int=_json_int, parse_constant=float if non_finite else _json_constant)
    except json.JSONDecodeError as exc:
        raise WhatifError(f"{name}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, ValueError) else "nested too deep"
        raise WhatifError(f"{name}: {why}") from None
    _check_tree(data, name, non_finite=non_finite)
    return data


def load_mapping(path, what: str = "YAML file", shipped: bool = False) -> dict:
    """A YAML (or .json) file whose top level is a mapping, checked as above. `shipped`: a file inside the
    package (parse_yaml); only those may key tables by integer (collective_fit.yaml's GPU counts)."""
    path = Path(path)
    text = read_text(path, what)
    data = (parse_json(text, str(path)) if path.suffix.lower() == ".json"
            else parse_yaml(text, str(path), shipped))
    if not isinstance(data, dict):
        raise WhatifError(f"{path}: expected a mapping at the top level (field: value lines); got "
                          f"{type(data).__name__ if data is not None else 'an empty file'}")
    return data
