"""--csv and --parquet: each command writes its documented columns, the values are the JSON's, and a path that
cannot be written is a one-line error before any work."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from whatif.cli import main, result_rows
from whatif.cli.tables import write_rows
from whatif.errors import WhatifError

SIM = ["--requests", "40", "--rate", "4", "--no-progress"]
COMMANDS = {
    "estimate": (["estimate", "--model", "llama-3-8b", "--batch", "4"], result_rows.ESTIMATE_COLUMNS, 1),
    "compare": (["compare", "--model", "llama-3-8b", "--variant", "kivi", "--systems", "h100-sxm,a100-sxm-80gb"],
                result_rows.COMPARE_COLUMNS, 4),
    "kernel": (["kernel", "gemm", "--m", "16", "--n", "4096", "--k", "4096"], result_rows.KERNEL_COLUMNS, 1),
    "simulate": (["simulate", *SIM, "--slo-ttft", "500ms"], result_rows.SIMULATE_COLUMNS, 1),
    "capacity": (["capacity", "--requests", "40", "--no-progress", "--slo-ttft", "500ms", "--hi", "8"],
                 result_rows.CAPACITY_COLUMNS, 1),
}


def _run(capsys, argv) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_writes_its_documented_columns(command, tmp_path, capsys):
    argv, columns, rows = COMMANDS[command]
    path = tmp_path / f"{command}.csv"
    code, _, err = _run(capsys, [*argv, "--csv", str(path)])
    assert code == 0 and f"csv: {path}" in err
    table = pd.read_csv(path)
    assert list(table.columns) == columns and len(table) == rows
    assert all(c.islower() and " " not in c for c in columns)


def test_estimate_row_holds_the_json_figures(tmp_path, capsys):
    argv = COMMANDS["estimate"][0]
    _, out, _ = _run(capsys, [*argv, "--json", "--csv", str(tmp_path / "e.csv")])
    d = json.loads(out)
    row = pd.read_csv(tmp_path / "e.csv").iloc[0]
    for key in ("ttft_s", "tpot_s", "e2e_s", "throughput_tok_s", "max_batch"):
        assert row[key] == pytest.approx(d[key], rel=1e-12)
    assert row["kv_bytes"] == pytest.approx(d["memory"]["kv_cache_bytes"], rel=1e-12)
    assert row["fits"] == d["memory"]["fits"] and row["model"] == "llama-3-8b"


def test_compare_rows_carry_the_ratios_against_the_baseline(tmp_path, capsys):
    argv = COMMANDS["compare"][0]
    _run(capsys, [*argv, "--csv", str(tmp_path / "c.csv")])
    table = pd.read_csv(tmp_path / "c.csv")
    assert list(table["variant"]) == ["baseline", "kivi", "baseline", "kivi"]
    assert table["tpot_speedup"][0] == 1.0
    assert table["tpot_speedup"][2] == pytest.approx(table["tpot_s"][0] / table["tpot_s"][2])
    assert table["kv_bytes"][1] < table["kv_bytes"][0]


def test_parquet_holds_the_same_table(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    argv, columns, _ = COMMANDS["simulate"]
    _run(capsys, [*argv, "--csv", str(tmp_path / "s.csv"), "--parquet", str(tmp_path / "s.parquet")])
    csv, parquet = pd.read_csv(tmp_path / "s.csv"), pd.read_parquet(tmp_path / "s.parquet")
    assert list(parquet.columns) == columns
    assert parquet["ttft_p99_s"][0] == pytest.approx(csv["ttft_p99_s"][0], rel=1e-12)
    assert parquet["requests_arrived"][0] == 40


@pytest.mark.parametrize("flag,path,needle", [
    ("--csv", "{tmp}", "is a directory"),
    ("--csv", "{tmp}/missing/x.csv", "does not exist"),
    ("--parquet", "{tmp}", "is a directory"),
])
def test_a_path_that_cannot_be_written_is_a_one_line_error(flag, path, needle, tmp_path, capsys):
    code, out, err = _run(capsys, ["estimate", flag, path.format(tmp=tmp_path)])
    assert code == 2 and not out and needle in err and len(err.strip().splitlines()) == 1


def test_write_rows_picks_the_format_and_keeps_the_column_order(tmp_path):
    rows = [{"b_s": 1.5, "a_bytes": None}, {"b_s": 2.0, "a_bytes": 3.0}]
    assert write_rows(rows, str(tmp_path / "t.csv"), columns=["a_bytes", "b_s"]) == 2
    table = pd.read_csv(tmp_path / "t.csv")
    assert list(table.columns) == ["a_bytes", "b_s"] and pd.isna(table["a_bytes"][0])
    with pytest.raises(WhatifError, match="valid: csv, parquet"):
        write_rows(rows, str(tmp_path / "t.txt"), fmt="xlsx")


def test_parquet_without_pyarrow_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    code, out, err = _run(capsys, ["estimate", "--parquet", str(tmp_path / "e.parquet")])
    assert code == 2 and not out and "pip install 'whatif[parquet]'" in err
    assert not (tmp_path / "e.parquet").exists()
