"""One scenario's inputs mapped to a Scenario in one place: a scenario file, then the values given over it
(the CLI's flags or the API's keywords). The CLI and the API both call scenario_from_inputs; the file's
simulator sections are checked here too (simulator/config.py), so a misspelt field is an error everywhere."""
from __future__ import annotations

from pathlib import Path

from .roofline.config import Precision
from .specs.quantization import scheme
from .scenario import SIM_SECTIONS, Scenario, build_scenario, read_scenario_file

PARALLEL = ("tp", "pp", "ep", "moe_tp", "dp_attention", "attention_dp", "redundant_experts", "expert_skew")
WORKLOAD = ("batch", "prompt", "output", "prefill_chunk", "shared_prefix")


def scenario_from_inputs(file: str | None, given: dict, dtype: str | None = None, weight_dtype: str | None = None,
                         kv_dtype: str | None = None, weight_group_size: int | None = None,
                         appended: dict | None = None, quantization: str | None = None) -> Scenario:
    """The Scenario of `file` (if any) with `given` over it: Scenario fields and parallel/workload keys, None
    meaning not given. `appended` lists (techniques, place, add_tiers) extend the file's, as repeatable flags do;
    `dtype` is the activations' and, unless given, the weights' and KV's; `quantization` a named scheme
    (specs/quantization.py) that sets the weights' and activations' dtypes."""
    top, sections, sim = read_scenario_file(file) if file else ({}, {}, {})
    if any(key in sim for key in SIM_SECTIONS):
        from .simulator.config import file_sections   # (the simulator's dataclasses; an estimate needs no more)
        file_sections(sim, Path(file).name)
    sections = {k: dict(v) for k, v in sections.items()}
    for key, value in given.items():
        if value is None:
            continue
        section = "parallel" if key in PARALLEL else "workload" if key in WORKLOAD else None
        if section:
            sections.setdefault(section, {})[key] = value
        else:
            top[key] = value
    for key, values in (appended or {}).items():
        if values:
            top[key] = list(top.get(key) or []) + list(values)
    sections["precision"] = _precision(sections.get("precision", {}), dtype, weight_dtype, kv_dtype,
                                       weight_group_size, quantization)
    return build_scenario(top, sections)


def _precision(prec: dict, dtype: str | None, weight: str | None, kv: str | None, group_size: int | None,
               quantization: str | None = None) -> dict:
    """The precision: section with the dtypes given over it (the one place --dtype defaults the others, and a
    --quantization scheme sets the weights' and activations')."""
    if dtype:
        Precision(activation=dtype)   # a bad value is reported as --dtype, not as --weight-dtype
        prec["activation"] = dtype
        prec.setdefault("weight", dtype)
        prec.setdefault("kv", dtype)
    if weight:
        prec["weight"] = weight
    if kv:
        prec["kv"] = kv
    if group_size is not None:
        prec["weight_group_size"] = group_size
    if quantization:
        prec["quantization"] = quantization
    if isinstance(prec.get("quantization"), str) and prec["quantization"]:
        s = scheme(prec["quantization"])
        prec.setdefault("weight", s.weight)
        prec.setdefault("activation", s.activation)
    return prec
