"""Human-readable numbers with units (decimal prefixes), used only at the edges. Never an exponent (1080 s, not
1.08e+03 s); a table column of times is shown in one unit (its median value's)."""
from __future__ import annotations

import math
import re


def _scaled(value: float, unit: str, prefixes, digits: int = 3) -> str:
    for factor, prefix in prefixes:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def plain(value: float, digits: int = 3) -> str:
    """`digits` significant digits without an exponent: 1080 -> '1080', 4.2e-05 -> '0.000042'."""
    text = f"{value:.{digits}g}"
    if "e" not in text or not math.isfinite(value):
        return text
    if abs(value) >= 1:
        return f"{value:.0f}"
    return f"{value:.{digits - 1 - math.floor(math.log10(abs(value)))}f}".rstrip("0")


def seconds(value: float) -> str:
    if value == 0:
        return "0 s"
    for unit, factor in TIME_UNITS.items():
        if abs(value) >= factor:
            return f"{plain(value / factor)} {unit}"
    return f"{plain(value / 1e-9)} ns"


_TIME_CELL = re.compile(r"^(-?\d+(?:\.\d*)?) (s|ms|us|ns)(\+?)$")   # a trailing + marks an unbounded figure


def one_time_unit(cells: list[str]) -> list[str]:
    """A column whose cells are all times ('-' for none) in more than one unit, in its median value's unit."""
    parsed = [_TIME_CELL.match(str(c)) for c in cells]
    if not all(m or str(c) == "-" for m, c in zip(parsed, cells)):
        return cells
    if len({m.group(2) for m in parsed if m}) < 2:
        return cells
    values = [float(m.group(1)) * TIME_UNITS[m.group(2)] if m else None for m in parsed]
    middle = sorted(abs(v) for v in values if v is not None)
    middle = middle[len(middle) // 2]
    unit = next((u for u, f in TIME_UNITS.items() if middle >= f), "ns")
    return [c if v is None else ("0" if v == 0 else plain(v / TIME_UNITS[unit])) + f" {unit}{m.group(3)}"
            for c, v, m in zip(cells, values, parsed)]


def nbytes(value: float) -> str:
    return _scaled(value, "B", ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")))


def flops(value: float) -> str:
    return _scaled(value, "FLOP", ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")))


def rate(value: float, unit: str, digits: int = 3) -> str:
    return _scaled(value, unit, ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")), digits)


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """An aligned plain-text table; columns in `right` are right-aligned (numbers)."""
    right = right if right is not None else set(range(1, len(headers)))
    rows = [list(r) for r in zip(*(one_time_unit(list(col)) for col in zip(*rows)))] if rows else rows
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def fmt(row) -> str:
        return "  ".join(str(c).rjust(w) if i in right else str(c).ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    return "\n".join([fmt(headers), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


def quantity(value: float, unit: str) -> str:
    """An SI value with a readable prefix: 9.89e14 FLOP/s -> '989 TFLOP/s'."""
    if unit == "s":
        return seconds(value)
    if unit == "B":
        return nbytes(value)
    if unit == "1":
        return f"{value:g}"
    return rate(value, unit, digits=5)   # profile figures shown as written (494.5 TFLOP/s)
