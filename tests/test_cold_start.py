"""A cold CLI process pays only for what its command needs (issue 42): the catalogue commands and the estimate
never import numpy (the kernel models evaluate plain floats without it) nor PyYAML (the shipped profiles and fit
tables load from their folders' precompiled bundles, specs/precompiled.py, while they match the YAML), and one
command's run builds only that command's flags (cli.build_parser(only=...))."""
import shutil
import subprocess
import sys

import pytest

from whatif.specs import precompiled
from whatif.cli import COMMANDS, build_parser
from whatif.specs.profiles import SHIPPED_DATA_DIR, read_yaml
from whatif.specs.safe_yaml import load_mapping

CODE = ("import sys\nfrom whatif.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print('imported:', sorted(m for m in ('numpy', 'yaml') if m in sys.modules), file=sys.stderr)")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["list", "models"], ["list", "hardware"],
                                  ["list", "techniques"], ["show", "model", "llama-3-8b"],
                                  ["show", "hardware", "h100-sxm"],
                                  ["estimate", "--model", "llama-3-70b", "--hardware", "dgx-h100", "--tp", "4",
                                   "--no-ops"]])
def test_the_command_imports_neither_numpy_nor_yaml(argv):
    out = subprocess.run([sys.executable, "-c", CODE, *argv], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "imported: []", out.stderr
    assert out.stdout.strip()   # (the command ran and answered)


@pytest.mark.parametrize("folder", precompiled.FOLDERS, ids=lambda f: f.relative_to(precompiled.PACKAGE_DIR).as_posix())
def test_the_precompiled_bundles_are_current(folder):
    """Every shipped YAML (fit tables, model, hardware and engine profiles) has its entry, of the YAML as it is
    now (refresh: python -m whatif.specs.precompiled)."""
    yamls = sorted(folder.glob("*.yaml"))
    assert yamls
    for path in yamls:
        data = precompiled.lookup(path)
        assert data is not None, (f"{path.name} changed since {folder.name}/precompiled.pickle: "
                                  f"run python -m whatif.specs.precompiled")
        assert data == load_mapping(path, shipped=True)
        assert read_yaml(path) == data


def test_every_shipped_yaml_folder_has_a_bundle():
    """(but the committed calibrations, validate/measurements/: read by --efficiency calibrated alone)"""
    measurements = precompiled.PACKAGE_DIR / "validate" / "measurements"
    folders = {p.parent for p in precompiled.PACKAGE_DIR.rglob("*.yaml") if not p.is_relative_to(measurements)}
    assert folders == set(precompiled.FOLDERS)


def test_a_changed_table_is_read_from_its_yaml_not_the_stale_bundle(tmp_path):
    path = tmp_path / "fit.yaml"
    path.write_text("fits:\n  a: 1.0\n")
    precompiled.write(tmp_path)
    assert precompiled.lookup(path) == {"fits": {"a": 1.0}}
    path.write_text("fits:\n  a: 2.0\n")
    assert precompiled.lookup(path) is None
    assert precompiled.lookup(tmp_path / "other.yaml") is None


def test_each_lookup_is_a_fresh_copy():
    path = next(SHIPPED_DATA_DIR.glob("*.yaml"))
    first = precompiled.lookup(path)
    first.clear()
    assert precompiled.lookup(path)


def test_a_bundle_of_another_format_is_ignored(tmp_path):
    path = tmp_path / "fit.yaml"
    shutil.copy(next(SHIPPED_DATA_DIR.glob("*.yaml")), path)
    import pickle
    (tmp_path / precompiled.BUNDLE).write_bytes(pickle.dumps({"format": precompiled.FORMAT + 1, "files": {}}))
    precompiled._bundle.cache_clear()
    assert precompiled.lookup(path) is None


def test_a_refit_elsewhere_leaves_no_bundle(tmp_path):
    """The fitters call refresh() after writing a table: only the shipped folder's bundle is rewritten."""
    path = tmp_path / "kernel_fit.yaml"
    path.write_text("fits: {}\n")
    precompiled.refresh(path)
    assert not (tmp_path / precompiled.BUNDLE).exists()


# Packages only other commands use: a simulation never calls into them (search, reports, validation, claims,
# the catalog's queries, the Python API) nor parses YAML (profiles and fits come from the precompiled bundles).
NOT_FOR_SIMULATE = ("whatif.config_search", "whatif.reports", "whatif.validate", "whatif.claims", "whatif.queries",
                    "whatif.api", "whatif.cli.search", "whatif.cli.validate", "whatif.cli.report", "whatif.cli.compare",
                    "whatif.cli.catalog", "yaml", "pandas", "matplotlib", "scipy")


def test_a_simulation_imports_no_other_commands_modules():
    """`whatif simulate` (the issue 42 speed command, short) loads what it runs and nothing only other commands use."""
    code = ("import sys\nfrom whatif.cli import main\n"
            "main(['simulate', '--model', 'llama-3-8b', '--hardware', 'h100-sxm', '--rate', '20', '--requests', '20', "
            "'--no-progress', '--json'])\n"
            f"print('imported:', sorted(m for m in sys.modules for p in {NOT_FOR_SIMULATE!r} "
            "if m == p or m.startswith(p + '.')), file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stderr.strip().splitlines()[-1] == "imported: []", out.stderr
    assert '"latency"' in out.stdout   # (the simulation ran and answered)


def test_a_run_imports_its_own_command_module_alone():
    code = ("import sys; from whatif.cli import build_parser; build_parser(only='list'); "
            "print(sorted(m for m in sys.modules if m.startswith('whatif.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "['whatif.cli.catalog', 'whatif.cli.common']", out.stderr


def test_building_the_parser_imports_no_roofline_estimate():
    """--help, list and show build the whole parser: its help texts read constants, not the estimate's modules."""
    code = ("import sys; from whatif.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('whatif.roofline.estimate', 'whatif.scenario', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr


def _subcommand(parser, name):
    return next(a for a in parser._actions if a.dest == "command").choices[name]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_run_builds_its_command_as_the_whole_parser_does(command):
    """build_parser(only=...) (what main() builds): the command's flags, help and prog as in the whole parser, and
    no other command's parser built (a run parses its own command alone)."""
    whole, only = build_parser(), build_parser(only=command)
    assert _subcommand(only, command).format_help() == _subcommand(whole, command).format_help()
    assert _subcommand(only, command).prog == _subcommand(whole, command).prog == f"whatif {command}"
    assert list(next(a for a in only._actions if a.dest == "command").choices) == [command]


@pytest.mark.parametrize("first_word", ["", "estimat"])
def test_a_run_of_no_command_builds_names_only(first_word):
    """The top-level --help and a misspelt command: every command by name and help (the help lists them all, the
    error names the valid ones), no command's flags."""
    only = build_parser(only=first_word)
    assert only.format_help() == build_parser().format_help()
    assert all(not _subcommand(only, name)._actions[1:] for name in COMMANDS)


def test_a_whole_process_run_collects_less():
    """main() of the process's own command line raises the young-collection threshold as it starts and freezes
    the collector's generations as it ends (the exit's collection then skips them); main(argv) called from Python
    leaves the caller's collector as it was."""
    code = ("import gc, sys; sys.argv = ['whatif', 'list', 'models']; from whatif.cli import main; main(); "
            "print(gc.get_freeze_count() > 0, gc.get_threshold()[0], gc.get_threshold()[1])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    from whatif.cli import PROCESS_MIDDLE_EVERY, PROCESS_YOUNG_THRESHOLD
    assert out.stdout.strip().splitlines()[-1] == f"True {PROCESS_YOUNG_THRESHOLD} {PROCESS_MIDDLE_EVERY}", out.stderr
    code = ("import gc, sys; from whatif.cli import main; before = gc.get_threshold(); main(['list', 'models']); "
            "print(gc.get_freeze_count(), gc.get_threshold() == before)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "0 True", out.stderr


def test_a_whole_process_simulation_keeps_its_result_to_the_end():
    """A whole process's simulate keeps its result (keep_to_exit: not freed object by object on return), in a
    cycle of its own so that the exit does not free it either; main(argv) from Python keeps nothing."""
    run = "'simulate', '--model', 'llama-3-8b', '--hardware', 'h100-sxm', '--rate', '5', '--requests', '20'"
    code = (f"import sys; sys.argv = ['whatif', {run}]; import whatif.cli as c; c.main(); "
            "from whatif.simulator.metrics import SimulationResult; "
            "print([type(k).__name__ for k in c._KEPT[:-1]], c._KEPT[-1] is c._KEPT)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "['SimulationResult'] True", out.stderr
    code = f"import whatif.cli as c; c.main([{run}]); print(len(c._KEPT))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "0", out.stderr


def test_a_whole_process_runs_blas_on_one_thread_unless_told():
    """main() of the process's own command line sets OPENBLAS_NUM_THREADS=1 before numpy loads (its spinning worker
    threads cost CPU that no command's arrays pay back), leaves a user's value alone, and main(argv) sets nothing."""
    import os
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    show = "import os; print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    code = ("import sys; sys.argv = ['whatif', '--version']; from whatif.cli import main\n"
            f"try: main()\nexcept SystemExit: pass\n{show}")
    for given, expected in ((None, "1"), ("4", "4")):
        run_env = env if given is None else {**env, "OPENBLAS_NUM_THREADS": given}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=run_env)
        assert out.stdout.strip().splitlines()[-1] == expected, out.stderr
    code = f"from whatif.cli import main; main(['list', 'models']); {show}"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert out.stdout.strip().splitlines()[-1] == "None", out.stderr


def test_the_estimates_dataclasses_have_docstrings():
    """dataclass() gives a class without a docstring one from inspect.signature, at every cold start (~1-3 ms for a
    wide class such as EngineSpec): every dataclass an estimate and a simulate create has its own."""
    code = ("import dataclasses, sys\nbare = []\nmake = dataclasses._process_class\n"
            "def spy(cls, *a, **k):\n    if not cls.__dict__.get('__doc__') and cls.__module__.startswith('whatif'):\n"
            "        bare.append(cls.__qualname__)\n    return make(cls, *a, **k)\n"
            "dataclasses._process_class = spy\nfrom whatif.cli import main\n"
            "main(['estimate', '--model', 'llama-3-70b', '--hardware', 'dgx-h100', '--tp', '4', '--no-ops'])\n"
            "main(['simulate', '--requests', '20'])\nprint('bare:', sorted(set(bare)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "bare: []", out.stdout[-500:] + out.stderr[-500:]
