"""The technique commands: --technique on estimate, whatif compare, list/show technique, scenario files."""
from __future__ import annotations

import pytest

from tests.test_cli import run_error, run_json, run_text
from whatif.roofline.techniques.registry import all_techniques

# TensorRT-LLM's max_num_seqs (2048) does not cap these batches (vLLM's 256 would cap the KV techniques')
ARGS = ("--model", "llama-2-7b", "--hardware", "a100-sxm-80gb", "--batch", "8", "--prompt", "1024", "--output", "64",
        "--engine", "trtllm")


def test_estimate_with_techniques_reports_them_and_the_capacity_gain(capsys):
    base = run_json(capsys, "estimate", *ARGS)
    d = run_json(capsys, "estimate", *ARGS, "--technique", "int4", "--technique", "kivi:bits=2")
    assert [t["name"] for t in d["techniques"]] == ["int4", "kivi"]
    assert d["techniques"][1]["parameters"] == {"bits": 2, "group_size": 32, "residual": 128}
    assert d["memory"]["kv_bytes_per_token"] < base["memory"]["kv_bytes_per_token"] / 3
    assert d["max_batch"] > 3 * base["max_batch"]
    assert d["max_batch_throughput_tok_s"] > base["max_batch_throughput_tok_s"]
    assert d["tpot_s"] < base["tpot_s"]
    text = run_text(capsys, "estimate", *ARGS, "--technique", "int4+kivi", "--no-ops")
    assert "techniques: int4+kivi" in text and "throughput at max batch" in text


def test_compare_rows_ratios_and_systems(capsys):
    d = run_json(capsys, "compare", *ARGS[:2], *ARGS[4:], "--variant", "kivi", "--variant", "int4+kivi",
                 "--systems", "a100-sxm-80gb,h100-sxm")
    rows = d["rows"]
    assert [(r["label"], r["hardware"]) for r in rows] == [
        ("baseline", "a100-sxm-80gb"), ("kivi", "a100-sxm-80gb"), ("int4+kivi", "a100-sxm-80gb"),
        ("baseline", "h100-sxm"), ("kivi", "h100-sxm"), ("int4+kivi", "h100-sxm")]
    base = rows[0]
    assert base["vs_baseline"]["tpot_speedup"] == pytest.approx(1.0)
    for r in rows[1:]:
        v = r["vs_baseline"]
        assert v["tpot_speedup"] == pytest.approx(base["tpot_s"] / r["tpot_s"])
        assert v["max_batch_ratio"] == pytest.approx(r["max_batch"] / base["max_batch"])
    assert rows[3]["vs_baseline"]["tpot_speedup"] > 1      # H100 decodes faster than A100
    text = run_text(capsys, "compare", *ARGS, "--variant", "h2o")
    assert "baseline" in text and "h2o" in text and "TPOT x" in text


def test_list_and_show_techniques(capsys):
    items = run_json(capsys, "list", "techniques")
    assert {i["name"] for i in items} == set(all_techniques())
    kivi = next(i for i in items if i["name"] == "kivi")
    assert kivi["family"] == "B" and "KIVI" in kivi["paper"]
    assert {p["name"]: p["default"] for p in kivi["parameters"]} == {"bits": 2, "group_size": 32, "residual": 128}
    assert "dequantizes" in kivi["mechanism"]
    text = run_text(capsys, "show", "technique", "h2o")
    assert "family C" in text and "Heavy-Hitter" in text and "heavy" in text
    assert "kivi" in run_text(capsys, "list", "techniques")


def test_scenario_file_techniques(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("model: llama-2-7b\nhardware: a100-sxm-80gb\nworkload: {batch: 8, prompt: 1024, output: 32, "
                 "shared_prefix: 512}\ntechniques: [int4, {name: kivi, bits: 4}, hydragen]\n")
    d = run_json(capsys, "estimate", "--scenario", str(f), "--technique", "prefix_caching")
    assert [t["name"] for t in d["techniques"]] == ["int4", "kivi", "hydragen", "prefix_caching"]
    assert d["techniques"][1]["parameters"]["bits"] == 4
    assert d["memory"]["shared_kv_bytes"] > 0


@pytest.mark.parametrize(("argv", "pattern"), [
    (("estimate", "--technique", "kivvi"), "unknown technique 'kivvi'"),
    (("estimate", "--technique", "kivi:bits=99"), "kivi:bits=99"),
    (("estimate", "--technique", "kivi", "--technique", "kivi"), "given twice"),
    (("estimate", "--technique", "hydragen"), "--shared-prefix"),
    (("estimate", "--shared-prefix", "9999"), "--shared-prefix"),
    (("estimate", "--technique", "h2o", "--technique", "prefix_caching", "--shared-prefix", "8"), "cannot be combined"),
    (("show", "technique", "nope"), "unknown technique"),
    (("compare", "--systems", ","), "--systems"),
    (("compare", "--systems", "h100-sxm", "--hardware", "a100-sxm-80gb"), "give one of them"),
    (("compare", "--variant", "kivi:bits=x"), "must be an integer"),
])
def test_technique_errors_are_one_line(capsys, argv, pattern):
    assert pattern in run_error(capsys, *argv)
