"""The estimate's KV row names the recurrent state it folds in: Qwen3.5-397B (Gated DeltaNet layers) showed
"KV cache (39.8 kB/token)" where its full-attention KV is 15.4 kB/token a GPU at TP4 and the rest is each sequence's
fixed state spread over 2,048 tokens (session 74 L)."""
import subprocess
import sys


def _memory_rows(model: str, hardware: str, *extra: str) -> str:
    out = subprocess.run([sys.executable, "-m", "whatif", "estimate", "--model", model, "--hardware", hardware,
                          "--batch", "4", "--prompt", "1024", "--output", "1024", "--no-ops", *extra],
                         capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if line.startswith("KV cache"))


def test_a_linear_attention_model_says_its_per_token_figure_includes_state():
    row = _memory_rows("qwen3.5-397b-a17b", "b300", "--tp", "4", "--quantization", "nvfp4")
    assert row.startswith("KV cache + recurrent state (") and "over 2,048-token sequences)" in row


def test_an_attention_only_model_keeps_the_plain_label():
    row = _memory_rows("openai/gpt-oss-120b", "h200-sxm")
    assert row.startswith("KV cache (") and "recurrent" not in row
