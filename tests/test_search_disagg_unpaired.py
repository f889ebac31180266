"""A disaggregated search whose replicas fit but whose prefill + decode pair does not says so. Before session 75 D,
`search --model zai-org/GLM-5-FP8 --hardware hgx-b300 --gpus 4 --modes disaggregated` answered "nothing fits
within 4 GPUs; the widest, [tp2 pp2 ...] batch 256 ..., does not fit: batch 256 > max batch 238": a reader
shrinks the batch, while the obstacle is that every replica holding the model takes all 4 GPUs, leaving none
for the other pool; with both modes the aggregated answer came without a word on why no disaggregated one."""
from __future__ import annotations

import json

from whatif.cli import main

BASE = ["search", "--model", "llama-3.1-70b", "--hardware", "hgx-h200", "--slo-ttft", "1s", "--slo-tpot", "50ms",
        "--no-progress", "--jobs", "1"]


def test_disaggregated_only_names_the_pair_not_a_batch(capsys):
    assert main(BASE + ["--gpus", "2", "--modes", "disaggregated"]) == 0
    best = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("best:"))
    assert "no prefill + decode pair fits within 2 GPUs" in best and "[tp2 pp1 wbf16 kvbf16] (2 GPUs)" in best
    assert "needs 4" in best and "--modes aggregated" in best and "max batch" not in best


def test_both_modes_say_why_no_disaggregated_row(capsys):
    assert main(BASE + ["--gpus", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["best"]["mode"] == "aggregated"
    assert any("no prefill + decode pair fits within 2 GPUs" in n for n in out["notes"])


def test_no_line_where_a_pair_fits(capsys):
    assert main(BASE + ["--gpus", "4", "--modes", "disaggregated", "--batches", "8"]) == 0
    assert "no prefill + decode pair" not in capsys.readouterr().out
