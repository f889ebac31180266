"""Predictions that a GPU profile's enabled SMs (`sm_count`) and clock (`boost_clock`) can move, per GPU:
GEMMs through the vLLM-fitted tile-wave model (wave quantization over the SMs, per-SM peak = peak / SMs),
prefill attention (vLLM fit; its exponential floor runs at SMs x clock x the SFU rate), and `estimate`
TTFT / TPOT at 8,192 / 256 tokens, batch 1. Run on two commits and compare the JSON (session 73 P).

    PYTHONPATH=$PWD python3 benchmarks/sm_clock_predictions.py OUT.json
"""
from __future__ import annotations

import json
import subprocess
import sys

from whatif.roofline.kernel_models.gemm import gemm_time
from whatif.roofline.kernel_models.params import params_for
from whatif.roofline.kernel_models.prefill_attention import prefill_attention_time
from whatif.specs.hardware import load_component

KERNEL_GPUS = ["b300", "gb300", "gb200", "h200-sxm", "gh200-96gb", "h20", "rtx-pro-6000-server", "mi300x",
               "mi355x", "b200", "h100-sxm"]
ESTIMATE_GPUS = ["b300", "gb300", "gb200", "h200-sxm", "gh200-96gb", "mi355x", "b200"]
BLACKWELL = {"b300", "gb300", "gb200", "b200"}
ENGINES = ("vllm", "sglang", "trtllm")


def kernel_row(name: str, engine: str = "vllm") -> dict:
    """GEMM and prefill-attention microseconds on one GPU with `engine`'s fits."""
    g = load_component(name, "gpu")
    r = {"sm": g.sm_count.value, "clock_mhz": g.boost_clock.value / 1e6}
    for dt in ("bf16", "fp8"):
        if dt not in g.peak:
            continue
        p = params_for("gemm", g.arch, dt, engine).params
        for m, n in ((1, 8192), (64, 8192), (512, 8192), (4096, 8192), (4096, 1280)):
            r[f"gemm_{dt}_m{m}_n{n}_k8192_us"] = round(gemm_time(m, n, 8192, dt, g, p) * 1e6, 2)
    pp = params_for("prefill_attention", g.arch, "bf16", engine).params
    for length in (1024, 8192, 32768):   # Llama-70B at TP4: 16 query heads, 2 KV heads, d 128
        r[f"prefill_llama70b_tp4_{length}_us"] = round(
            prefill_attention_time(1, length, 16, 2, 128, "bf16", "bf16", g, pp) * 1e6, 1)
    r["prefill_gptoss_d64_tp4_8192_us"] = round(prefill_attention_time(1, 8192, 16, 2, 64, "bf16", "bf16", g,
                                                                       pp) * 1e6, 1)
    return r


def estimate(args: list[str]):
    """[TTFT ms, TPOT ms] of `whatif estimate` at 8,192 / 256 tokens, batch 1, or the refusal's line."""
    cmd = [sys.executable, "-m", "whatif", "estimate", "--json", "--batch", "1", "--prompt", "8192",
           "--output", "256"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        return p.stderr.strip().splitlines()[-1][:100]
    d = json.loads(p.stdout)
    return [round(d["ttft_s"] * 1e3, 2), round(d["tpot_s"] * 1e3, 3)]


def main(argv: list[str]) -> int:
    out = {name: kernel_row(name) for name in KERNEL_GPUS}
    for name in ESTIMATE_GPUS:
        for eng in ENGINES:
            out[name][f"est_llama70b_fp8_tp4_{eng}"] = estimate(
                ["--model", "llama-3.1-70b", "--hardware", name, "--tp", "4", "--quantization", "fp8",
                 "--engine", eng])
            if name in BLACKWELL:   # DeepSeek-R1 has DeepSeek-V3's architecture
                out[name][f"est_r1_nvfp4_tp8_{eng}"] = estimate(
                    ["--model", "deepseek-v3", "--hardware", name, "--tp", "8", "--quantization", "nvfp4",
                     "--engine", eng])
    text = json.dumps(out, indent=1)
    if argv:
        open(argv[0], "w").write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
