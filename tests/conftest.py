"""Test-wide settings: the Triton interpreter, and the `slow` marker (accuracy pins and refits) that the
default run leaves out; `--slow` or WHATIF_SLOW=1 (what .ci/run sets) runs them too."""
import os

from hypothesis import settings

# Property tests draw the same examples on every run: a default run must not pass or fail by chance.
settings.register_profile("whatif", derandomize=True)
settings.load_profile("whatif")

# Triton kernels run on the CPU interpreter unless a GPU run asks otherwise (WHATIF_TEST_GPU=1). It must be set
# before any kernel module is imported: triton.jit reads it when it decorates.
if os.environ.get("WHATIF_TEST_GPU") != "1":
    os.environ.setdefault("TRITON_INTERPRET", "1")


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", help="also run the tests marked slow (accuracy pins, refits)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: an accuracy pin or refit (seconds to minutes); run with --slow")


def run_slow(config) -> bool:
    return config.getoption("--slow") or os.environ.get("WHATIF_SLOW") == "1" or "slow" in config.getoption("-m")


def pytest_collection_modifyitems(config, items):
    if run_slow(config):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:   # deselected, not skipped: the summary counts them apart
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
