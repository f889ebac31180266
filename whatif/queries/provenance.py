"""The efficiency model's provenance as one short line for text output: what was fitted, on what, and that
`--explain` prints it whole (JSON and the HTML report always carry it whole)."""
from __future__ import annotations

import re

SHORT = 80                        # a line that fits an 80-column terminal is printed as it is
EXPLAIN = "--explain for all"
_KERNEL_FIT = re.compile(r"GEMM .*?fitted on \d+ (\S+ \S+) rows of ([\w.-]+)")
_NO_FIT = re.compile(r"no (\w+) fit")
_CALIBRATED = re.compile(r"on (\d+ train rows of \S+)")
_CDNA = re.compile(r"([\w-]+): CDNA family entry (\w+)")


def efficiency_line(eff, explain: bool = False) -> str:
    """`efficiency: SOURCE (PROVENANCE)` when asked to explain or when it is short; else one line naming the fit."""
    whole = f"efficiency: {eff.source} ({eff.provenance})"
    if explain or len(whole) <= SHORT:
        return whole
    moe = getattr(eff, "moe_engine", None)   # named MoE kernels (--moe-kernels): whose rows price the experts
    experts = f"; MoE experts by {moe}'s fit of their kernels" if moe else ""
    return f"efficiency: {eff.source} ({_fitted_on(eff)}{experts}); {EXPLAIN}"


def _fitted_on(eff) -> str:
    """What the parameters were fitted on, in a few words (the GEMM fit stands for the kernel models)."""
    if eff.source == "calibrated":
        m = _CALIBRATED.search(eff.provenance)
        return m.group(1) if m else "your --calibration file"
    family = _CDNA.search(eff.provenance)
    m = _KERNEL_FIT.search(eff.provenance)
    if family is not None:   # an AMD GPU: nothing fitted on it; say so first
        how, arch = family.groups()
        return (f"{how} {arch} family: {m.group(1)} kernels of {m.group(2)} rescaled" if m
                else f"{how} {arch} family")
    if m is None:
        return "fitted parameters"
    engine_version, gpu = m.groups()
    borrowed = _NO_FIT.search(m.group(0))      # the GPU's architecture has no kernel fit of its own
    return f"{engine_version} kernels fitted on {gpu}" + (f"; no {borrowed.group(1)} fit" if borrowed else "")
