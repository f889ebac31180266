"""`whatif estimate` names the assumed inputs behind a technique's result (an acceptance rate, an automatically
chosen draft model) on an `assumed:` line, and the eager hf-transformers engine is a valid --engine."""
from tests.test_cli import run_text

ARGS = ("--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--batch", "1", "--prompt", "512", "--output", "64",
        "--no-ops")


def test_assumed_acceptance_and_auto_draft_are_printed(capsys):
    text = run_text(capsys, "estimate", *ARGS, "--technique", "speculative")
    line = next(x for x in text.splitlines() if x.startswith("assumed: "))
    assert "speculative:alpha=0.8 is assumed" in line and "draft=auto chose llama-3.2-1b" in line
    given = run_text(capsys, "estimate", *ARGS, "--technique", "speculative:alpha=0.7,draft=llama-3.2-1b")
    assert "alpha=" not in next((x for x in given.splitlines() if x.startswith("assumed: ")), "")


def test_no_assumed_line_without_assumed_inputs(capsys):
    assert "assumed: " not in run_text(capsys, "estimate", *ARGS)


def test_hf_transformers_is_an_engine_choice(capsys):
    text = run_text(capsys, "estimate", *ARGS, "--engine", "hf-transformers")
    assert "engine: hf-transformers" in text and "no CUDA graphs" in text
