"""Techniques as data for `whatif list techniques` and `whatif show technique` (text and JSON)."""
from __future__ import annotations

import textwrap
import typing

from ..specs import units
from ..roofline.techniques.base import FAMILIES
from ..roofline.techniques.registry import all_techniques, technique_class


def info(name: str) -> dict:
    cls = technique_class(name)
    hints = typing.get_type_hints(cls)
    params = [{"name": f.name, "type": hints[f.name].__name__, "default": f.default,
               "unit": f.metadata.get("unit", ""), "help": f.metadata.get("help", "")} for f in cls.params()]
    return {"name": cls.name, "family": cls.family, "family_title": FAMILIES.get(cls.family, ""),
            "paper": cls.paper, "parameters": params, "slots": list(cls.slots),
            "evicts_tokens": cls.evicts, "shares_prefix": cls.shares_prefix, "mechanism": cls.mechanism()}


def all_infos() -> list[dict]:
    return [info(name) for name in all_techniques()]


def list_text(infos: list[dict]) -> str:
    rows = [[i["name"], i["family"], ", ".join(f"{p['name']}={p['default']}" for p in i["parameters"]) or "-",
             i["paper"]] for i in infos]
    return units.table(["technique", "family", "parameters (defaults)", "source"], rows, right=set())


def show_text(i: dict) -> str:
    lines = [f"{i['name']}: family {i['family']} ({i['family_title']})", f"source: {i['paper']}", "",
             textwrap.fill("mechanism: " + i["mechanism"], 100), ""]
    if i["parameters"]:
        rows = [[p["name"], p["type"], str(p["default"]) + (f" {p['unit']}" if p["unit"] else ""), p["help"]]
                for p in i["parameters"]]
        lines.append(units.table(["parameter", "type", "default", "meaning"], rows, right=set()))
    else:
        lines.append("parameters: none")
    lines.append(f"\nsets: {', '.join(i['slots']) or '-'} (two techniques that set the same thing cannot combine)")
    lines.append(f"usage: whatif estimate --technique {i['name']}"
                 + (":" + ",".join(f"{p['name']}={p['default']}" for p in i["parameters"][:2]) if i["parameters"]
                    else ""))
    return "\n".join(lines)
