"""Human-readable numbers with units (decimal prefixes), used only at the edges."""
from __future__ import annotations


def _scaled(value: float, unit: str, prefixes, digits: int = 3) -> str:
    for factor, prefix in prefixes:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def seconds(value: float) -> str:
    if value == 0:
        return "0 s"
    for factor, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value:.3g} s"


def nbytes(value: float) -> str:
    return _scaled(value, "B", ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")))


def flops(value: float) -> str:
    return _scaled(value, "FLOP", ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")))


def rate(value: float, unit: str, digits: int = 3) -> str:
    return _scaled(value, unit, ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")), digits)


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    """An aligned plain-text table; columns in `right` are right-aligned (numbers)."""
    right = right if right is not None else set(range(1, len(headers)))
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
