"""benchmarks/quant_record_from_report.py: a checkpoint's quantization section parsed from a saved model report."""
import json

import pytest

from tests.benchmark_module import load_benchmark

qr = load_benchmark("quant_record_from_report")
RAW = """# report\n\n<details><summary>原始 config.json</summary>\n\n```json\n\n{\n  "hidden_size": 8,
  "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128],
    "modules_to_not_convert": ["lm_head", "model.layers.0.mlp.gate"]}\n}\n\n```\n</details>\n
```\nXConfig {\n  "quantization_config": {"quant_method": "other"}\n}\n```\n"""
REPR = """```\nGlm4MoeConfig {\n  "name": "a } in a string",\n  "quantization_config": {"quant_method":
  "compressed-tensors", "ignore": ["lm_head"], "config_groups": {}}\n}\n```\n# 模型结构\n"""


def test_the_raw_config_block_is_preferred_to_the_repr():
    config, copy = qr.config_from_report(RAW)
    assert copy == "raw config.json" and qr.ignore_list(qr.quant_section(config)) == ["lm_head",
                                                                                       "model.layers.0.mlp.gate"]


def test_a_transformers_repr_is_read_braces_in_strings_included():
    config, copy = qr.config_from_report(REPR)
    assert copy == "transformers repr" and config["name"] == "a } in a string"
    assert qr.quant_section(config)["quant_method"] == "compressed-tensors"


def test_a_cut_report_or_no_section_is_an_error():
    with pytest.raises(ValueError, match="never closes"):
        qr.config_from_report(REPR[:60])
    with pytest.raises(ValueError, match="no quantization_config"):
        qr.quant_section({"hidden_size": 8})


def test_the_record_holds_the_section_verbatim(tmp_path, capsys):
    report = tmp_path / "r.md"
    report.write_text(RAW, encoding="utf-8")
    out = tmp_path / "rec.json"
    assert qr.main([str(report), "--id", "org/X-FP8", "--note", "n", "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["id"] == "org/X-FP8" and rec["source"].endswith("org/X-FP8/blob/main/config.json")
    assert rec["quantization_config"]["weight_block_size"] == [128, 128]
    assert "2 ignore entries" in capsys.readouterr().out
