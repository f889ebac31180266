"""The validation layer every input goes through (issues 19 and 22), one test per kind of bad input: each names
the field and what is valid on one line, before any work. test_fuzz.py covers the same kinds with generated
cases; these pin the exact behaviour, and check that the fuzz harness itself can fail."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from whatif.cli import main
from whatif.errors import WhatifError, closest, shown
from whatif.specs import checks
from whatif.specs.safe_yaml import load_mapping

ROOT = Path(__file__).resolve().parent.parent
LLAMA = yaml.safe_load((ROOT / "whatif" / "model_profiles" / "llama-3-8b.yaml").read_text())
CALIBRATION = ROOT / "whatif" / "validate" / "measurements" / "h100-sxm" / "calibration.yaml"


def error_of(capsys, *argv) -> str:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    lines = [line for line in err.splitlines() if line.startswith("whatif: error: ")]
    assert len(lines) == 1 and len(lines[0]) < 1000, err
    return lines[0]


def write(tmp_path, name: str, data) -> str:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else yaml.safe_dump(data).encode())
    return str(path)


# ---------------------------------------------------------------- files: encoding, keys, depth, size, aliases

@pytest.mark.parametrize("text,words", [
    (b"name: \xff\xfe\n", ["not UTF-8"]),
    (b"null: 1\n", ["key None", "not a string"]),
    (b"1: a\nb: 2\n", ["key 1"]),
    (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", ["nested deeper than 32"]),
    (b"x: " + b"9" * 400 + b"\n", ["more than 30 digits"]),
    (b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi")),
     ["aliases"]),
    (b"!!python/object/apply:os.system ['true']\n", ["malformed YAML"]),
    (b"a: .nan\n", ["f.yaml.a", "not a finite number"]),
    (b"- 1\n", ["mapping at the top level"]),
])
def test_a_broken_file_is_one_line_naming_it(tmp_path, text, words):
    path = write(tmp_path, "f.yaml", text)
    with pytest.raises(WhatifError) as e:
        load_mapping(path)
    for word in words:
        assert word in str(e.value)
    assert path.split("/")[-1] in str(e.value) and "\n" not in str(e.value)


def test_a_json_config_with_a_huge_integer_or_nan_is_refused(tmp_path):
    config = json.loads((ROOT / "tests" / "data" / "hf_configs" / "llama-3-8b" / "config.json").read_text())
    path = write(tmp_path, "config.json", json.dumps({**config, "num_hidden_layers": 10**400}).encode())
    with pytest.raises(WhatifError, match="more than 30 digits"):
        load_mapping(path)
    path = write(tmp_path, "config.json", b'{"model_type": "llama", "hidden_size": NaN}')
    with pytest.raises(WhatifError, match="NaN is not a finite number"):
        load_mapping(path)


# ---------------------------------------------------------------- field checks

@pytest.mark.parametrize("field,value,words", [
    ("parallel_block", "no", ["parallel_block", "'no'", "true or false"]),
    ("qkv_bias", 5, ["qkv_bias", "true or false"]),
    ("name", 123, ["name", "not a string"]),
    ("family", 5, ["family", "not a string"]),
    ("num_layers", 10**12, ["num_layers", "<= 4,096"]),
    ("max_position_embeddings", 10**9, ["max_position_embeddings", "<= 16,777,216"]),
    ("hidden_size", 0, ["hidden_size", "positive integer"]),
    ("name", "x" * 10_000, ["name", "10,000 characters"]),
])
def test_model_fields_have_types_and_physical_bounds(capsys, tmp_path, field, value, words):
    msg = error_of(capsys, "estimate", "--model", write(tmp_path, "m.yaml", {**LLAMA, field: value}))
    for word in words:
        assert word in msg, msg


@pytest.mark.parametrize("value,unit,words", [
    (1e300, "GB/s", ["hbm_bandwidth", "1 kB/s to 1 PB/s"]),
    (0, "GB/s", ["hbm_bandwidth", "outside the physical range"]),
    (".nan", "GB/s", ["hbm_bandwidth"]),
])
def test_absurd_bandwidths_are_refused_on_input(capsys, tmp_path, value, unit, words):
    gpu = yaml.safe_load((ROOT / "whatif" / "hardware_profiles" / "h100-sxm.yaml").read_text())
    gpu["hbm_bandwidth"] = {"value": float(value) if value != ".nan" else math.nan, "unit": unit,
                            "provenance": "assumed", "source": "test"}
    msg = error_of(capsys, "estimate", "--hardware", write(tmp_path, "g.yaml", gpu))
    for word in words:
        assert word in msg, msg


def test_a_scenario_with_an_unknown_section_is_refused(capsys, tmp_path):
    msg = error_of(capsys, "estimate", "--scenario", write(tmp_path, "s.yaml", {"model": "llama-3-8b", "trafic": {}}))
    assert "'trafic'" in msg and "unknown field" in msg


def _calibration(**edit) -> dict:
    data = yaml.safe_load(CALIBRATION.read_text())
    for path, value in edit.items():
        node = data
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        if value is None:
            node.pop(last)
        else:
            node[last] = value
    return data


@pytest.mark.parametrize("edit,words", [
    ({"classes__gemm__compute_eff": 0.0}, ["compute_eff", "> 0 and <= 1"]),
    ({"classes__gemm__compute_eff": math.nan}, ["compute_eff", "not a finite number"]),
    ({"classes__gemm__smooth": -1.0}, ["smooth"]),
    ({"classes__gemm__overhead_s": 3600.0}, ["overhead_s", "<= 0.1"]),
    ({"kernel_gap_s": -1e-6}, ["kernel_gap_s"]),
    ({"classes__warp": {"memory_eff": 0.5}}, ["'warp'", "unknown op class"]),
    ({"classes__gemm__speed": 2.0}, ["'speed'", "valid: compute_eff"]),
    ({"gpu": None}, ["missing field 'gpu'"]),
])
def test_calibration_files_are_checked(capsys, tmp_path, edit, words):
    path = write(tmp_path, "c.yaml", _calibration(**edit))
    msg = error_of(capsys, "estimate", "--efficiency", "calibrated", "--calibration", path)
    for word in words:
        assert word in msg, msg


def test_a_calibration_file_alone_implies_calibrated(capsys):
    assert main(["estimate", "--calibration", str(CALIBRATION), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["efficiency"]["source"] == "calibrated"
    assert "using --efficiency calibrated" in err
    assert "applies only to --efficiency calibrated" in error_of(capsys, "estimate", "--efficiency", "ideal",
                                                                 "--calibration", str(CALIBRATION))


def test_a_trace_arrival_beyond_any_horizon_is_refused(capsys, tmp_path):
    path = write(tmp_path, "t.csv", b"arrival_s,prompt_tokens,output_tokens\n1e30,10,5\n")
    assert "arrival_s" in error_of(capsys, "simulate", "--trace", path)


def test_a_nan_measurement_is_refused(capsys, tmp_path):
    import csv
    import io
    text = (ROOT / "whatif/validate/measurements/h100-sxm/vidur-reference.csv").read_text().splitlines()[:3]
    rows = list(csv.DictReader(text))
    rows[0]["measured_s"] = "nan"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    msg = error_of(capsys, "validate", "report", write(tmp_path, "m.csv", out.getvalue().encode()))
    assert "measured_s" in msg and "nan" in msg


# ---------------------------------------------------------------- flags

@pytest.mark.parametrize("argv,words", [
    (["estimate", "--price-per-hour", "inf"], ["--price-per-hour", "not finite"]),
    (["simulate", "--slo-ttft", "nan"], ["--slo-ttft", "not finite"]),
    (["simulate", "--horizon", "inf"], ["--horizon"]),
    (["simulate", "--swap-space", "inf"], ["--swap-space"]),
    (["simulate", "--replicas", "9" * 30], ["--replicas", "<= 10,000"]),
    (["simulate", "--prefill-replicas", "2147483648"], ["--prefill-replicas", "<= 10,000"]),
    (["simulate", "--turns", "9" * 30], ["--turns"]),
    (["estimate", "--tp", "9" * 400], ["--tp", "digits"]),
    (["estimate", "--technique", "eagle:tree=64x64x64x64"], ["17,043,520 nodes", "at most 4,096"]),
    (["estimate", "--technique", "kivi:bits="], ["bits=''", "integer"]),
    (["simulate", "--kv-link="], ["--kv-link", "empty"]),
    (["estimate", "--kv-dtype="], ["--kv-dtype", "empty"]),
    (["estimate", "--hardware", "gh200-144gb-superchip", "--place=activations=ddr5:"], ["fraction"]),
    (["estimate", "--model", "x" * 10_000], ["--model", "chars"]),
])
def test_bad_flags_are_refused_before_any_work(capsys, argv, words):
    msg = error_of(capsys, *argv)
    for word in words:
        assert word in msg, msg


@pytest.mark.parametrize("text,seconds", [("500ms", 0.5), ("0.5s", 0.5), ("2", 2.0), ("20us", 2e-5), ("2min", 120.0)])
def test_times_accept_units_and_a_bare_number_is_seconds(text, seconds):
    assert checks.seconds(text, "--slo-ttft") == pytest.approx(seconds)


def test_slo_flags_take_units(capsys):
    assert main(["simulate", "--requests", "20", "--slo-ttft", "500ms", "--slo-tpot", "50ms", "--json"]) == 0
    slo = json.loads(capsys.readouterr().out)
    assert "0.5" in json.dumps(slo)


# ---------------------------------------------------------------- messages, output paths, degenerate results

def test_messages_are_one_line_and_quote_a_short_prefix():
    e = WhatifError("field: " + "9" * 5000 + "\nsecond line")
    assert "\n" not in str(e) and len(str(e)) < 200
    assert shown("x" * 10_000).endswith("(10,002 chars)")
    assert shown(10**5000).startswith("an integer of about 5,000 digits")


def test_names_match_case_insensitively_and_suggest_the_family():
    assert closest("H100", ["a10", "h100-sxm", "h100-pcie"]) == " (did you mean one of 'h100-pcie', 'h100-sxm'?)"
    assert closest("H100-SXN", ["a10", "h100-sxm", "h100-pcie"]) == " (did you mean 'h100-sxm'?)"
    assert closest("nvme", ["nvme", "ddr5"]) == ""   # never "did you mean" the name itself


def test_a_name_that_extends_a_candidate_suggests_that_candidate_first():
    # session 70 DD: `--hardware b200-sxm` (the serving CSV's b200_sxm) suggested only 'h200-sxm', another GPU
    names = ["b200", "h200-sxm", "h100-sxm"]
    assert closest("b200-sxm", names) == " (did you mean 'b200' or 'h200-sxm'?)"
    assert closest("B200_SXM", names) == " (did you mean 'b200' or 'h200-sxm'?)"
    assert closest("b200-foo-bar-baz", ["b200", "h100-sxm"]) == " (did you mean 'b200'?)"


def test_the_other_separator_names_the_same_thing():
    # aiconfigurator and TensorRT-LLM write fp8_block; whatif's scheme is fp8-block (not 'fp8' first)
    assert closest("fp8_block", ["fp8", "fp8-block", "nvfp4"]) == " (did you mean 'fp8-block'?)"
    assert closest("H100_SXM", ["h100-sxm", "h100-pcie"]) == " (did you mean 'h100-sxm'?)"


def test_hardware_and_model_names_ignore_case(capsys):
    assert main(["estimate", "--hardware", "H100-SXM", "--model", "LLAMA-3-8B", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["hardware"] == "h100-sxm" and d["model"] == "llama-3-8b"
    assert "'h100-sxm'" in error_of(capsys, "estimate", "--hardware", "H100")


@pytest.mark.parametrize("out", ["{dir}", "/proc/whatif.html", "a" * 300 + ".html"])
def test_unwritable_output_paths_are_one_line_before_the_work(capsys, tmp_path, out):
    msg = error_of(capsys, "demo", "--out", out.format(dir=tmp_path))
    assert "--out" in msg


def test_one_output_token_is_said_to_have_no_decode_step(capsys):
    assert main(["estimate", "--prompt", "1", "--output", "1", "--no-ops"]) == 0
    out = capsys.readouterr().out
    assert "no decode step" in out and "0 tok/s" not in out


# ---------------------------------------------------------------- the fuzz harness can fail

def test_the_fuzz_harness_reports_tracebacks_non_finite_output_and_multi_line_errors(monkeypatch):
    from tests import test_fuzz

    def crash(argv):
        raise ZeroDivisionError("boom")

    def nan_out(argv):
        print('{"ttft_s": NaN}')
        return 0

    def two_lines(argv):
        import sys
        print("whatif: error: first\nsecond", file=sys.stderr)
        return 2

    def hang(argv):
        while True:
            pass

    monkeypatch.setattr(test_fuzz, "CASE_TIMEOUT_S", 0.2)
    for fake, word in ((crash, "traceback"), (nan_out, "non-finite"), (two_lines, "not a one-line"), (hang, "hang")):
        monkeypatch.setattr(test_fuzz, "main", fake)
        assert any(word in p for p in test_fuzz.problems(["estimate", "--json"])), word
