"""Which simulator modules the accelerator compiles, and the key that names a build of them."""
from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES

# The hot path (Session 64 A / 65 A's profile and builds; re-measured in Session 71 A, docs/accuracy.md): without
# the Scheduler (core + its Admission and DecodingSet traits) the rest gains nothing (a compiled Seq read by an
# interpreted scheduler was slower), with it the whole process is ~1.2-1.4x faster.
HOT = (
    "whatif.simulator.decode_run",
    "whatif.simulator.replica",
    "whatif.simulator.clock",
    "whatif.simulator.block_manager",
    "whatif.simulator.cluster",
    "whatif.simulator.iteration_time",
    "whatif.simulator.log",
    "whatif.simulator.scheduling.sequence",
    "whatif.simulator.scheduling.decoding",
    "whatif.simulator.scheduling.admission",
    "whatif.simulator.scheduling.core",
    "whatif.simulator.scheduling.token_ratio",
    "whatif.simulator.scheduling.policy",
    "whatif.simulator.scheduling.prefill_first",
    "whatif.simulator.scheduling.decode_first",
    "whatif.simulator.scheduling.chunked_prefill",
    "whatif.simulator.scheduling.beside_decodes",
    "whatif.simulator.scheduling.static_batching",
)

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # holds whatif/


def source_path(module: str, root: str = PACKAGE_ROOT) -> str:
    return os.path.join(root, *module.split(".")) + ".py"


def abi() -> str:
    """The extension ABI a build is for (e.g. '.cpython-311-x86_64-linux-gnu.so')."""
    return EXTENSION_SUFFIXES[0]


def sources_key(root: str = PACKAGE_ROOT) -> str:
    """A hash of the hot modules' sources (their bytes, in HOT's order) and the Python ABI: ~0.3 ms, read once a
    process (measured in Session 71 A). A missing source gives '' (no build can match). The other modules need not
    be hashed: compiled code calls them as Python, and mypyc copies no value out of them (it would inline a `Final`
    constant; the package declares none: tests/test_accel_loader.py)."""
    import hashlib   # (here: ~2 ms of OpenSSL at import, paid only when a cache folder exists)
    h = hashlib.sha256(abi().encode() + sys.version.encode())
    for module in HOT:
        try:
            with open(source_path(module, root), "rb") as f:
                h.update(module.encode() + b"\0" + f.read() + b"\0")
        except OSError:
            return ""
    return h.hexdigest()[:24]


def cache_dir() -> str:
    """$WHATIF_ACCEL_DIR, else $XDG_CACHE_HOME/whatif/accel, else ~/.cache/whatif/accel."""
    explicit = os.environ.get("WHATIF_ACCEL_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "whatif", "accel")


def build_folder_name(key: str, mypy_version: str) -> str:
    """A build's folder: the sources' key, then the mypy that compiled it (several may sit side by side)."""
    return f"{key}-mypy{mypy_version}"
