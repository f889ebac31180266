"""The header names the KV format a KV-quantizing technique stores: session 75 D's walk read "KV bf16" beside kivi
(2-bit; the 2-bit figure only in the kB/token row). Estimate text, --json (kv_stored), the HTML scenario lines and
simulate's scenario line (session 75 K)."""
from __future__ import annotations

import json

import pytest

from whatif import api
from whatif.cli import main

ARGS = ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--no-ops"]


def _head(capsys, *args) -> str:
    assert main(["estimate", *ARGS, *args]) == 0
    return capsys.readouterr().out.splitlines()[0]


@pytest.mark.parametrize("technique,stored", [
    ("kivi", "KV 2-bit kivi (groups of 32; the newest 128 tokens bf16)"),
    ("kivi:bits=4", "KV 4-bit kivi"),
    ("kv_quant:bits=8", "KV 8-bit kv_quant (groups of 64)"),
    ("gear", "KV 4-bit gear"),
    ("mikv", "KV 2-bit mikv (20% of tokens bf16)"),
    ("kv_fp8", "KV fp8"),   # (a dtype change: the precision says it already)
])
def test_the_header_names_the_stored_kv_format(capsys, technique, stored):
    head = _head(capsys, "--technique", technique)
    assert stored in head and "KV bf16" not in head


def test_without_a_kv_technique_the_header_keeps_the_dtype(capsys):
    assert "KV bf16" in _head(capsys) and "KV bf16" in _head(capsys, "--technique", "speculative")


def test_json_and_reports_say_it_too(capsys):
    assert main(["estimate", *ARGS, "--technique", "kivi", "--json"]) == 0
    prec = json.loads(capsys.readouterr().out)["precision"]
    assert prec["kv"] == "bf16" and prec["kv_stored"].startswith("2-bit kivi")
    assert main(["estimate", *ARGS, "--json"]) == 0
    assert "kv_stored" not in json.loads(capsys.readouterr().out)["precision"]
    from whatif.reports.summary import scenario_pairs
    est = api.estimate("llama-3-8b", "h100-sxm", techniques="kivi")
    assert "KV 2-bit kivi" in dict(scenario_pairs(est.estimate))["dtypes"]
    sim = api.simulate("llama-3-8b", "h100-sxm", techniques="kivi", rate=2.0, requests=20, prompt=256, output=32)
    assert "KV 2-bit kivi" in sim.setup["scenario"]
