"""The optional compiled simulator (whatif/accel): the loader serves a build only for the current sources.

The default run never compiles: the loader tests use fake build folders; the one build is marked slow and skips
without mypy or a C compiler."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from whatif.accel import build as accel_build
from whatif.accel import finder, modules, status
from whatif.accel.__main__ import main as accel_main

ROOT = Path(__file__).resolve().parents[1]


def fake_build(cache: Path, key: str, complete: bool = True) -> Path:
    """A build folder holding an empty file where each hot module's .so would be."""
    folder = cache / modules.build_folder_name(key, "9.9")
    for module in modules.HOT:
        parts = module.split(".")
        so = folder.joinpath(*parts[:-1], parts[-1] + modules.abi())
        so.parent.mkdir(parents=True, exist_ok=True)
        so.write_bytes(b"")
    if complete:
        (folder / finder.COMPLETE).write_text("fake\n")
    return folder


def test_a_build_of_the_current_sources_is_served(tmp_path):
    folder = fake_build(tmp_path, modules.sources_key())
    f = finder.AccelFinder(cache=str(tmp_path))
    spec = f.find_spec("whatif.simulator.decode_run")
    assert spec is not None and spec.origin == str(folder / "whatif" / "simulator" / ("decode_run" + modules.abi()))
    assert f.reason.startswith("compiled")
    assert f.find_spec("whatif.simulator.metrics") is None   # (not a hot module: the normal import)


def test_a_stale_build_is_not_served(tmp_path):
    fake_build(tmp_path, "0" * 24)   # another source tree's key
    f = finder.AccelFinder(cache=str(tmp_path))
    assert f.find_spec("whatif.simulator.decode_run") is None
    assert f.reason.startswith("pure Python") and "stale" in f.reason


def test_an_edited_source_changes_the_key(tmp_path):
    src = tmp_path / "src"
    for module in modules.HOT:
        dest = Path(modules.source_path(module, str(src)))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(modules.source_path(module), dest)
    assert modules.sources_key(str(src)) == modules.sources_key()
    path = Path(modules.source_path("whatif.simulator.decode_run", str(src)))
    path.write_text(path.read_text() + "\n# edited\n")
    fake_build(tmp_path / "cache", modules.sources_key())
    f = finder.AccelFinder(root=str(src), cache=str(tmp_path / "cache"))
    assert f.find_spec("whatif.simulator.decode_run") is None and "stale" in f.reason


def test_a_half_written_build_is_not_served(tmp_path):
    fake_build(tmp_path, modules.sources_key(), complete=False)
    assert finder.AccelFinder(cache=str(tmp_path)).find_spec("whatif.simulator.replica") is None


def test_a_missing_cache_is_pure_and_installs_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("WHATIF_ACCEL_DIR", str(tmp_path / "none"))
    monkeypatch.delenv("WHATIF_ACCEL", raising=False)
    finder.uninstall()
    try:
        assert finder.install() is None
        assert not any(isinstance(f, finder.AccelFinder) for f in sys.meta_path)
        assert status.line().startswith("pure Python: no accelerator cache")
    finally:
        finder.uninstall()


def test_whatif_accel_0_turns_it_off(tmp_path, monkeypatch):
    fake_build(tmp_path, modules.sources_key())
    monkeypatch.setenv("WHATIF_ACCEL_DIR", str(tmp_path))
    monkeypatch.setenv("WHATIF_ACCEL", "0")
    finder.uninstall()
    try:
        assert finder.install() is None
        assert status.line() == "pure Python: WHATIF_ACCEL=0"
    finally:
        finder.uninstall()


def test_the_cache_folder_defaults(monkeypatch):
    monkeypatch.delenv("WHATIF_ACCEL_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x")
    assert modules.cache_dir() == "/x/whatif/accel"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert modules.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "whatif", "accel")


def test_the_hot_modules_exist_and_none_is_compiled_in_the_tree():
    for module in modules.HOT:
        source = Path(modules.source_path(module))
        assert source.is_file(), module
        assert not list(source.parent.glob(source.stem + ".*.so")), f"a compiled {module} beside its source"


def test_build_without_mypy_says_so_in_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mypyc.build", None)   # (import fails)
    assert accel_main(["build"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "mypy is not installed" in err


def test_build_without_a_compiler_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(sysconfig, "get_config_var", lambda name: "no-such-cc-whatif" if name == "CC" else None)
    with pytest.raises(accel_build.BuildError, match="no C compiler: 'no-such-cc-whatif'"):
        accel_build.check_compiler()


SIMULATE = ("import json, sys; from whatif.cli import main; "
            "sys.argv[1:] = ['simulate', '--model', 'llama-3-8b', '--hardware', 'h100-sxm', '--rate', '20', "
            "'--requests', '400', '--json']; main()")


def simulate_json(env: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", SIMULATE], env=env, cwd=ROOT, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


@pytest.mark.slow
def test_a_build_runs_compiled_and_gives_the_pure_outputs(tmp_path):
    if importlib.util.find_spec("mypyc") is None:
        pytest.skip("mypy is not installed (the accel extra)")
    try:
        accel_build.check_compiler()
    except accel_build.BuildError as e:
        pytest.skip(str(e))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WHATIF_ACCEL_DIR": str(tmp_path)}
    env.pop("WHATIF_ACCEL", None)
    subprocess.run([sys.executable, "-m", "whatif.accel", "build"], env=env, cwd=ROOT, check=True,
                   capture_output=True)
    line = subprocess.run([sys.executable, "-m", "whatif.accel", "status"], env=env, cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    assert line.startswith("compiled"), line
    compiled = simulate_json(env)
    pure = simulate_json({**env, "WHATIF_ACCEL": "0"})
    assert compiled == pure
    # the simulator's own tests on the compiled tree (a wrong annotation fails only there; the slow ones stay pure)
    tests = sorted(str(p) for pattern in ("test_sim*.py", "test_simulator*.py") for p in (ROOT / "tests").glob(pattern))
    inner = {k: v for k, v in env.items() if k != "WHATIF_SLOW"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests], env=inner,
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-3000:]


def test_no_module_declares_a_final_constant_the_build_could_inline():
    # the key hashes only modules.HOT; a `Final` elsewhere could be copied into the compiled code and go stale
    final = re.compile(r":\s*Final\b|\bFinal\[|import[^\n]*\bFinal\b")
    found = [str(p) for p in (ROOT / "whatif").rglob("*.py") if final.search(p.read_text())]
    assert not found, found
