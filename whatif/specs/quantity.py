"""Sourced numbers: every figure in a profile carries its unit, source and provenance.

Profiles may write human units (`{value: 989, unit: TFLOP/s}`); inside, everything is SI
(FLOP/s, B, B/s, s, Hz) and decimal (1 GB = 1e9 B), per DESIGN.md.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import WhatifError

PROVENANCES = ("datasheet", "measured", "fitted", "assumed", "derived")

# unit as written -> (SI unit, factor). Decimal prefixes only, except KiB/MiB/GiB written as such.
UNITS: dict[str, tuple[str, float]] = {}
for _si, _names in {
    "FLOP/s": {"FLOP/s": 1, "GFLOP/s": 1e9, "TFLOP/s": 1e12, "PFLOP/s": 1e15,
               "TOP/s": 1e12, "POP/s": 1e15},
    "B": {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30},
    "B/s": {"B/s": 1, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12},
    "s": {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
    "Hz": {"Hz": 1, "MHz": 1e6, "GHz": 1e9},
    "W": {"W": 1},
    "USD/h": {"USD/h": 1},
    "1": {"1": 1, "count": 1},
}.items():
    for _name, _factor in _names.items():
        UNITS[_name] = (_si, float(_factor))


@dataclass(frozen=True)
class Quantity:
    """A number in SI units with where it came from."""

    value: float
    unit: str
    provenance: str
    source: str

    def describe(self) -> str:
        return f"{self.value:g} {self.unit} ({self.provenance}: {self.source})"


def parse_quantity(raw, where: str, expect_unit: str) -> Quantity:
    """Parse `{value, unit, provenance, source}` from a profile; `where` names file and field."""
    if not isinstance(raw, dict):
        raise WhatifError(f"{where}: expected a mapping with value, unit, provenance, source; got {raw!r}")
    missing = [k for k in ("value", "unit", "provenance", "source") if k not in raw]
    if missing:
        raise WhatifError(f"{where}: missing {', '.join(missing)} (each number needs value, unit, provenance, source)")
    unknown = set(raw) - {"value", "unit", "provenance", "source", "note"}
    if unknown:
        raise WhatifError(f"{where}: unknown key(s) {sorted(unknown)}; valid: value, unit, provenance, source, note")
    try:
        value = float(raw["value"])
    except (TypeError, ValueError):
        raise WhatifError(f"{where}.value: {raw['value']!r} is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise WhatifError(f"{where}.value: {value!r} must be a finite number >= 0")
    unit = str(raw["unit"])
    if unit not in UNITS:
        raise WhatifError(f"{where}.unit: unknown unit {unit!r}; valid: {', '.join(UNITS)}")
    si, factor = UNITS[unit]
    if si != expect_unit:
        valid = [u for u, (s, _) in UNITS.items() if s == expect_unit]
        raise WhatifError(f"{where}.unit: {unit!r} is not a unit of {expect_unit}; valid: {', '.join(valid)}")
    prov = str(raw["provenance"])
    if prov not in PROVENANCES:
        raise WhatifError(f"{where}.provenance: {prov!r}; valid: {', '.join(PROVENANCES)}")
    source = str(raw["source"]).strip()
    if not source:
        raise WhatifError(f"{where}.source: empty; say where the number came from")
    return Quantity(value * factor, si, prov, source)
