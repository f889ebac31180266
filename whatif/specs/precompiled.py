"""The shipped YAML precompiled: each folder of FOLDERS (the fit tables, the model, hardware and engine
profiles) has a precompiled.pickle of its files parsed, each entry keyed by its YAML's length and CRC-32, so a cold
process unpickles what it reads (~1 ms) instead of importing PyYAML and parsing (~25 ms for an estimate).
An entry is used only while its YAML's digest matches: an edited profile or refitted table (the fitters
rewrite the YAML, then the bundle) is parsed from the YAML until the bundle is rewritten, never read stale.

    python -m whatif.specs.precompiled     # rewrite the bundles (tests/test_cold_start.py checks they are current)
"""
from __future__ import annotations

import pickle
import zlib
from functools import cache
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
DATA_DIR = PACKAGE_DIR / "roofline" / "data"   # (profiles.SHIPPED_DATA_DIR)
FOLDERS = (DATA_DIR, PACKAGE_DIR / "model_profiles", PACKAGE_DIR / "hardware_profiles",
           PACKAGE_DIR / "engine_profiles", PACKAGE_DIR / "engine_profiles" / "versions")
FORMAT = 2   # the bundle's layout: {"format": FORMAT, "files": {yaml file name: (digest, pickled data)}}
BUNDLE = "precompiled.pickle"


def digest(text: bytes) -> str:
    """The YAML's length and CRC-32: any edit shows (this guards against a stale entry, not an attacker), and
    zlib loads in well under a millisecond where hashlib's OpenSSL takes ~4 ms of a cold start."""
    return f"{len(text)}:{zlib.crc32(text):08x}"


@cache
def _bundle(folder: Path) -> dict:
    path = folder / BUNDLE
    if not path.is_file():
        return {}
    bundle = pickle.loads(path.read_bytes())   # (a file shipped inside the package, written by write() below)
    return bundle.get("files", {}) if bundle.get("format") == FORMAT else {}


def lookup(path: Path):
    """The parsed mapping of shipped YAML `path` (resolved) from its folder's bundle (a fresh copy each call), or None
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
    """After a fitter rewrote `written`: rewrite its folder's bundle when it is one of the shipped folders."""
    folder = Path(written).resolve().parent
    if folder in FOLDERS:
        write(folder)


if __name__ == "__main__":
    for folder in FOLDERS:
        print(f"wrote {write(folder)}")
