"""Sourced numbers: every figure in a profile carries its unit, source and provenance.

Profiles may write human units (`{value: 989, unit: TFLOP/s}`); inside, everything is SI
(FLOP/s, B, B/s, s, Hz) and decimal (1 GB = 1e9 B), per DESIGN.md.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import WhatifError, shown

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
    "1/clk/SM": {"results/clk/SM": 1},   # an SM's instruction results a clock (special-function-unit rates)
}.items():
    for _name, _factor in _names.items():
        UNITS[_name] = (_si, float(_factor))

# SI unit -> (lowest, highest) value a profile may give, the physical bounds stated in the error: far outside
# any real part (shipped profiles: 1 TFLOP/s..15 PFLOP/s, 2 GB/s..8 TB/s, 64 KiB..7.7 TB, 0.1..80 us), but a
# zero, a 1e-300 or a 1e300 would divide by zero, overflow or print as "inf PB/s".
BOUNDS: dict[str, tuple[float, float, str]] = {
    "FLOP/s": (1e6, 1e18, "1 MFLOP/s to 1 EFLOP/s per GPU"),
    "B/s": (1e3, 1e15, "1 kB/s to 1 PB/s"),
    "B": (1.0, 1e15, "1 B to 1 PB"),
    "s": (0.0, 1.0, "0 to 1 s for a latency or overhead"),
    "Hz": (1e6, 1e10, "1 MHz to 10 GHz"),
    "W": (0.0, 1e5, "0 to 100 kW"),
    "USD/h": (0.0, 1e4, "0 to 10,000 USD/h"),
    "1": (1.0, 1e6, "1 to 1,000,000"),
    "1/clk/SM": (1.0, 1024.0, "1 to 1,024 results a clock an SM"),
}


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
        raise WhatifError(f"{where}: expected a mapping with value, unit, provenance, source; got {shown(raw)}")
    missing = [k for k in ("value", "unit", "provenance", "source") if k not in raw]
    if missing:
        raise WhatifError(f"{where}: missing {', '.join(missing)} (each number needs value, unit, provenance, source)")
    unknown = set(raw) - {"value", "unit", "provenance", "source", "note"}
    if unknown:
        raise WhatifError(f"{where}: unknown key(s) {sorted(unknown)}; valid: value, unit, provenance, source, note")
    value = raw["value"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise WhatifError(f"{where}.value: {shown(value)} is not a number")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise WhatifError(f"{where}.value: {value!r} must be a finite number >= 0")
    unit = raw["unit"]
    if not isinstance(unit, str) or unit not in UNITS:
        raise WhatifError(f"{where}.unit: unknown unit {shown(unit)}; valid: {', '.join(UNITS)}")
    si, factor = UNITS[unit]
    if si != expect_unit:
        valid = [u for u, (s, _) in UNITS.items() if s == expect_unit]
        raise WhatifError(f"{where}.unit: {unit!r} is not a unit of {expect_unit}; valid: {', '.join(valid)}")
    prov = raw["provenance"]
    if not isinstance(prov, str) or prov not in PROVENANCES:
        raise WhatifError(f"{where}.provenance: {shown(prov)}; valid: {', '.join(PROVENANCES)}")
    source = raw["source"]
    if not isinstance(source, str) or not source.strip():
        raise WhatifError(f"{where}.source: {shown(source)}; say in text where the number came from")
    if len(source) > 2000:
        raise WhatifError(f"{where}.source: {len(source):,} characters; valid: at most 2,000")
    low, high, said = BOUNDS[si]
    if not low <= value * factor <= high:
        raise WhatifError(f"{where}.value: {value:g} {unit} is outside the physical range {said}")
    return Quantity(value * factor, si, prov, source.strip())
