"""A plan over capacity in several tiers names every one: session 75 D's walk put weights (60%) and KV on host at
batch 32 (Llama-3.1-70B, 100k-token prompts, h100-pcie-host) and the error named only HBM, though host DRAM was over
too (1.06 TB of KV + 84.6 GB of weights > 461 GB) (session 75 K)."""
from __future__ import annotations

import pytest

from whatif import api
from whatif.cli import main
from whatif.roofline.overflow_text import tiers_over

WALK = ["--model", "llama-3.1-70b", "--hardware", "h100-pcie-host", "--prompt", "100000", "--output", "1000",
        "--place", "kv=host", "--place", "weights=host:0.6", "--no-ops"]


def test_the_walks_error_names_hbm_and_host(capsys):
    assert main(["estimate", *WALK, "--batch", "32"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hbm needs" in err and "ddr5-4800-rdimm needs" in err
    assert err.count("(over by") == 2


def test_one_tier_over_is_named_alone(capsys):
    assert main(["estimate", "--model", "llama-3.1-405b", "--hardware", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert "hbm needs 817 GB per GPU, usable 76.4 GB (over by 741 GB)" in err and err.count("needs") == 1


def test_every_path_that_says_it_uses_all_tiers():
    est = api.estimate("llama-3.1-70b", "h100-pcie-host", prompt=100000, output=1000, batch=32,
                       place=["kv=host", "weights=host:0.6"])
    over = est.memory.overflow()
    assert [t for t, _, _ in over] == ["hbm", "ddr5-4800-rdimm"]
    words = tiers_over(over)
    assert words.count("needs") == 2
    from whatif.queries.compare import no_fit_reason
    assert no_fit_reason(est.estimate) == f"does not fit: {words}"


@pytest.mark.parametrize("over,words", [
    ([("hbm", 91.2e9, 77e9)], "hbm needs 91.2 GB per GPU, usable 77 GB (over by 14.2 GB)"),
    ([], ""),
])
def test_tiers_over_words(over, words):
    assert tiers_over(over) == words
