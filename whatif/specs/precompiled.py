"""The shipped fit tables (roofline/data/*.yaml) precompiled: parsed once into data/precompiled.pickle, each
entry keyed by its YAML's SHA-256, so a cold process unpickles them (~1 ms) instead of parsing ~65 kB of YAML
(~70 ms). An entry is used only while its YAML's hash matches: an edited or refitted table (the fitters
rewrite the YAML) is parsed from the YAML until the bundle is rewritten, never read stale.

    python -m whatif.specs.precompiled     # rewrite the bundle (tests/test_precompiled.py checks it is current)
"""
from __future__ import annotations

import hashlib
import pickle
from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parents[1] / "roofline" / "data"   # (profiles.SHIPPED_DATA_DIR)
FORMAT = 1   # the bundle's layout: {"format": FORMAT, "files": {yaml file name: (sha256 hex, pickled data)}}
BUNDLE = "precompiled.pickle"


def digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


@cache
def _bundle(folder: Path) -> dict:
    path = folder / BUNDLE
    if not path.is_file():
        return {}
    bundle = pickle.loads(path.read_bytes())   # (a file shipped inside the package, written by write() below)
    return bundle.get("files", {}) if bundle.get("format") == FORMAT else {}


def lookup(path: Path):
    """The parsed mapping of shipped YAML `path` from its folder's bundle (a fresh copy each call), or None
    when the bundle has no entry for it or the YAML changed since the bundle was written."""
    entry = _bundle(path.parent).get(path.name)
    if entry is None or entry[0] != digest(path.read_bytes()):
        return None
    return pickle.loads(entry[1])


def write(folder: Path) -> Path:
    """Parse every *.yaml in `folder` (as read_yaml does a shipped file) into the folder's bundle."""
    from .safe_yaml import load_mapping
    files = {}
    for path in sorted(folder.glob("*.yaml")):
        files[path.name] = (digest(path.read_bytes()), pickle.dumps(load_mapping(path, shipped=True), protocol=4))
    out = folder / BUNDLE
    out.write_bytes(pickle.dumps({"format": FORMAT, "files": files}, protocol=4))
    _bundle.cache_clear()
    return out


def refresh(written: Path) -> None:
    """After a fitter rewrote `written`: rewrite the bundle when it is one of the shipped fit tables."""
    if Path(written).resolve().parent == DATA_DIR:
        write(DATA_DIR)


if __name__ == "__main__":
    print(f"wrote {write(DATA_DIR)}")
