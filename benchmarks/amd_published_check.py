"""Published-results check for AMD Instinct MI300X: whatif's prediction next to AMD's published vLLM throughput.

    python benchmarks/amd_published_check.py [--release 0.9.0.1|0.8.3|all]

Reported, not fitted: no parameter of whatif was set from these rows (the CDNA figures are the assumed ones
of whatif/roofline/data/cdna_family.yaml). The rows are the ones AMD publishes on its ROCm "AI inference
performance results" page (amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html), copied
as printed: offline throughput of vLLM's ROCm docker images on 8x MI300X (192 GB, 750 W; 2x EPYC 9554), TP 8,
amd/Llama-3.1-70B-Instruct-FP8-KV and amd/Llama-3.1-405B-Instruct-FP8-KV (fp8 weights, fp8 KV cache).

The rule, fixed before any row was run: every row is simulated offline as its harness runs it (all
`prompts` requests sent at once: a closed loop of `prompts` clients, each sending one request; fixed lengths;
max_num_seqs as published; the vllm-rocm engine spec's other defaults), on mi300x-8x at tp 8, weights and KV
fp8. The published column is "Throughput (tokens/s)"; the page does not say whether it counts generated
tokens only or prompt + generated tokens (vLLM's benchmark_throughput prints both), so both readings are
reported: ratio = predicted / published. Summary: the geometric mean of |predicted / published| - 1 under
each reading, and the share of rows within 25%. No pass/fail threshold is claimed.

Not included: a same-release H200 counterpart. No published H200 serving figure from the same vLLM release
and setup could be cited exactly here, so the MI300X-vs-H200 comparison stays a prediction
(docs/hardware.md) and this check covers MI300X alone.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SOURCE = "amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html"
IMAGES = {"0.9.0.1": "rocm/vllm:rocm6.4.1_vllm_0.9.0.1_20250605 (released 2025-06-18)",
          "0.8.3": "rocm/vllm:rocm6.3.1_instinct_vllm0.8.3_20250410 (released 2025-04-13)"}
# (release, model, prompt, output, prompts, max_num_seqs, published tokens/s), as the page prints them
ROWS = (
    ("0.9.0.1", "llama-3.1-70b", 128, 2048, 3200, 3200, 16581.5),
    ("0.9.0.1", "llama-3.1-70b", 128, 4096, 1500, 1500, 13667.3),
    ("0.9.0.1", "llama-3.1-70b", 500, 2000, 2000, 2000, 13367.1),
    ("0.9.0.1", "llama-3.1-70b", 2048, 2048, 1500, 1500, 8352.6),
    ("0.9.0.1", "llama-3.1-405b", 128, 2048, 1500, 1500, 4275.0),
    ("0.9.0.1", "llama-3.1-405b", 128, 4096, 1500, 1500, 3356.7),
    ("0.9.0.1", "llama-3.1-405b", 500, 2000, 2000, 2000, 3201.4),
    ("0.9.0.1", "llama-3.1-405b", 2048, 2048, 500, 500, 2179.7),
    ("0.8.3", "llama-3.1-70b", 128, 2048, 3200, 3200, 16364.9),
    ("0.8.3", "llama-3.1-70b", 128, 4096, 1500, 1500, 12171.0),
    ("0.8.3", "llama-3.1-70b", 500, 2000, 2000, 2000, 13290.4),
    ("0.8.3", "llama-3.1-70b", 2048, 2048, 1500, 1500, 8216.5),
    ("0.8.3", "llama-3.1-405b", 128, 2048, 1500, 1500, 4331.6),
    ("0.8.3", "llama-3.1-405b", 128, 4096, 1500, 1500, 3409.9),
    ("0.8.3", "llama-3.1-405b", 500, 2000, 2000, 2000, 3184.0),
    ("0.8.3", "llama-3.1-405b", 2048, 2048, 500, 500, 2154.3),
)


def predict(model: str, prompt: int, output: int, prompts: int, max_seqs: int) -> tuple[float, float]:
    """(generated tok/s, prompt + generated tok/s) whatif predicts for one row, by the rule above."""
    cmd = [sys.executable, "-m", "whatif", "simulate", "--model", model, "--hardware", "mi300x-8x", "--tp", "8",
           "--dtype", "fp8", "--kv-dtype", "fp8", "--prompt", str(prompt), "--output", str(output),
           "--concurrency", str(prompts), "--requests", str(prompts), "--max-num-seqs", str(max_seqs), "--json"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise SystemExit(f"whatif simulate failed: {done.stderr.strip()}")
    r = json.loads(done.stdout)["throughput"]
    return r["output_tok_s"], r["output_tok_s"] + r["input_tok_s"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="0.9.0.1", choices=(*IMAGES, "all"))
    args = ap.parse_args(argv)
    rows = [r for r in ROWS if args.release in ("all", r[0])]
    print(f"published: {SOURCE}")
    for rel in sorted({r[0] for r in rows}):
        print(f"  vLLM {rel}: {IMAGES[rel]}")
    print("\nrelease  model           prompt  output  prompts  published tok/s  whatif out tok/s  ratio  "
          "whatif in+out tok/s  ratio")
    errs = {"out": [], "total": []}
    for rel, model, p, o, n, seqs, pub in rows:
        out, total = predict(model, p, o, n, seqs)
        errs["out"].append(out / pub)
        errs["total"].append(total / pub)
        print(f"{rel:<8} {model:<15} {p:>6} {o:>7} {n:>8} {pub:>16,.1f} {out:>17,.1f} {out / pub:>6.2f} "
              f"{total:>20,.1f} {total / pub:>6.2f}")
    for reading, ratios in errs.items():
        gm = math.exp(sum(abs(math.log(x)) for x in ratios) / len(ratios)) - 1
        within = sum(abs(x - 1) <= 0.25 for x in ratios)
        print(f"\n{reading:>5} reading: geometric-mean |error| {gm:.1%}, {within}/{len(ratios)} rows within 25%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
