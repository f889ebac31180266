"""The issue-42 command's whole summary, pinned bit for bit: a speed change to the simulator may not move any figure.

`whatif simulate --model llama-3-8b --hardware h100-sxm --rate 20 --requests N` (issue 42's benchmark, N = 50,000;
5,000 in the default run), its `--json` object and its text, each compared exactly with what was recorded at
8841da4 (session 66 B's start: benchmarks/data/sim_issue42_*_summary.*; re-recorded in session 70, where only the KV
pool's figures moved: 27,720 -> 27,473 blocks, the engine's pool from the CUDA runtime's total, 70 P; in session 75
two keys were added, no value moved: run_length (75 K) and the engine's pp_batch_queue (75 J, P)). Every float
must be the same float: JSON keeps Python's shortest repr, so equal objects mean equal bits."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from whatif.cli import main
from whatif.simulator import cluster

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data"
COMMAND = ["simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--rate", "20", "--requests"]


@pytest.mark.parametrize("requests, label", [
    (5000, "5k"),
    pytest.param(50000, "50k", marks=pytest.mark.slow),   # (~2 s of CPU, ~6 s under load)
])
def test_summary_is_bit_identical_to_the_recorded_one(capsys, requests, label):
    cluster._TIMES.clear()   # (the pricing memo kept across runs: the summary counts the roofline calls a run made)
    assert main(COMMAND + [str(requests), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = json.loads((DATA / f"sim_issue42_{label}_summary.json").read_text())
    assert got == want
    cluster._TIMES.clear()
    assert main(COMMAND + [str(requests)]) == 0
    assert capsys.readouterr().out == (DATA / f"sim_issue42_{label}_summary.txt").read_text()
