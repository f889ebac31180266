"""CDNA (AMD Instinct) kernel-model parameters: a named NVIDIA stand-in's fitted shape terms, rescaled by the
CDNA family's achieved-over-datasheet fractions (data/cdna_family.yaml). Nothing here is fitted to AMD rows:
none exist in this project, and the provenance of every parameter says so."""
from __future__ import annotations

from dataclasses import fields, replace
from functools import cache
from pathlib import Path

from ...errors import WhatifError

FAMILY_FILE = Path(__file__).resolve().parent.parent / "data" / "cdna_family.yaml"
FIGURES = ("gemm_fraction", "gemm_fp8_fraction", "hbm_fraction", "fixed_cost_factor",
           "stand_in_gemm_fraction", "stand_in_gemm_fp8_fraction", "stand_in_hbm_fraction")


@cache
def family(arch: str, path: str | None = None) -> dict:
    """{figure: value, 'stand_in': arch, 'sources': {figure: 'provenance: source'}} of a CDNA architecture."""
    from ...specs.profiles import read_yaml
    table = read_yaml(Path(path) if path else FAMILY_FILE).get("families", {})
    if arch not in table:
        raise WhatifError(f"arch '{arch}' has no CDNA family entry; valid: {', '.join(table)}")
    block = table[arch]
    out = {"stand_in": str(block["stand_in"]), "sources": {}}
    for key in FIGURES:
        q = block[key]
        value = float(q["value"])
        if not 0 < value <= (10.0 if key == "fixed_cost_factor" else 1.0):
            raise WhatifError(f"{FAMILY_FILE.name}:{arch}.{key}: {value:g} is out of range")
        out[key] = value
        out["sources"][key] = f"{q['provenance']}: {q['source']}"
    return out


def is_cdna(arch: str) -> bool:
    from ...specs.hardware import AMD_ARCHS
    return arch in AMD_ARCHS


def stand_in(arch: str) -> str:
    return family(arch)["stand_in"]


def rescaled(params, arch: str, dtype: str, path: str | None = None):
    """`params` (a stand-in's fitted kernel parameters) as CDNA's kernels would have them: compute efficiencies
    x the GEMM fraction ratio (fp8's for fp8), memory efficiencies x the HBM fraction ratio, each capped at 1;
    fixed costs (*_s) x the fixed-cost factor."""
    f = family(arch, path)
    gemm = (f["gemm_fp8_fraction"] / f["stand_in_gemm_fp8_fraction"] if dtype == "fp8"
            else f["gemm_fraction"] / f["stand_in_gemm_fraction"])
    hbm = f["hbm_fraction"] / f["stand_in_hbm_fraction"]
    changes = {}
    for fld in fields(params):
        value = getattr(params, fld.name)
        if value is None:
            continue
        if fld.name.startswith("mem"):
            changes[fld.name] = min(1.0, value * hbm)
        elif fld.name.endswith("eff") or fld.name.startswith("eff_"):
            changes[fld.name] = min(1.0, value * gemm)
        elif fld.name.endswith("_s"):
            changes[fld.name] = value * f["fixed_cost_factor"]
    return replace(params, **changes)


RESCALING = ("gemm_fraction", "gemm_fp8_fraction", "hbm_fraction", "fixed_cost_factor")


def kind(arch: str) -> str:
    """'microbenchmark-derived' when any rescaling figure is a published measurement, else 'assumed'."""
    sources = family(arch)["sources"]
    return ("microbenchmark-derived" if any(sources[k].startswith("measured") for k in RESCALING)
            else "assumed")


def provenance(arch: str) -> str:
    f = family(arch)
    how = {k: f["sources"][k].split(":", 1)[0] for k in FIGURES}
    return (f"{kind(arch)}: CDNA family entry {arch} (data/cdna_family.yaml): {f['stand_in']}'s fitted shape "
            f"terms, efficiencies x {f['gemm_fraction']:g}/{f['stand_in_gemm_fraction']:g} (GEMM bf16, "
            f"{how['gemm_fraction']}/{how['stand_in_gemm_fraction']}), "
            f"x {f['gemm_fp8_fraction']:g}/{f['stand_in_gemm_fp8_fraction']:g} (GEMM fp8, "
            f"{how['gemm_fp8_fraction']}/{how['stand_in_gemm_fp8_fraction']}), "
            f"x {f['hbm_fraction']:g}/{f['stand_in_hbm_fraction']:g} (HBM, "
            f"{how['hbm_fraction']}/{how['stand_in_hbm_fraction']}), fixed costs x {f['fixed_cost_factor']:g} "
            f"({how['fixed_cost_factor']}); measured = a published microbenchmark; no AMD kernel was measured here")
