"""Published-results check for AMD Instinct MI300X: whatif's prediction next to AMD's published vLLM throughput.

    python benchmarks/amd_published_check.py [--release 0.9.0.1|0.8.3|all] [--micro]

Reported, not fitted: no parameter of whatif was set from these rows (the CDNA figures of
whatif/roofline/data/cdna_family.yaml are transcribed microbenchmarks or assumed, none tuned to a serving
row). The rows are the ones AMD publishes on its ROCm "AI inference performance results" page
(amd.com/en/developer/resources/rocm-hub/dev-ai/performance-results.html), copied as printed: offline
throughput of vLLM's ROCm docker images on 8x MI300X (192 GB, 750 W; 2x EPYC 9554), TP 8,
amd/Llama-3.1-70B-Instruct-FP8-KV and amd/Llama-3.1-405B-Instruct-FP8-KV (fp8 weights, fp8 KV cache).

The rule, fixed before any row was run: every row is simulated offline as its harness runs it (all
`prompts` requests sent at once: a closed loop of `prompts` clients, each sending one request; fixed lengths;
max_num_seqs as published; the vllm-rocm engine spec's other defaults), on mi300x-8x at tp 8, weights and KV
fp8. The published column is "Throughput (tokens/s)"; the page does not say whether it counts generated
tokens only or prompt + generated tokens (vLLM's benchmark_throughput prints both), so both readings are
reported: ratio = predicted / published. Summary: the geometric mean of |predicted / published| - 1 under
each reading, and the share of rows within 25%. No pass/fail threshold is claimed.

Not included: a same-release H200 counterpart. The one same-release MI300X-vs-H200 study found (vLLM v0.26.0
images on both, one GPU each: github.com/alpharomercoma/MI300X-vs-H200, REPORT.md) is stored here only as its
summary table (winner and margin per workload, no lengths or metric per row), so it cannot be run by a rule
fixed in advance; docs/amd.md quotes it beside whatif's answer as direction only. Azure's AI-benchmarking-guide
pairs vLLM (ROCm) on MI300X with TensorRT-LLM on H100/H200: not one engine, not used.

--micro: the RCCL all-reduce bus bandwidth by message size on 8 MI300X that Azure publishes (the source of
collective_xgmi.yaml's Simple bandwidth efficiency, read at 8 GB only) beside what whatif's xGMI collective model
gives at each size: busbw = 2 (n-1)/n x size / time, as rccl-tests prints it.
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


RCCL_SOURCE = ("Azure AI-benchmarking-guide, Azure_Results/ND_MI300X_v5_results.md, 'RCCL Bandwidth' "
               "(as stored: github.com/samuel-bohman/AI-benchmarking-guide @3de0c294)")
# (log2 bytes, published bus bandwidth GB/s): 1K ... 8G, in-place all-reduce, 8x MI300X, RCCL 2.22.3
RCCL_BUSBW = tuple(zip(range(10, 34), (0.04, 0.07, 0.15, 0.29, 0.59, 1.13, 2.22, 4.18, 7.50, 13.01, 22.41, 43.41,
                                       82.53, 131.57, 171.46, 230.35, 266.34, 290.81, 302.80, 308.89, 313.92,
                                       315.06, 314.85, 316.82)))
# The same harness's NCCL all-reduce on 8x H200 (ND H200 v5, NCCL 2.20.5, NVLS): whatif's fitted NVLink model beside
# it shows how much of the MI300X gap is the harness's own (it times more than the model's collective does)
H200_SOURCE = "github.com/Azure/AI-benchmarking-guide, Azure_Results/ND_H200_v5_results.md, 'NCCL Bandwidth'"
H200_BUSBW = (0.06, 0.12, 0.23, 0.47, 0.93, 1.84, 3.72, 7.39, 14.75, 29.38, 52.96, 88.78, 138.44, 181.94, 240.41,
              300.91, 368.11, 412.45, 432.24, 442.72, 467.58, 472.57, 477.41, 479.98)


def busbw(link_name: str, size: int, gpus: int = 8) -> float:
    """whatif's NCCL/RCCL all-reduce bus bandwidth (GB/s) for `size` bytes over `gpus` GPUs on a link profile."""
    from whatif.roofline.kernel_models.collectives import collective_params, nccl_time
    from whatif.specs import hardware
    link = hardware.load_component(link_name, "link")
    nccl, _, _ = collective_params(link.name)
    t = nccl_time("all_reduce", size, gpus, link.group_bandwidth(gpus), link.latency.value, link.nvswitch, nccl)
    return 2 * (gpus - 1) / gpus * size / t / 1e9


def rccl_rows() -> list[tuple[int, float, float, float, float]]:
    """(bytes, MI300X published, MI300X whatif, H200 published, H200 whatif) bus bandwidths in GB/s."""
    return [(2 ** log2, pub, busbw("infinity-fabric-mi300", 2 ** log2), h200, busbw("nvlink-4", 2 ** log2))
            for (log2, pub), h200 in zip(RCCL_BUSBW, H200_BUSBW)]


def micro() -> None:
    print(f"all-reduce bus bandwidth, 8 GPUs, in-place (rccl-/nccl-tests)\n  MI300X: {RCCL_SOURCE}\n"
          f"  H200:   {H200_SOURCE}")
    print("      bytes  MI300X pub  whatif  ratio   H200 pub  whatif  ratio   MI300X ratio / H200 ratio")
    ratios = []
    for size, pub, pred, hpub, hpred in rccl_rows():
        ratios.append(pred / pub)
        print(f"{size:>11,} {pub:>11.2f} {pred:>7.2f} {pred / pub:>6.2f} {hpub:>10.2f} {hpred:>7.2f} "
              f"{hpred / hpub:>6.2f} {pred / pub / (hpred / hpub):>11.2f}")
    gm = math.exp(sum(abs(math.log(x)) for x in ratios) / len(ratios)) - 1
    print(f"MI300X geometric-mean |error| {gm:.1%} over {len(ratios)} sizes (only the 8 GB figure sets a parameter)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", default="0.9.0.1", choices=(*IMAGES, "all"))
    ap.add_argument("--micro", action="store_true", help="the RCCL bus-bandwidth table instead of serving rows")
    args = ap.parse_args(argv)
    if args.micro:
        micro()
        return 0
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
