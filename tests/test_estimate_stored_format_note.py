"""estimate and simulate on a profile name say when the published checkpoint it stands for is stored in another
format. Before session 75 D, `estimate --model gpt-oss-120b --hardware mi355x --batch 64` priced 234 GB of bf16
weights (TPOT 34.2 ms) with no word that openai/gpt-oss-120b ships MXFP4 experts (65.2 GB, 12.3 ms), and
`--model deepseek-v3` on 8 H200 answered "does not fit" (169 GB/GPU of bf16) for a model whose FP8 release fits;
only --serve-command's '#' line said it. The note goes to stderr, before a does-not-fit."""
from __future__ import annotations

from whatif.cli import main


def test_a_profile_name_of_an_mxfp4_release_is_noted(capsys):
    assert main(["estimate", "--model", "gpt-oss-120b", "--hardware", "mi355x", "--no-ops"]) == 0
    err = capsys.readouterr().err
    assert "note: priced 16-bit weights (the profile gpt-oss-120b)" in err
    assert "openai/gpt-oss-120b is stored mxfp4" in err and "--model openai/gpt-oss-120b" in err


def test_the_note_comes_with_a_does_not_fit(capsys):
    assert main(["estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--no-ops"]) == 2
    err = capsys.readouterr().err
    assert "deepseek-ai/DeepSeek-V3 is stored fp8-block" in err and "does not fit" in err


def test_simulate_notes_it_too(capsys):
    assert main(["simulate", "--model", "gpt-oss-20b", "--hardware", "h100-sxm", "--rate", "1",
                 "--requests", "4", "--prompt", "256", "--output", "16"]) == 0
    assert "openai/gpt-oss-20b is stored mxfp4" in capsys.readouterr().err


def test_no_note_by_id_under_a_scheme_or_for_a_16_bit_release(capsys):
    for model, extra in (("openai/gpt-oss-120b", []), ("gpt-oss-120b", ["-q", "mxfp4"]), ("llama-3.1-8b", [])):
        assert main(["estimate", "--model", model, "--hardware", "b200", "--no-ops", *extra]) == 0
        assert "note:" not in capsys.readouterr().err, model
