"""`whatif list` and `whatif show`: the hardware, models and techniques whatif knows, with their sources."""
from __future__ import annotations

import json
from dataclasses import fields

from ..errors import WhatifError
from ..specs import units


def add_list_parser(ls) -> None:
    ls.add_argument("what", choices=("hardware", "models", "techniques"))
    ls.add_argument("--kind", choices=("gpu", "system", "link", "memory"), help="hardware kind to list")
    ls.add_argument("--json", action="store_true")


def add_show_parser(sh) -> None:
    sh.add_argument("what", choices=("hardware", "model", "technique"))
    sh.add_argument("name")
    sh.add_argument("--json", action="store_true")


def cmd_list(args) -> int:
    from ..specs.hardware import component_kind, list_components
    from ..specs.models import list_models
    if args.what == "techniques":
        from ..queries import technique_info
        if args.kind:
            raise WhatifError("--kind applies to `whatif list hardware` only")
        infos = technique_info.all_infos()
        print(json.dumps(infos, allow_nan=False) if args.json else technique_info.list_text(infos))
        return 0
    if args.what == "models":
        if args.kind:
            raise WhatifError("--kind applies to `whatif list hardware` only")
        names = list_models()
        print(json.dumps(names, allow_nan=False) if args.json else "\n".join(names))
        return 0
    names = list_components(args.kind)
    if args.json:
        print(json.dumps([{"name": n, "kind": component_kind(n)} for n in names], allow_nan=False))
    else:
        print(units.table(["name", "kind"], [[n, component_kind(n)] for n in names], right=set()))
    return 0


def _plain(value):
    """A dataclass tree as JSON-ready data (Quantities become {value, unit, provenance, source})."""
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _quantity_rows(data: dict, prefix: str = "") -> list[list[str]]:
    rows = []
    for key, value in data.items():
        if isinstance(value, dict) and "provenance" in value and "value" in value:
            rows.append([prefix + key, units.quantity(value["value"], value["unit"]), value["provenance"],
                         value["source"]])
        elif isinstance(value, dict) and "name" in value and "kind" not in value and prefix.count(".") < 2:
            rows.append([prefix + key, value["name"], "", ""])
            rows += _quantity_rows({k: v for k, v in value.items() if k != "name"}, prefix + key + ".")
        elif isinstance(value, dict):
            rows += _quantity_rows(value, prefix + key + ".")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                rows += _quantity_rows(item if isinstance(item, dict) else {"": item}, f"{prefix}{key}[{i}].")
        elif value not in (None, ""):
            rows.append([prefix + key, str(value), "", ""])
    return rows


def _short(value) -> str:
    """A field's value in a table cell: a long per-layer list as its kinds and counts."""
    if isinstance(value, (list, tuple)) and len(value) > 8:
        counts: dict = {}
        for v in value:
            counts[v] = counts.get(v, 0) + 1
        return ", ".join(f"{k} x{n}" for k, n in counts.items())
    return str(value)


def cmd_show(args) -> int:
    if args.what == "technique":
        from ..queries import technique_info
        info = technique_info.info(args.name)
        print(json.dumps(info, allow_nan=False) if args.json else technique_info.show_text(info))
        return 0
    if args.what == "model":
        from ..specs.models import load_model
        m = load_model(args.name)
        data = _plain(m)
        cache = m.cache_summary(2)
        derived = {"total_params": m.total_params(), "active_params_per_token": m.active_params_per_token(),
                   "kv_bytes_per_token_bf16": cache["kv_bytes_per_token"],
                   "windowed_kv_bytes_max_bf16": cache["windowed_kv_bytes_max"],
                   "state_bytes_per_sequence_bf16": cache["state_bytes_per_sequence"],
                   "encoder_params": m.encoder_params()}
        if args.json:
            print(json.dumps({**data, "derived": derived}, allow_nan=False))
        else:
            from ..specs.model_schema import LAYER_FIELDS
            rows = [[k, _short(v)] for k, v in data.items()   # the per-layer fields only where a model sets them
                    if v not in (None, "", (), []) and not (k in LAYER_FIELDS and not v)]
            rows += [["total parameters", f"{derived['total_params']:,}"],
                     ["active parameters per token", f"{derived['active_params_per_token']:,}"],
                     ["KV cache per token (bf16)", units.nbytes(derived["kv_bytes_per_token_bf16"])]]
            if cache["windowed_kv_bytes_max"]:
                rows.append(["windowed layers' KV, at most (bf16)", units.nbytes(cache["windowed_kv_bytes_max"])])
            if cache["state_bytes_per_sequence"]:
                rows.append(["recurrent state per sequence (bf16 where the model names no dtype)",
                             units.nbytes(cache["state_bytes_per_sequence"])])
            if m.encoder is not None:
                # a forward pass is priced only under --technique vision_encoder: the model's own tower where
                # its profile gives the shape, else the technique's CLIP ViT-L/14-336 (visual_tokens.model_tower)
                tower = "its own tower" if m.encoder.tower_layers else "a CLIP ViT-L/14-336 stand-in"
                rows.append([f"encoder: {m.encoder.kind}", f"{m.encoder.params:,} parameters (in memory; "
                             f"--technique vision_encoder prices {tower} per image)"])
            print(units.table(["field", "value"], rows, right=set()))
        return 0
    from ..specs.hardware import load_component
    comp = load_component(args.name, None, "show hardware")
    data = _plain(comp)
    if args.json:
        print(json.dumps(data, allow_nan=False))
    else:
        print(units.table(["field", "value", "provenance", "source"], _quantity_rows(data), right=set()))
    return 0
