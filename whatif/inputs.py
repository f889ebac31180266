"""One scenario's inputs mapped to a Scenario in one place: a scenario file, then the values given over it
(the CLI's flags or the API's keywords). The CLI and the API both call scenario_from_inputs; the file's
simulator sections are checked here too (simulator/config.py), so a misspelt field is an error everywhere."""
from __future__ import annotations

from pathlib import Path

from .roofline.config import Precision
from .errors import WhatifError
from .specs.checks import boolean
from .specs.defaults import DEFAULT_MODEL
from .specs.profiles import looks_like_path
from .specs.quantization import scheme
from .scenario import SIM_SECTIONS, Scenario, build_scenario, read_scenario_file

PARALLEL = ("tp", "pp", "ep", "moe_tp", "dp_attention", "attention_dp", "redundant_experts", "expert_skew",
            "moe_a2a")
WORKLOAD = ("batch", "prompt", "output", "prefill_chunk", "shared_prefix")


def scenario_from_inputs(file: str | None, given: dict, dtype: str | None = None, weight_dtype: str | None = None,
                         kv_dtype: str | None = None, weight_group_size: int | None = None,
                         appended: dict | None = None, quantization: str | None = None,
                         expert_quantization: str | None = None, quantize_experts_only: bool | None = None) -> Scenario:
    """The Scenario of `file` (if any) with `given` over it: Scenario fields and parallel/workload keys, None
    meaning not given. `appended` lists (techniques, place, add_tiers) extend the file's, as repeatable flags do;
    `dtype` is the activations' and, unless given, the weights' and KV's; `quantization` a named scheme
    (specs/quantization.py) that sets the weights' and activations' dtypes, `expert_quantization` the routed
    experts' own, `quantize_experts_only` the scheme on the experts alone. A model read from a checkpoint's
    config.json that declares a quantization runs it unless a weight flag is given (its KV dtype unless --kv-dtype
    is): specs/checkpoint_quant.py."""
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
    prec = sections.get("precision", {})
    for key, value in (("quantization", quantization), ("expert_quantization", expert_quantization),
                       ("quantize_experts_only", quantize_experts_only)):
        if value is not None:
            prec[key] = value
    model = top.get("model", DEFAULT_MODEL)
    # a checkpoint's own quantization, where no flag or file key says otherwise (a profile name is no checkpoint)
    if isinstance(model, str) and looks_like_path(model):
        from .specs.checkpoint_quant import checkpoint_precision
        prec = checkpoint_precision(model, prec, weights=not (dtype or weight_dtype), kv=not (dtype or kv_dtype),
                                    engine=top.get("kernel_engine"))
        if not (dtype or weight_dtype):
            from .specs.checkpoint_quant import alias_assumption
            prec = alias_assumption(model, prec)
    sections["precision"] = _precision(prec, dtype, weight_dtype, kv_dtype, weight_group_size)
    return build_scenario(top, sections)


def _precision(prec: dict, dtype: str | None, weight: str | None, kv: str | None, group_size: int | None) -> dict:
    """The precision: section with the dtypes given over it (the one place --dtype defaults the others, a
    --quantization scheme sets the weights' and activations', and --quantize-experts-only moves it onto the
    routed experts, the other layers keeping 16-bit weights)."""
    prec = dict(prec)
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
    if boolean(prec.pop("quantize_experts_only", False), "precision.quantize_experts_only (--quantize-experts-only)"):
        if not isinstance(prec.get("quantization"), str) or not prec["quantization"]:
            raise WhatifError("--quantize-experts-only: needs --quantization SCHEME (the experts' scheme), "
                              "e.g. --quantization nvfp4 --quantize-experts-only")
        prec.setdefault("expert_quantization", prec.pop("quantization"))
        sixteen = prec.get("activation") if prec.get("activation") in ("bf16", "fp16") else "bf16"
        prec.setdefault("weight", sixteen)
        prec.setdefault("activation", sixteen)
    if isinstance(prec.get("quantization"), str) and prec["quantization"]:
        s = scheme(prec["quantization"])
        prec.setdefault("weight", s.weight)
        prec.setdefault("activation", s.activation)
    return prec
