"""The committed measurements (whatif/validate/measurements/<gpu>/) are test data: calibrating on them again gives
the committed calibration file, and its error on the held-out rows stays at the figure recorded with it. Every
shipped efficiency (the default model and each committed calibration) is physical."""
from __future__ import annotations

from pathlib import Path

import pytest

from whatif.specs.hardware import load_component
from whatif.specs.profiles import read_yaml
from whatif.roofline.efficiency import DEFAULT_FILE, calibrated_efficiency
from whatif.validate.calibrate import calibrate, calibration_document, held_out_report
from whatif.validate.table import MEASUREMENTS_DIR
from whatif.validate.table import read_tables

CALIBRATIONS = sorted(MEASUREMENTS_DIR.glob("*/calibration.yaml"))


def test_there_are_committed_measurements():
    assert {p.parent.name for p in CALIBRATIONS} >= {"a100-sxm-80gb", "h100-sxm"}


@pytest.fixture(scope="module", params=CALIBRATIONS, ids=lambda p: p.parent.name)
def committed(request):
    path: Path = request.param
    doc = read_yaml(path)
    tables = [path.parent / name for name in doc["calibration"]["tables"]]
    cal = calibrate(read_tables(tables), doc["gpu"], tuple(map(str, tables)))
    return path, doc, cal


@pytest.mark.slow
def test_calibration_is_reproducible(committed):
    path, doc, cal = committed
    again = calibration_document(cal, held_out_report(cal))
    assert again["classes"] == doc["classes"], f"{path}: refitting gives other parameters"
    assert again["calibration"]["held_out"] == doc["calibration"]["held_out"]


@pytest.mark.slow
def test_held_out_error_stays_under_the_recorded_figure(committed):
    path, doc, cal = committed
    gpu = load_component(doc["gpu"], "gpu")
    recorded = doc["calibration"]["held_out"]["calibrated"]["mape"]
    from whatif.validate.calibrate import errors
    e = errors(cal.held_out, calibrated_efficiency(gpu, str(path)), gpu)
    assert abs(e).mean() <= recorded * (1 + 1e-5)
    assert recorded < doc["calibration"]["held_out"]["default"]["mape"], "calibration made held-out error worse"


def test_committed_reference_is_package_data(tmp_path, monkeypatch):
    """`whatif report --validation` scores the committed tables from any working directory (an installed whatif
    has no reference/ folder), with validate/regime.py's regimes and the default fit's split."""
    from whatif.validate.accuracy import error_stats
    from whatif.validate.reference import committed_measurements
    from whatif.validate.regime import REGIMES
    monkeypatch.chdir(tmp_path)
    rows = committed_measurements()
    assert {r.gpu for r in rows} == {"a100-sxm-80gb", "h100-sxm"}
    assert {r.regime for r in rows} <= set(REGIMES) and {r.split for r in rows} == {"train", "held-out"}
    gemm = [r for r in rows if r.family == "gemm" and r.split == "held-out"]
    assert len(gemm) > 400 and error_stats(gemm)["mape"] < 0.15


def test_raw_vidur_data_is_read_from_a_named_folder(tmp_path, monkeypatch, capsys):
    from whatif.cli import main
    monkeypatch.chdir(tmp_path)   # no reference/vidur-profiling here
    assert main(["validate", "reference", "--gpu", "h100-sxm", "--out", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert "--vidur" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("path", [DEFAULT_FILE, *CALIBRATIONS], ids=lambda p: p.parent.name + "/" + p.name)
def test_every_shipped_class_efficiency_is_physical(path):
    """A fitted efficiency above 1 (faster than the datasheet) is a bug in the data or the model, never a result."""
    doc = read_yaml(path)
    entries = doc["gpus"].values() if "gpus" in doc else [doc]
    for entry in entries:
        for cls, params in entry["classes"].items():
            for key in ("compute_eff", "memory_eff"):
                if key in params:
                    assert 0 < params[key] <= 1, (path.name, cls, key, params[key])
            assert params.get("overhead_s", 0) >= 0 and params.get("smooth", 0) >= 0, (path.name, cls, params)
