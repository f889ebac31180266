"""`whatif compare` says what it priced: the id the user gave and the baseline's layout and precision (a
checkpoint's own scheme). Before session 75 D its header read "gpt-oss-120b: batch ..." for
--model openai/gpt-oss-120b, and nothing in the text or JSON said the experts were priced MXFP4 (or a
Qwen3-235B-FP8 checkpoint fp8-block): two precisions of one model read alike."""
from __future__ import annotations

import json

from whatif.cli import main

ARGS = ["compare", "--model", "openai/gpt-oss-120b", "--systems", "b200,h200-sxm", "--batch", "8",
        "--prompt", "1024", "--output", "64"]


def test_the_header_names_the_id_layout_and_precision(capsys):
    assert main(ARGS) == 0
    head, base = capsys.readouterr().out.splitlines()[:2]
    assert head.startswith("openai/gpt-oss-120b (profile gpt-oss-120b): batch 8")
    assert "(tp=1 pp=1 ep=1)" in base and "experts mxfp4" in base and "quantization_config" in base


def test_the_json_carries_them_too(capsys):
    assert main(ARGS + ["--json"]) == 0
    base = json.loads(capsys.readouterr().out)["baseline"]
    assert base["parallel"] == "tp=1 pp=1 ep=1" and "experts mxfp4" in base["precision"]
