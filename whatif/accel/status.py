"""One line: whether the simulator runs compiled or pure Python in this process, and why."""
from __future__ import annotations

import os

from . import finder, modules


def line() -> str:
    if finder.disabled():
        return "pure Python: WHATIF_ACCEL=0"
    folder, reason = finder.find_build(modules.PACKAGE_ROOT, modules.cache_dir())
    if folder is None:
        return reason
    import whatif.simulator.decode_run as probe   # the finder is installed by whatif.simulator
    if not probe.__file__.endswith(modules.abi()):
        return f"pure Python: a build matches ({folder}) but {probe.__name__} loaded from {probe.__file__}"
    return f"compiled ({len(modules.HOT)} modules): {os.path.basename(folder)} in {os.path.dirname(folder)}"
