"""Direction check, MI300X vs H200 on one vLLM release: who wins, by how much, beside whatif's answer.

    python benchmarks/amd_h200_direction.py

The only same-release MI300X-vs-H200 serving study found: github.com/alpharomercoma/MI300X-vs-H200 (REPORT.md at
commit 6077fdc7bfc215171c33435b7cd76ca4c5f2b236, '1. Summary'): one MI300X against one H200, both on vLLM
v0.26.0 from the vLLM project's images (vllm/vllm-openai-rocm:v0.26.0 and vllm/vllm-openai:v0.26.0; METHODOLOGY.md
'One upstream project, one version'). What is stored of it here is the summary table (winner and margin per
workload); the prompt/output lengths behind "balanced", "prefill-heavy" and "decode-heavy", the model of the
MoE row and the exact metric are not. So this is NOT a scored check: a direction check, reported, never fitted.

The rule, fixed before any row was run:
- rows: every summary row whatif can express (the MoE row names no model: left out; training: out of scope);
  dense 8B = llama-3.1-8b at 16-bit, dense 70B FP8 = llama-3.1-70b with fp8 weights; KV cache at vLLM's default
  (kv-cache-dtype auto: 16-bit); engines at their whatif defaults (vllm-rocm on MI300X, vllm on H200); 1 GPU each.
- lengths (ASSUMED, the source's are not stored): every workload runs over a small grid, so that the verdict's
  dependence on the unknown lengths shows: single stream 1024/1024; balanced 512/512, 1024/1024, 2048/2048;
  prefill-heavy 2048/128, 4096/256; decode-heavy 128/2048, 512/2048 (prompt/output tokens).
- how: `whatif simulate`, a closed loop of `concurrency` clients, 3 x concurrency requests (10 for one stream).
- metric: one stream, decode speed 1/TPOT (mean); otherwise output tokens/s. margin = faster / slower;
  a tie when the margin is under 1.05 (the source calls 1.02x a tie).
- agreement: whatif's winner (or tie) against the published one, at each grid point.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "github.com/alpharomercoma/MI300X-vs-H200, REPORT.md (commit 6077fdc7), '1. Summary'; vLLM v0.26.0 on both"
TIE = 1.05
GRID = {"single stream": ((1024, 1024),), "balanced": ((512, 512), (1024, 1024), (2048, 2048)),
        "prefill-heavy": ((2048, 128), (4096, 256)), "decode-heavy": ((128, 2048), (512, 2048))}
# (workload as published, model, whatif dtype flags, kind, concurrency, published winner, published margin)
ROWS = (
    ("Dense 8B, prefill-heavy, concurrency 256", "llama-3.1-8b", (), "prefill-heavy", 256, "H200", 2.06),
    ("Dense 8B, balanced, concurrency 256", "llama-3.1-8b", (), "balanced", 256, "H200", 1.40),
    ("Dense 8B, single stream", "llama-3.1-8b", (), "single stream", 1, "tie", 1.02),
    ("Dense 70B FP8, single stream", "llama-3.1-70b", ("--dtype", "fp8"), "single stream", 1, "H200", 1.12),
    ("Dense 70B FP8, balanced, concurrency 128", "llama-3.1-70b", ("--dtype", "fp8"), "balanced", 128, "MI300X",
     1.14),
    ("Dense 70B FP8, decode-heavy, concurrency 256", "llama-3.1-70b", ("--dtype", "fp8"), "decode-heavy", 256,
     "MI300X", 1.08),
    ("Dense 70B BF16 (141 GB weights)", "llama-3.1-70b", (), "single stream", 1, "MI300X", None),
)


def simulate(model: str, hardware: str, flags: tuple, prompt: int, output: int, concurrency: int) -> float | None:
    """The row's metric on one GPU (None: the model does not fit there)."""
    requests = 10 if concurrency == 1 else 3 * concurrency
    cmd = [sys.executable, "-m", "whatif", "simulate", "--model", model, "--hardware", hardware, *flags,
           "--kv-dtype", "bf16", "--prompt", str(prompt), "--output", str(output), "--concurrency", str(concurrency),
           "--requests", str(requests), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        if "does not fit" in done.stderr or "leaves no memory for a KV cache" in done.stderr:
            return None
        raise SystemExit(f"whatif simulate failed: {done.stderr.strip()}")
    r = json.loads(done.stdout)
    return 1 / r["latency"]["tpot_s"]["mean"] if concurrency == 1 else r["throughput"]["output_tok_s"]


def verdict(mi300x: float | None, h200: float | None) -> tuple[str, float | None]:
    if h200 is None or mi300x is None:
        return ("MI300X" if h200 is None and mi300x is not None else "H200" if h200 is not None else "neither"), None
    margin = max(mi300x, h200) / min(mi300x, h200)
    return ("tie" if margin < TIE else "MI300X" if mi300x > h200 else "H200"), margin


def _num(x: float | None, fmt: str, none: str = "-") -> str:
    return none if x is None else format(x, fmt)


def main() -> int:
    print(f"published: {SOURCE}\nlengths are ASSUMED (not stored with the source); direction only, not scored\n")
    print(f"{'workload (published)':<46} {'winner':>7} {'margin':>6}  {'prompt/output':>13}  "
          f"{'whatif MI300X':>13} {'H200':>9}  {'winner':>7} {'margin':>6}  agrees")
    agree = total = 0
    for name, model, flags, kind, conc, pub_win, pub_margin in ROWS:
        for prompt, output in GRID[kind]:
            m = simulate(model, "mi300x", flags, prompt, output, conc)
            h = simulate(model, "h200-sxm", flags, prompt, output, conc)
            win, margin = verdict(m, h)
            total += 1
            agree += win == pub_win
            unit = "tok/s/user" if conc == 1 else "tok/s"
            print(f"{name:<46} {pub_win:>7} {_num(pub_margin, '.2f'):>6}  {prompt:>6}/{output:<6}  "
                  f"{_num(m, ',.0f', 'no fit'):>13} {_num(h, ',.0f', 'no fit'):>9}  {win:>7} {_num(margin, '.2f'):>6}  "
                  f"{'yes' if win == pub_win else 'no'}  ({unit})")
    print(f"\nwhatif's winner matches the published one at {agree} of {total} grid points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
