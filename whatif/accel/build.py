"""`python3 -m whatif.accel build`: compile modules.HOT with mypyc into the accelerator's cache.

The sources are copied to a temporary folder first and compiled there (nothing is written beside a .py: an editable
install would run a stale .so silently), and the key is taken from that copy, so an edit made during the build
gives a key the finder will not match. The build lands in a temporary name, then is renamed and marked complete.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from . import finder, modules

SETUP = """
import sys
from setuptools import setup
from mypyc.build import mypycify
paths, group, mypy_cache = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
sys.argv[1:] = sys.argv[4:]
# --no-site-packages: numpy, pandas, plotly are Any to mypyc (generic calls, as the interpreter makes them); followed,
# their sources took the build past 3 GB and minutes (Session 71 A)
setup(name=group, ext_modules=mypycify(paths + ["--follow-imports=silent", "--ignore-missing-imports",
                                                 "--no-site-packages", "--disable-error-code=annotation-unchecked",
                                                 "--cache-dir=" + mypy_cache],
                                       group_name=group, target_dir="c_sources"))
"""


class BuildError(Exception):
    """What the build needs and did not find, or what failed, in one line."""


def mypy_version() -> str:
    try:
        import mypyc.build  # noqa: F401
        from mypy.version import __version__
    except ImportError:
        raise BuildError("mypy is not installed: pip install 'whatif[accel]' (mypy>=1.10)") from None
    return __version__


def check_compiler() -> None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        raise BuildError(f"no C compiler: '{cc}' (Python's CC) is not on PATH; install gcc or clang")
    header = os.path.join(sysconfig.get_paths()["include"], "Python.h")
    if not os.path.isfile(header):
        raise BuildError(f"no Python headers: {header} is missing (e.g. apt-get install python3-dev)")


def copy_sources(dest: str) -> None:
    """The whatif package's .py files (mypy reads the modules the hot ones import) under dest/whatif."""
    src = os.path.join(modules.PACKAGE_ROOT, "whatif")
    shutil.copytree(src, os.path.join(dest, "whatif"),
                    ignore=lambda d, names: [n for n in names if not (n.endswith(".py")
                                                                      or os.path.isdir(os.path.join(d, n)))
                                             or n == "__pycache__"])


def build(cache: str | None = None, force: bool = False) -> str:
    """Build (or find) the compiled hot set for the current sources; the build's folder."""
    version = mypy_version()
    check_compiler()
    cache = cache or modules.cache_dir()
    os.makedirs(cache, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="whatif-accel-") as tmp:
        src = os.path.join(tmp, "src")
        copy_sources(src)
        key = modules.sources_key(src)
        folder = os.path.join(cache, modules.build_folder_name(key, version))
        if os.path.isfile(os.path.join(folder, finder.COMPLETE)) and not force:
            return folder
        paths = [os.path.relpath(modules.source_path(m, src), src) for m in modules.HOT]
        out = os.path.join(tmp, "out")
        proc = subprocess.run([sys.executable, "-c", SETUP, ",".join(paths), finder.GROUP,
                               os.path.join(tmp, "mypy_cache"), "build_ext", "--build-lib", out,
                               "--build-temp", os.path.join(tmp, "obj")],
                              cwd=src, capture_output=True, text=True)
        if proc.returncode != 0:
            log = os.path.join(cache, "last-build-error.log")
            with open(log, "w") as f:
                f.write(proc.stdout + proc.stderr)
            lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
            errors = [line for line in lines if "error" in line.lower()] or lines[-1:] or ["(no output)"]
            raise BuildError(f"mypyc failed (the full log: {log}): {errors[0]}")
        staging = tempfile.mkdtemp(prefix="partial-", dir=cache)   # (its own: two builds at once do not mix)
        shutil.copytree(out, staging, dirs_exist_ok=True)
        with open(os.path.join(staging, finder.COMPLETE), "w") as f:
            f.write(f"mypy {version}\npython {sys.version.split()[0]}\n" + "\n".join(modules.HOT) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(staging, folder)   # (complete as it appears under its key)
    return folder
