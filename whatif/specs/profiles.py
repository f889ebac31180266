"""Finding and reading profile YAML files (shipped inside the package, or a user's path)."""
from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from ..errors import WhatifError

PACKAGE_DIR = Path(__file__).resolve().parent.parent   # whatif/: the profile folders sit beside the layers
HARDWARE_DIR = PACKAGE_DIR / "hardware_profiles"
MODEL_DIR = PACKAGE_DIR / "model_profiles"


def read_yaml(path: Path) -> dict:
    """Read one YAML mapping; a syntax error names the file and line."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise WhatifError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise WhatifError(f"{path}:{at}: malformed YAML ({problem})") from None
    if not isinstance(data, dict):
        raise WhatifError(f"{path}: expected a YAML mapping at the top level")
    return data


@cache
def profile_index(directory: Path) -> dict[str, Path]:
    """name -> file for every *.yaml in a profile folder (the file stem is the name)."""
    return {p.stem: p for p in sorted(directory.glob("*.yaml"))}


def looks_like_path(name: str) -> bool:
    return name.endswith((".yaml", ".yml", ".json")) or "/" in name or "\\" in name
