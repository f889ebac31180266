"""The install is light: the core dependencies are what predictions, simulations and reports need, torch and
triton come only with the validate extra, the test tools pull no torch, and `whatif --version` answers."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import whatif
from whatif.cli import main

tomllib = pytest.importorskip("tomllib")      # Python 3.11+; 3.10 has no TOML reader in the standard library
ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_the_core_install_is_what_the_main_commands_need():
    assert _names(PROJECT["dependencies"]) == {"numpy", "pyyaml", "pandas", "plotly"}


def test_torch_and_triton_come_only_with_validate():
    extras = {name: _names(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}
    assert extras["validate"] == {"torch", "triton"}
    for name, packages in extras.items():
        if name != "validate":
            assert not packages & {"torch", "triton"}, name
    assert {"pytest", "hypothesis", "ruff", "pyarrow"} <= extras["dev"]


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"whatif {whatif.__version__}"
    assert whatif.__version__ == PROJECT["version"]


def test_predicting_simulating_and_reporting_import_no_gpu_stack():
    code = ("import sys; from whatif.cli import main; "
            "main(['estimate', '--json']); main(['simulate', '--requests', '20', '--rate', '5', '--json', "
            "'--no-progress']); import whatif.reports.build; "
            "sys.stderr.write(str(sorted({'torch', 'triton'} & set(sys.modules))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip().endswith("[]"), out.stderr
