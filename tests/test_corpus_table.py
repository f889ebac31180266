"""The corpus through the one measurement-table path: written as table rows (validate/corpus_rows.py), read
back by the table reader, scored by the accuracy report, and fitted by the same kernel-model search as the
shipped fits (validate/kernel_fit_rows.py), which a calibration then applies."""
from __future__ import annotations

import numpy as np
import pytest

from whatif.errors import WhatifError
from whatif.roofline.efficiency import calibrated_efficiency, default_efficiency
from whatif.roofline.kernel_models.params import GemmParams, kernel_params_from
from whatif.roofline.ops import gemm
from whatif.roofline.timing import time_op
from whatif.specs.hardware import load_component
from whatif.validate import kernel_fit as kf
from whatif.validate.calibrate import calibrate, calibration_document, held_out_report, write_calibration
from whatif.validate.corpus import COMPACT_DIR
from whatif.validate.corpus_rows import corpus_rows
from whatif.validate.kernel_fit_rows import fit_rows
from whatif.validate.table import read_table, write_table


@pytest.fixture(scope="module")
def b200_rows():
    return corpus_rows(COMPACT_DIR, "b200", "vllm", max_rows=120)


def test_corpus_rows_round_trip_through_the_table_reader(b200_rows, tmp_path):
    path = tmp_path / "b200.csv"
    write_table(path, b200_rows)
    back = read_table(path)
    assert [repr(r) for r in back] == [repr(r) for r in b200_rows]   # repr: NaN check_error equals itself
    assert {r.family for r in back} == {"gemm", "attention_prefill", "attention_decode"}
    assert {r.split for r in back} == {"train", "held-out"}
    assert all(r.ok and r.source.startswith("aiconfigurator vllm") for r in back)


def test_the_default_model_predicts_the_b200_table_it_was_fitted_on(b200_rows):
    """In-sample (B200's own corpus fits), through the table path: the error the accuracy report gives."""
    gpu = load_component("b200", "gpu")
    eff = default_efficiency(gpu)
    err = np.array([abs(time_op(r.op(), gpu, eff).time_s / r.measured_s - 1.0) for r in b200_rows])
    assert err.mean() < 0.16, err.mean()


@pytest.mark.slow
def test_rows_and_corpus_frames_are_fitted_by_the_same_search():
    """A GEMM table from the corpus and the corpus frame it came from give the same fit."""
    rows = [r for r in corpus_rows(COMPACT_DIR, "h100-sxm", "vllm", ops=("gemm",), max_rows=200, predict=False)
            if r.dtype == "bf16"]
    by_rows = fit_rows(rows)[("gemm", "bf16")]
    frame = kf.load_tables(COMPACT_DIR, ("gemm",))["gemm"]
    frame = frame[(frame["gpu"] == "h100_sxm") & (frame["framework"] == "vllm") & (frame["dtype"] == "bf16")]
    params, err = kf.fit("gemm", kf.design(kf.subsample(frame, 200), "gemm"), "bf16")
    assert by_rows[1] == len(rows)
    assert by_rows[2] == pytest.approx(err, rel=1e-9)
    assert by_rows[0] == params


@pytest.mark.slow
def test_a_calibration_fits_and_applies_kernel_models(b200_rows, tmp_path):
    cal = calibrate(b200_rows, "b200", ("b200.csv",))
    assert ("gemm", "bf16") in cal.efficiency.kernel_params and cal.efficiency.engine == "vllm"
    path = tmp_path / "cal.yaml"
    write_calibration(path, calibration_document(cal, held_out_report(cal)))
    gpu = load_component("b200", "gpu")
    loaded = calibrated_efficiency(gpu, str(path))
    assert loaded.kernel_params[("gemm", "bf16")] == cal.efficiency.kernel_params[("gemm", "bf16")]
    op = gemm("g", 256, 8192, 8192, 2, 2, "bf16")
    assert time_op(op, gpu, loaded).time_s != time_op(op, gpu, default_efficiency(gpu)).time_s
    assert "gemm bf16" in loaded.provenance and "kernel models" in loaded.provenance


@pytest.mark.parametrize("block,match", [
    ({"gemm": {"bf16": {"eff_mid": 1.5}}}, "eff_mid: 1.5 must be in"),
    ({"gemm": {"bf16": {"floor_s": -1.0}}}, "floor_s: must be a finite number"),
    ({"gemm": {"bf16": {"floor_s": float("nan")}}}, "floor_s: must be a finite number"),
    ({"softmax": {"bf16": {}}}, "kernel model 'softmax' is not valid"),
    ({"gemm": {"int3": {}}}, "dtype 'int3' is not valid"),
    ({"gemm": {"bf16": {"eff_huge": 0.5}}}, "valid: eff_tiny"),
    ([1, 2], "is not a mapping"),
])
def test_bad_kernel_model_blocks_are_refused(block, match):
    with pytest.raises(WhatifError, match=match):
        kernel_params_from(block, "cal.yaml:kernel_models")
    assert kernel_params_from({"gemm": {"bf16": {"eff_mid": 0.5}}}, "x")[("gemm", "bf16")] == GemmParams(eff_mid=0.5)
