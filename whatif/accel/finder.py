"""Serve a compiled hot module from the accelerator's cache when it was built from the current sources.

Installed at sys.meta_path[0] when whatif.simulator is imported (cheap: one environment read and one stat when
nothing is built). The first hot import hashes the hot sources (modules.sources_key) and looks for a complete build
of that key; any mismatch (an edited source, another Python, a half-written build) serves the pure-Python module,
so a compiled module never runs stale code. WHATIF_ACCEL=0 turns it off.
"""
from __future__ import annotations

import os
import sys
from importlib.machinery import ExtensionFileLoader, ModuleSpec

from . import modules

COMPLETE = "complete"          # written before a build takes its key's name: a folder without it is never used
GROUP = "whatif_accel"         # mypyc's shared library is the top-level module GROUP + "__mypyc"


class AccelFinder:
    """A meta-path finder for modules.HOT and the build's shared library; None (the normal import) otherwise."""

    def __init__(self, root: str = modules.PACKAGE_ROOT, cache: str | None = None):
        self.root = root
        self.cache = cache or modules.cache_dir()
        self._build: str | None = None
        self.reason = ""           # why the build is (not) used, once resolved
        self.resolved = False

    def build(self) -> str | None:
        """The folder of a complete build whose key is the current sources' (resolved once), else None."""
        if not self.resolved:
            self.resolved = True
            self._build, self.reason = find_build(self.root, self.cache)
        return self._build

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in _SERVED:
            return None
        folder = self.build()
        if folder is None:
            return None
        parts = fullname.split(".")
        so = os.path.join(folder, *parts[:-1], parts[-1] + modules.abi())
        if not os.path.isfile(so):
            return None
        return ModuleSpec(fullname, ExtensionFileLoader(fullname, so), origin=so)


_SERVED = frozenset(modules.HOT) | {GROUP + "__mypyc"}


def find_build(root: str, cache: str) -> tuple[str | None, str]:
    """(folder, reason): a complete build in `cache` of the sources under `root`, or None and why not."""
    if not os.path.isdir(cache):
        return None, f"pure Python: no accelerator cache at {cache} (python3 -m whatif.accel build)"
    key = modules.sources_key(root)
    if not key:
        return None, "pure Python: a hot module's source is missing"
    builds = sorted(name for name in os.listdir(cache) if name.startswith(key + "-mypy")
                    and os.path.isfile(os.path.join(cache, name, COMPLETE)))
    if not builds:
        stale = [name for name in os.listdir(cache) if "-mypy" in name]
        why = (f"{len(stale)} build(s) of other sources or Python (stale)" if stale else "nothing built")
        return None, f"pure Python: no build of the current sources (key {key}) in {cache}: {why}"
    return os.path.join(cache, builds[-1]), f"compiled: {os.path.join(cache, builds[-1])}"


def disabled() -> bool:
    return os.environ.get("WHATIF_ACCEL", "").strip() == "0"


def install() -> AccelFinder | None:
    """Put an AccelFinder first on sys.meta_path (once); None when WHATIF_ACCEL=0 or no cache folder exists."""
    for finder in sys.meta_path:
        if isinstance(finder, AccelFinder):
            return finder
    if disabled() or not os.path.isdir(modules.cache_dir()):
        return None
    finder = AccelFinder()
    sys.meta_path.insert(0, finder)
    return finder


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, AccelFinder)]
