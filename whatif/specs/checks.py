"""The field checks every input goes through (profiles, scenarios, calibration files, traces, flags).

Each check returns the value or raises a one-line WhatifError naming the field (`where`), the value (a short
prefix of it: see errors.shown) and what is valid, with the physical bound when there is one. Bounds are
stated once here (BOUNDS) so that a flag and the file field it mirrors refuse the same values.
"""
from __future__ import annotations

import contextlib
import errno
import math
import os

from ..errors import WhatifError, shown

# Upper bounds on counts, each far above any real system or model but low enough that no loop over them runs
# away (a count is checked before any work uses it).
MAX_GPUS = 1_000_000            # GPUs in one deployment (tp, pp, ep, gpus, replicas x GPUs)
MAX_PARALLEL = 4096             # tensor / pipeline / expert parallel degree of one replica
MAX_REPLICAS = 10_000           # replicas of one scenario in a simulated cluster
MAX_TOKENS = 1 << 24            # 16.8 M tokens: a prompt, an output or a context window (today's largest: 10 M)
MAX_BATCH = 1 << 30             # sequences in one batch (1.07e9; no GPU memory holds a millionth of it)
MAX_REQUESTS = 1_000_000        # requests of one simulation (a day of traffic at 10 req/s)
MAX_TURNS = 1000                # turns of one multi-turn session
MAX_LAYERS = 4096               # transformer layers (the deepest shipped model has 126)
MAX_WIDTH = 1 << 20             # hidden, intermediate, head sizes (the widest shipped: 53,248)
MAX_HEADS = 1 << 16             # attention heads, experts
MAX_VOCAB = 1 << 24
MAX_SECONDS = 1e9               # ~32 years: any time span given as input (horizons, arrivals, SLOs)
MAX_INT_DIGITS = 30             # an integer written with more digits is no count or size of anything real


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def integer(value, where: str, low: int = 1, high: int | None = None, what: str = "") -> int:
    """An int in [low, high] (not a bool, not a float); `what` names the unit or bound's reason."""
    unit = f" {what}" if what else ""
    kind = "a positive integer" if low == 1 else f"an integer >= {low}"
    top = f" <= {high:,}" if high is not None else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise WhatifError(f"{where}: {shown(value)} is not a whole number; valid: {kind}{top}{unit}")
    if value < low or (high is not None and value > high):
        raise WhatifError(f"{where}: {shown(value)} is out of range; valid: {kind}{top}{unit}")
    return value


def number(value, where: str, low: float = 0.0, high: float | None = None, unit: str = "",
           low_open: bool = False) -> float:
    """A finite int or float in [low, high] ((low, high] with low_open); `unit` is said in the message."""
    if not is_number(value):
        raise WhatifError(f"{where}: {shown(value)} is not a number")
    value = float(value) if not isinstance(value, float) else value
    if not math.isfinite(value):
        said = f" ({unit})" if unit else ""
        raise WhatifError(f"{where}: {shown(value)} is not finite; valid: a finite number{said}")
    too_low = value <= low if low_open else value < low
    if too_low or (high is not None and value > high):
        lo = f"> {low:g}" if low_open else f">= {low:g}"
        hi = f" and <= {high:g}" if high is not None else ""
        raise WhatifError(f"{where}: {value:g} is out of range; valid: {lo}{hi}" + (f" {unit}" if unit else ""))
    return value


def choice(value, valid, where: str) -> str:
    """`value` if it is one of `valid` (names), else a one-line error naming the field and the valid names."""
    if not isinstance(value, str) or value not in valid:
        raise WhatifError(f"{where}: {shown(value)} is not valid; valid: {', '.join(valid)}")
    return value


def boolean(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise WhatifError(f"{where}: {shown(value)} must be true or false")
    return value


def string(value, where: str, max_len: int = 200, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise WhatifError(f"{where}: {shown(value)} is not a string")
    if len(value) > max_len:
        raise WhatifError(f"{where}: {shown(value)} is {len(value):,} characters; valid: at most {max_len}")
    if not empty and not value.strip():
        raise WhatifError(f"{where}: empty; give a value")
    return value


def mapping(value, where: str, what: str = "a mapping") -> dict:
    if not isinstance(value, dict):
        raise WhatifError(f"{where}: expected {what}, got {shown(value)}")
    return value


# ---------------------------------------------------------------- argparse types (flags)

def _flag_type(check, name: str):
    """An argparse `type=` from a check on the parsed value; argparse names the flag in its error."""
    import argparse

    def parse(text: str):
        try:
            return check(text)
        except WhatifError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None
    parse.__name__ = name
    return parse


def _parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise WhatifError(f"value: {shown(text)} is not a number") from None


def _parse_int(text: str) -> int:
    s = text.strip()
    if len(s.lstrip("+-")) > MAX_INT_DIGITS:
        raise WhatifError(f"value: {shown(text)} has {len(s):,} digits; valid: a whole number of at most "
                          f"{MAX_INT_DIGITS} digits")
    try:
        return int(s)
    except ValueError:
        raise WhatifError(f"value: {shown(text)} is not a whole number (an integer)") from None


def flag_float(low: float = 0.0, high: float | None = None, unit: str = "", low_open: bool = False):
    """argparse type: a finite float in range (inf and nan refused)."""
    return _flag_type(lambda t: number(_parse_float(t), "value", low, high, unit, low_open), "number")


def flag_int(low: int = 1, high: int | None = None, what: str = ""):
    """argparse type: an int in range, at most MAX_INT_DIGITS digits."""
    return _flag_type(lambda t: integer(_parse_int(t), "value", low, high, what), "integer")


def int_list(text: str, where: str, high: int) -> list[int]:
    """A comma-separated list of integers in 1..high; empty or out of range is an error naming `where`."""
    parts = [x.strip() for x in text.split(",")]
    if not text.strip() or not all(parts):
        raise WhatifError(f"{where}: {shown(text)} must be comma-separated integers, e.g. 1,2,4,8")
    values = []
    for x in parts:
        if not x.isdigit() or len(x) > 9 or not 1 <= int(x) <= high:
            raise WhatifError(f"{where}: {shown(x)} is not valid; valid: integers from 1 to {high:,}")
        values.append(int(x))
    return values


def flag_int_list(high: int):
    """argparse type: a comma-separated list of integers in 1..high."""
    return _flag_type(lambda t: int_list(t, "value", high), "integers")


def _nonempty(t: str) -> str:
    if not t.strip():
        raise WhatifError("value: empty; give a value")
    return t


flag_text = _flag_type(_nonempty, "value")   # argparse type: `--kv-dtype=` is an error, not the default


SECOND_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "min": 60.0}


def seconds(text, where: str, low_open: bool = True) -> float:
    """A time: a bare number is seconds; or with a unit: 500ms, 0.5s, 20us, 2min."""
    if is_number(text):
        return number(text, where, 0.0, MAX_SECONDS, "seconds", low_open=low_open)
    if not isinstance(text, str) or not text.strip():
        raise WhatifError(f"{where}: {shown(text)} is not a time; valid: seconds, or a number with a unit "
                          f"(500ms, 0.5s, 20us, 2min)")
    s = text.strip().lower()
    for unit in sorted(SECOND_UNITS, key=len, reverse=True):
        if s.endswith(unit):   # longest first: 500ms is not 500m seconds
            body, factor = s[: -len(unit)].strip(), SECOND_UNITS[unit]
            break
    else:
        body, factor = s, 1.0
    try:
        value = float(body)
    except ValueError:
        raise WhatifError(f"{where}: {shown(text)} is not a time; valid: seconds, or a number with a unit "
                          f"(500ms, 0.5s, 20us, 2min)") from None
    return number(value * factor if math.isfinite(value) else value, where, 0.0, MAX_SECONDS, "seconds",
                  low_open=low_open)


def flag_time(text: str, where: str = "value", low_open: bool = True) -> float:
    """A time flag: a number with its unit (30ms, 0.5s, 2min), seconds returned. A bare number other than 0 is
    refused with both spellings: vLLM's `--goodput tpot:30` reads milliseconds, a scenario file's seconds."""
    bare = text.strip()
    if _finite_text(bare) and float(bare) != 0:
        spelled = (f"{bare}s (= {float(bare) * 1e3:g}ms)" if abs(float(bare)) < 1 else
                   f"{bare}ms (as vLLM's --goodput reads it) or {bare}s")
        raise WhatifError(f"{where}: {shown(text)} has no unit; write {spelled} (units: {', '.join(SECOND_UNITS)})")
    return seconds(text, where, low_open)


def _finite_text(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# Latency objectives no deployment asks for: a value outside these is most likely a unit slip (warned, not refused).
PLAUSIBLE_SLO_S = {"TTFT": (1e-3, 600.0), "TPOT": (1e-4, 1.0), "E2E": (1e-3, 3600.0)}


def implausible_slo(name: str, value: float | None, where: str) -> str | None:
    """A warning when an SLO is far outside any deployment's (e.g. a TPOT of 30 s: 30 meant as ms), else None."""
    low, high = PLAUSIBLE_SLO_S[name]
    if value is None or low <= value <= high:
        return None
    slip = f"; if {value:g}ms was meant, write {value:g}ms" if value > high else ""
    return f"{where}: a {name} objective of {value:g} s is outside {low:g}-{high:g} s, where deployments set it{slip}"


flag_seconds = _flag_type(lambda t: flag_time(t), "time")


# ---------------------------------------------------------------- one field: its flag's type and its file check

class Field:
    """What one input field takes: `kind` int, float, seconds (a number or '500ms'), text or bool, with its
    range. The same object checks a file's value (`check`) and parses the flag (`flag_type`)."""

    def __init__(self, kind: str, low: float = 0, high: float | None = None, unit: str = "",
                 low_open: bool = False):
        self.kind, self.low, self.high, self.unit, self.low_open = kind, low, high, unit, low_open

    def check(self, value, where: str):
        if self.kind == "int":
            return integer(value, where, int(self.low), None if self.high is None else int(self.high), self.unit)
        if self.kind == "float":
            return number(value, where, self.low, self.high, self.unit, self.low_open)
        if self.kind == "seconds":
            return seconds(value, where, self.low_open)
        if self.kind == "bool":
            return boolean(value, where)
        return string(value, where, max_len=4096)

    def flag_type(self):
        if self.kind == "int":
            return flag_int(int(self.low), None if self.high is None else int(self.high), self.unit)
        if self.kind == "float":
            return flag_float(self.low, self.high, self.unit, self.low_open)
        if self.kind == "seconds":
            return _flag_type(lambda t: flag_time(t, "value", self.low_open), "time")
        return flag_text


# ---------------------------------------------------------------- output paths

def is_file(path, where: str) -> bool:
    """Path(path).is_file(), with a path the file system cannot hold (a name over 255 bytes, a path over
    PATH_MAX) a one-line error instead of an OSError."""
    from pathlib import Path
    try:
        return Path(path).is_file()
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise WhatifError(f"{where}: {shown(str(path))} is longer than the file system allows (at most 255 "
                              f"characters a name)") from None
        raise WhatifError(f"{where}: cannot read {shown(str(path))} ({e.strerror or e})") from None


def writable_file(path, flag: str, example: str = "out.html") -> str:
    """Before any work: `path` names a file that can be created or overwritten. Probed by opening it for append
    (a new file is removed again), so /proc, /sys, a missing folder, a folder, or a name over the system's limit
    is a one-line error naming the path and why, not an OSError after minutes of work."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise WhatifError(f"{flag}: give a file name, e.g. {example}")
    path = os.fspath(path)
    if os.path.isdir(path):
        raise WhatifError(f"{flag}: {shown(path)} is a directory; give a file name, e.g. "
                          f"{os.path.join(path, example)}")
    existed = os.path.exists(path)
    try:
        with open(path, "a", encoding="utf-8"):
            pass
    except OSError as exc:
        why = {errno.ENAMETOOLONG: "the name is too long (at most 255 characters a name)",
               errno.ENOENT: f"no such directory {shown(os.path.dirname(os.path.abspath(path)))}",
               errno.ENOTDIR: "a part of the path is a file, not a directory"}.get(exc.errno, exc.strerror)
        raise WhatifError(f"{flag}: cannot write {shown(path)}: {why}") from None
    if not existed:
        with contextlib.suppress(OSError):
            os.remove(path)
    return path
