"""Technique names -> classes, and `name[:key=value,...]` specs -> configured technique objects."""
from __future__ import annotations

import dataclasses
import functools
import typing
from typing import TYPE_CHECKING

from ...errors import WhatifError, closest
from .compose import TechniqueSet

if TYPE_CHECKING:   # (base is imported where a technique is named: an empty set, a plain run's, needs none)
    from .base import Technique


_LOADED: list[bool] = []   # (the families import once; a search parses a technique per batch)


def _load_families() -> None:
    # Imported for their @register side effect; kept here so importing the registry loads them all.
    if _LOADED:
        return
    from . import (attention_kernels, context_compression, diffusion, encoder_decoder,  # noqa: F401
                   hidden_transfer,
                   kv_compression, kv_draft_scored, kv_eviction, kv_merging,
                   layer_skip, native_speculative, offload_kv, offload_weights, parallel_decoding,
                   passage_compression, prefix_reuse,
                   sparse_attention,
                   sparse_attention_hip, sparse_attention_host, sparse_attention_prefill, sparse_attention_probe,
                   sparse_attention_recycled,
                   sparse_attention_strided, speculative,
                   visual_tokens, weights)
    _LOADED.append(True)


def all_techniques() -> dict[str, type[Technique]]:
    from .base import REGISTRY
    _load_families()   # idempotent: a family imported on its own must not hide the others
    return dict(sorted(REGISTRY.items(), key=lambda kv: (kv[1].family, kv[0])))


def technique_class(name: str) -> type[Technique]:
    from .base import REGISTRY
    _load_families()
    cls = REGISTRY.get(name)   # (a lookup: the sorted copy only for the error's suggestion)
    if cls is None:
        known = all_techniques()
        raise WhatifError(f"--technique: unknown technique '{name}'{closest(name, known)}; "
                          f"see `whatif list techniques`")
    return cls


def _convert(cls: type[Technique], key: str, raw, kind):
    where = f"--technique {cls.name}:{key}"
    if kind is bool:
        if isinstance(raw, bool):
            return raw
        if str(raw).lower() in ("true", "yes", "1", "on"):
            return True
        if str(raw).lower() in ("false", "no", "0", "off"):
            return False
        raise WhatifError(f"{where}={raw!r}: must be true or false")
    if kind in (int, float):
        if isinstance(raw, bool):
            raise WhatifError(f"{where}={raw!r}: must be a number")
        try:
            value = kind(raw) if kind is float else int(str(raw), 10)
        except ValueError:
            raise WhatifError(f"{where}={raw!r}: must be {'an integer' if kind is int else 'a number'}") from None
        return value
    return str(raw)


@functools.cache   # get_type_hints costs ~1 ms a class; a search parses a technique per batch
def _type_hints(cls) -> dict:
    return typing.get_type_hints(cls)


def make_technique(name: str, params: dict | None = None) -> Technique:
    cls = technique_class(name)
    hints = _type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, raw in (params or {}).items():
        if key not in fields:
            valid = ", ".join(sorted(fields)) or "none (it takes no parameters)"
            raise WhatifError(f"--technique {name}: unknown parameter '{key}'{closest(key, fields)}; valid: {valid}")
        kwargs[key] = _convert(cls, key, raw, hints[key])
    return cls(**kwargs)


def parse_technique(spec) -> Technique:
    """'kivi' or 'kivi:bits=4,residual=64', or a mapping {name: kivi, bits: 4} from a scenario file."""
    from .base import Technique
    if isinstance(spec, Technique):
        return spec
    if isinstance(spec, dict):
        if "name" not in spec:
            raise WhatifError(f"techniques: entry {spec!r} needs a 'name'")
        params = {k: v for k, v in spec.items() if k != "name"}
        return make_technique(str(spec["name"]), params)
    if not isinstance(spec, str) or not spec.strip():
        raise WhatifError(f"--technique: {spec!r} must be NAME or NAME:key=value,...")
    name, _, rest = spec.strip().partition(":")
    params = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise WhatifError(f"--technique {name}: '{item}' must be key=value")
        params[key.strip()] = value.strip()
    return make_technique(name.strip().lower(), params)


def technique_set(specs) -> TechniqueSet:
    """A checked, ordered set from specs ('int4+kivi' splits on '+')."""
    items = []
    for spec in specs or ():
        parts = spec.split("+") if isinstance(spec, str) else [spec]
        items += [parse_technique(p) for p in parts if not isinstance(p, str) or p.strip()]
    return TechniqueSet(tuple(items))
