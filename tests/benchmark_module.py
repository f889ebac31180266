"""The benchmark scripts as modules for the tests: benchmarks/ is a folder of scripts, not a package, so it is
put on the import path and a script imported by its name (a script that imports a sibling, as curve_reference
imports e2e_reference, then gets the same module)."""
import importlib
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str):
    """benchmarks/<name>.py, imported once as the module `name`."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(name)
