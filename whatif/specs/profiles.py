"""Finding and reading profile YAML files (shipped inside the package, or a user's path)."""
from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from . import precompiled

PACKAGE_DIR = Path(__file__).resolve().parent.parent   # whatif/: the profile folders sit beside the layers
HARDWARE_DIR = PACKAGE_DIR / "hardware_profiles"
MODEL_DIR = PACKAGE_DIR / "model_profiles"
SHIPPED_DATA_DIR = PACKAGE_DIR / "roofline" / "data"   # fit tables written by whatif's own fitters


def read_yaml(path: Path) -> dict:
    """Read one YAML mapping through safe_yaml's limits; an error names the file (and line or field).
    Files inside the package (shipped profiles and fit tables) are whatif's own: unpickled from their folder's
    precompiled bundle while it is current (precompiled.py), else parsed the fast way."""
    path = Path(path)
    resolved = path if _plainly_inside(path) else path.resolve()   # (resolve() stats each folder of the path)
    shipped = resolved.is_relative_to(PACKAGE_DIR)
    if shipped and path.suffix == ".yaml":
        data = precompiled.lookup(resolved)
        if data is not None:
            return data
    from .safe_yaml import load_mapping   # (a user's file, or a shipped one edited since its bundle)
    return load_mapping(path, shipped=shipped)


def _plainly_inside(path: Path) -> bool:
    """An absolute path under the package with no '..': already what resolve() would give (the package's files
    are no symlinks), as every shipped path whatif builds from PACKAGE_DIR is."""
    return path.is_absolute() and ".." not in path.parts and path.is_relative_to(PACKAGE_DIR)


@cache
def profile_index(directory: Path) -> dict[str, Path]:
    """name -> file for every *.yaml in a profile folder (the file stem is the name)."""
    return {p.stem: p for p in sorted(directory.glob("*.yaml"))}


def looks_like_path(name: str) -> bool:
    return name.endswith((".yaml", ".yml", ".json")) or "/" in name or "\\" in name


def absolute(path) -> Path:
    """`path` made absolute without following links: the hub cache's snapshots/REV/config.json is a link into
    blobs/, whose hashed name loses both the .json suffix and the hf_quant_config.json beside it."""
    return Path(os.path.abspath(path))
