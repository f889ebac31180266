"""validate/ without a GPU: the runner's dry run end to end, the measurement table, regimes and splits,
calibration (recovers a known model, reports held-out error, refuses dry runs) and the accuracy report."""
from __future__ import annotations

import importlib.util
import json
import math
from dataclasses import replace

import numpy as np
import pytest

from whatif.cli import main
from whatif.errors import WhatifError
from whatif.specs.hardware import load_component
from whatif.roofline.efficiency import ClassParams, Efficiency, default_efficiency
from whatif.roofline.ops import gemm, streaming
from whatif.roofline.timing import time_op
from whatif.validate.accuracy import group_stats, overall, score
from whatif.validate.calibrate import calibrate, held_out_report
from whatif.validate.cases import Case, regime
from whatif.validate.table import COLUMNS, Row, op_columns, read_table, write_table

H100 = load_component("h100-sxm", "gpu")


def _row(op, measured_s, split="train", family=None, kernel="k") -> Row:
    return Row(gpu="h100-sxm", device="test", family=family or op.op_class, kernel=kernel, dtype="bf16", shape="{}",
               regime=regime(op, H100), split=split, status="ok", check_error=0.0, measured_s=measured_s,
               predicted_s=float("nan"), source="synthetic", **op_columns(op))


# ---------------------------------------------------------------- cases and table

def test_regimes_follow_the_roofline():
    assert regime(streaming("copy", "elementwise", 1024, 1, 1, 0, 2, "bf16"), H100) == "launch-bound"
    assert regime(gemm("g", 1, 8192, 8192, 2, 2, "bf16"), H100) == "memory-bound"
    assert regime(gemm("g", 8192, 8192, 8192, 2, 2, "bf16"), H100) == "compute-bound"
    assert regime(gemm("g", 256, 8192, 8192, 2, 2, "bf16"), H100) == "ridge"


def test_every_third_shape_is_held_out_for_all_its_dtypes():
    splits = [Case("copy", d, {"elements": 1}, i).split for i in range(6) for d in ("bf16", "fp32")]
    assert splits == ["train"] * 4 + ["held-out"] * 2 + ["train"] * 4 + ["held-out"] * 2


def test_table_round_trip_and_op_rebuild(tmp_path):
    op = gemm("g", 64, 4096, 4096, 2, 2, "bf16")
    path = tmp_path / "t.csv"
    write_table(path, [_row(op, 1e-5)])
    (back,) = read_table(path)
    rebuilt = back.op()
    assert rebuilt.flops == pytest.approx(op.flops) and rebuilt.hbm_bytes == pytest.approx(op.hbm_bytes)
    eff = default_efficiency(H100)
    assert time_op(rebuilt, H100, eff).time_s == pytest.approx(time_op(op, H100, eff).time_s, rel=1e-5)


@pytest.mark.parametrize("edit,needle", [
    (lambda text: text.replace("measured_s", "measured"), "missing column(s) measured_s"),
    (lambda text: text.replace(",1e-05,", ",fast,"), "measured_s 'fast' is not a number"),
    (lambda text: text.splitlines()[0] + "\n", "has no rows"),
])
def test_bad_tables_give_one_line_errors(tmp_path, capsys, edit, needle):
    path = tmp_path / "t.csv"
    write_table(path, [_row(gemm("g", 64, 4096, 4096, 2, 2, "bf16"), 1e-5)])
    path.write_text(edit(path.read_text()))
    with pytest.raises(WhatifError, match="t.csv"):
        read_table(path)
    assert main(["validate", "report", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- the runner's dry run

# The dry run still runs the Triton kernels (interpreted) against torch: both come with the validate extra only.
needs_kernels = pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("torch", "triton")),
                                   reason="torch and triton are not installed (pip install 'whatif[validate]')")


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("dry")
    assert main(["validate", "run", "--dry-run", "--families", "copy,rmsnorm", "--out", str(out), "--quiet"]) == 0
    return out


@needs_kernels
def test_dry_run_writes_a_checked_table_and_a_device_record(dry_run):
    rows = read_table(dry_run / "measurements.csv")
    assert {r.family for r in rows} == {"copy", "rmsnorm"}
    assert all(r.status == "ok" and r.check_error <= 5e-3 and r.measured_s > 0 for r in rows)
    assert all(r.predicted_s > 0 and r.gpu == "h100-sxm" and r.source.startswith("dry run") for r in rows)
    assert {r.split for r in rows} == {"train", "held-out"}
    record = json.loads((dry_run / "device.json").read_text())
    for key in ("name", "torch", "triton", "python", "date_utc", "cases", "ok", "skipped", "wall_s"):
        assert key in record
    assert record["ok"] == len(rows) == record["cases"]


@needs_kernels
def test_calibration_refuses_a_dry_run(dry_run, capsys):
    assert main(["validate", "calibrate", str(dry_run / "measurements.csv")]) == 2
    assert "dry run" in capsys.readouterr().err


@needs_kernels
def test_a_zero_budget_skips_every_case_and_lists_them(tmp_path):
    from whatif.validate.runner import run
    record = run(str(tmp_path), ("copy",), None, dry_run=True, budget_s=0.0, log=lambda *_: None)
    assert record["ok"] == 0 and len(record["skipped"]) == record["cases"] > 0
    assert (tmp_path / "measurements.csv").read_text().strip() == ",".join(COLUMNS)


@needs_kernels
def test_a_wrong_kernel_is_recorded_not_timed(tmp_path, monkeypatch):
    from whatif.validate.kernels import copy as copy_kernel
    from whatif.validate.runner import run
    monkeypatch.setattr(copy_kernel, "reference", lambda inputs, shape: inputs["x"].float() * 2)
    record = run(str(tmp_path), ("copy",), None, dry_run=True, log=lambda *_: None)
    rows = read_table(tmp_path / "measurements.csv")
    assert record["wrong"] == len(rows) and all(r.status.startswith("wrong result") for r in rows)
    assert all(math.isnan(r.measured_s) for r in rows)


def test_run_needs_a_gpu_without_dry_run(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert main(["validate", "run", "--out", str(tmp_path)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [
    (["validate", "run", "--dry-run", "--families", "gemm,nope"], "'nope' is not a kernel family"),
    (["validate", "run", "--dry-run", "--budget", "-1"], "--budget"),
    (["validate", "calibrate"], "name at least one measurement table"),
    (["validate", "report", "--reference", "--gpu", "h200-sxm"], "Vidur measured no kernels on 'h200-sxm'"),
    (["validate"], "name a subcommand"),
])
def test_cli_errors(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- calibration

def _synthetic(truth: Efficiency) -> list[Row]:
    """GEMMs and norms timed by a known efficiency model: a fit must recover it on the held-out shapes."""
    rows = []
    for i, (m, n, k) in enumerate([(m, n, k) for m in (1, 16, 128, 1024, 4096) for n in (4096, 14336)
                                   for k in (4096, 8192)]):
        op = gemm("g", m, n, k, 2, 2, "bf16")
        rows.append(_row(op, time_op(op, H100, truth).time_s, "held-out" if i % 3 == 2 else "train"))
    for i, tokens in enumerate((1, 4, 16, 64, 256, 1024, 4096, 16384, 32768)):
        op = streaming("norm", "norm", tokens * 4096, 1, 1, 4, 2, "bf16", extra_bytes=8192)
        rows.append(_row(op, time_op(op, H100, truth).time_s, "held-out" if i % 3 == 2 else "train"))
    return rows


def test_calibration_recovers_a_known_model_on_held_out_shapes():
    base = default_efficiency(H100)
    truth = replace(base, classes={**base.classes, "gemm": ClassParams(0.62, 0.71, 7e-6, 0.0),
                                   "norm": ClassParams(1.0, 0.42, 3e-6, 0.0)}, engine=None)   # a class model
    cal = calibrate(_synthetic(truth))
    report = held_out_report(cal)
    assert report["calibrated"]["mape"] < 0.01 < report["default"]["mape"]
    assert cal.efficiency.classes["gemm"].compute_eff == pytest.approx(0.62, abs=0.02)
    assert cal.efficiency.classes["norm"].memory_eff == pytest.approx(0.42, abs=0.02)
    assert "attention_decode" in cal.kept


def test_calibration_is_deterministic():
    rows = _synthetic(default_efficiency(H100))
    assert calibrate(rows).efficiency == calibrate(rows).efficiency


def test_mixed_gpus_need_a_choice():
    rows = _synthetic(default_efficiency(H100))
    with pytest.raises(WhatifError, match="several GPUs"):
        calibrate(rows + [replace(rows[0], gpu="a100-sxm-80gb")])


# ---------------------------------------------------------------- accuracy report

def test_accuracy_groups_name_the_worst_shapes():
    eff = default_efficiency(H100)
    rows = _synthetic(eff)
    rows[0] = replace(rows[0], measured_s=rows[0].measured_s * 3, kernel="the slow one")
    scored = score(rows, lambda gpu: (H100, eff))
    assert overall(scored)["rows"] == len(rows)
    worst = max(group_stats(scored), key=lambda g: g.mape)
    assert worst.worst[0].row.kernel == "the slow one"
    assert worst.worst[0].error == pytest.approx(-2 / 3, rel=1e-6)
    others = [s.error for s in scored if s.row.kernel != "the slow one"]
    assert np.max(np.abs(others)) < 1e-9


def test_report_writes_the_csv_the_html_report_reads(tmp_path, capsys):
    from whatif.validate.table import read_measurements
    table, csv_out = tmp_path / "t.csv", tmp_path / "scored.csv"
    write_table(table, _synthetic(default_efficiency(H100)))
    assert main(["validate", "report", str(table), "--csv", str(csv_out)]) == 0
    out = capsys.readouterr().out
    assert "MAPE 0.0%" in out and "worst shapes:" in out
    assert len(read_measurements(str(csv_out))) == 29


def test_report_html_page_has_the_validation_section(tmp_path, capsys):
    pytest.importorskip("plotly")
    table, page = tmp_path / "t.csv", tmp_path / "acc.html"
    write_table(table, _synthetic(default_efficiency(H100)))
    assert main(["validate", "report", str(table), "--html", str(page), "--split", "held-out"]) == 0
    html = page.read_text()
    assert 'id="validation"' in html and "Predicted versus measured kernel time" in html
    assert "report: " in capsys.readouterr().err


def test_calibrate_and_report_need_neither_torch_nor_triton():
    import subprocess
    import sys
    code = ("import sys, whatif.cli.validate, whatif.validate.calibrate, whatif.validate.accuracy, "
            "whatif.validate.reference; print('torch' in sys.modules or 'triton' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("name,profile", [("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA H200", "h200-sxm"),
                                          ("NVIDIA GH200 480GB", "gh200-144gb"), ("NVIDIA H100 PCIe", "h100-pcie"),
                                          ("NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"),
                                          ("NVIDIA H200 NVL", "h200-nvl")])
def test_device_names_map_to_profiles(name, profile):
    from whatif.validate.device import profile_for
    assert profile_for(name) == profile
    load_component(profile, "gpu")


def test_an_unknown_device_needs_gpu():
    from whatif.validate.device import profile_for
    with pytest.raises(WhatifError, match="--gpu"):
        profile_for("Tesla V100-SXM2-16GB")
