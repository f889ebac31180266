"""`whatif estimate` shows the TTFT a client measures through the engine's server (the spec's front end)."""
from __future__ import annotations

import json

import pytest

from whatif.cli import main


def test_served_ttft_is_the_engine_ttft_plus_the_front_end(capsys):
    assert main(["estimate", "--model", "llama-3-8b", "--prompt", "1024", "--no-ops", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["frontend_s"] > 0
    assert d["served_ttft_s"] == pytest.approx(d["ttft_s"] + d["frontend_s"])
    assert d["served_e2e_s"] == pytest.approx(d["e2e_s"] + d["frontend_s"])
    assert main(["estimate", "--model", "llama-3-8b", "--prompt", "1024", "--no-ops"]) == 0
    assert "TTFT through the server" in capsys.readouterr().out
