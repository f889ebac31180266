"""Published with/without-CUDA-graph pairs of one big-MoE prompt step: the host time each implies, what whatif
charges for the same step, and whether a per-layer or per-op host figure carries from one source to another.

    PYTHONPATH=$PWD python3 benchmarks/graphless_host_pairs.py

A diagnostic (session 75 H, issue 37): nothing here feeds a prediction. Each pair is one step (or a client TTFT
whose difference is one step) run with and without a prompt-step graph. Two readings of the pair's host time H:
- additive: the graphless step costs its GPU time plus H, so H = graphless - graphed (the pair's difference);
- floor: the graphless step is host-paced, max(H, GPU), so H = the graphless step itself, i.e. the difference plus
  the graphed step's GPU time (the measured graphed span where the source gives it, else whatif's priced GPU).
Each H is divided by the model's layers (per layer) and by the kernels whatif counts in that step (per op). Leave
one source out: the per-unit figure averaged over the other sources predicts the held source's H.
Sources (docs/accuracy.md sessions 69 P, 71 K, 75 B, 75 H):
- a: the serving file's Kimi-K2.5 NVFP4 vLLM 0.17.0 B200 rows, one image with and without
  `--max-cudagraph-capture-size 2048` (InferenceX kimik2.5_fp4_b200.sh at 7a83b90 vs PR #1047), 1k/1k c4 client TTFT.
- b: vllm-project/vllm#56975 (comment 2026-09-16), nightly 0.28.1rc1.dev681, GLM-5.3-Flash FP8 (45 layers: 34 KDA +
  11 sparse MLA), 4x GB200 TP4, steps of 1,025-4,096 tokens: graphless host p50 177.4 ms / CUDA-event span 171.0,
  PIECEWISE to 4096 103.9 / 104.9. whatif has no GLM-5.3-Flash: its kernels are Kimi-Linear-48B-A3B's (the same
  KDA + MLA + MoE layer kinds) per layer x 45, an approximation.
- c: SGLang Kimi-K2.6 NVFP4, 4x GB300 TP4, ~1k prompt, 1 client: eager TTFT 175.23 ms (sgl-project/sglang#32655,
  the parent of #30889) vs breakable-graph 51.1 ms (#35807): two commits and two attention paths, not one image.
Searched, no pair stored (2026-12-02): sgl-project/sglang#26382 (Kimi-K2.5 B200 TP4 with/without piecewise graphs;
the stored text stops at the server flags) and #13466 (Kimi-K2-Instruct-0905 TP8, 1k/16: only the "after" table is
stored, 95.15 ms mean TTFT at 1 client, 132.2 at 2; the GPU is not stated).
"""
from __future__ import annotations

import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

GLM53_LAYERS = 45            # vllm#56975: 34 KDA + 11 sparse-MLA layers
KIMI_LINEAR_LAYERS = 27      # whatif's kimi-linear-48b-a3b profile: the per-layer kernel count's donor


@dataclass(frozen=True)
class Pair:
    source: str          # a / b / c (module docstring)
    label: str
    engine: str
    gpu: str
    layers: int
    tokens: int
    graphless_ms: float  # the step (or client TTFT) without a prompt graph, measured
    graphed_ms: float    # with one, measured
    graphed_gpu_ms: float | None   # the graphed step's measured GPU span, where the source gives one
    price: dict          # whatif.api.estimate keywords of the same step (graphless)


def pairs() -> list[Pair]:
    import serving_reference as sr
    from step_ops import find_row
    tp4 = sr.estimate_kwargs(find_row("kimik2_5_b200_vllm_fp4_agg_1024x1024_c4_cfg635"))
    tp8 = sr.estimate_kwargs(find_row("2026_04_06_kimi_k2_5_b200_sxm_vllm_fp4_agg_1024x1024_c4_tp8_ep1_1297"))
    linear = dict(model="kimi-linear-48b-a3b", hardware="gb200", kernel_engine="vllm", gpus=4, tp=4, prompt=2048)
    kimi_gb300 = dict(model=tp4["model"], hardware="gb300", kernel_engine="sglang", gpus=4, tp=4, prompt=998,
                      kv_dtype="fp8")
    return [Pair("a", "Kimi-K2.5 NVFP4 TP4 1k c4", "vLLM 0.17.0", "B200 (x86)", 61, 1024, 169.9, 81.5, None, tp4),
            Pair("a", "Kimi-K2.5 NVFP4 TP8 1k c4", "vLLM 0.17.0", "B200 (x86)", 61, 1024, 163.7, 74.1, None, tp8),
            Pair("b", "GLM-5.3-Flash FP8 TP4 1-4k", "vLLM 0.28.1rc1", "GB200 (Grace)", GLM53_LAYERS, 2048,
                 171.0, 104.9, 104.9, linear),
            Pair("c", "Kimi-K2.6 NVFP4 TP4 1k c1", "SGLang 2026-07", "GB300 (Grace)", 61, 998, 175.2, 51.1, None,
                 kimi_gb300)]


def priced(p: Pair) -> tuple[float, float, float, int]:
    """whatif's prefill pass of the pair's step: (GPU ms, eager host ms, what the host adds to the pass ms,
    kernels), scaled to the pair's layers where the priced model is a stand-in (b)."""
    from whatif.api import estimate
    kw = {k: v for k, v in p.price.items() if k not in ("output", "memory_utilization")}
    e = estimate(with_max_batch=False, batch=1, output=2, **kw).estimate
    s = e.prefill[0][0]
    scale = p.layers / KIMI_LINEAR_LAYERS if p.source == "b" else 1.0
    return s.gpu_s * 1e3 * scale, s.launch_s * 1e3 * scale, (s.time_s - s.gpu_s) * 1e3 * scale, \
        round(s.kernels * scale)


def implied(p: Pair, gpu_ms: float) -> dict[str, float]:
    """The pair's host time (ms) under the two readings."""
    diff = p.graphless_ms - p.graphed_ms
    floor = diff + (p.graphed_gpu_ms if p.graphed_gpu_ms is not None else gpu_ms)
    if p.source == "c":   # the eager TTFT bounds the host-paced pass from above (session 69 P)
        floor = min(floor, p.graphless_ms)
    return {"add": diff, "floor": floor}


def loo(rows: list[dict], form: str, unit: str, sources: str = "abc") -> dict[str, float]:
    """{source: % error} of the held source's H predicted by the mean per-unit figure of the other sources."""
    per = {}
    for r in rows:
        if r["source"] not in sources:
            continue
        per.setdefault(r["source"], []).append(r[form] / r[unit])
    out = {}
    for s in per:
        fit = statistics.fmean(statistics.fmean(v) for k, v in per.items() if k != s)
        errs = [(fit * r[unit]) / r[form] - 1 for r in rows if r["source"] == s]
        out[s] = 100 * statistics.fmean(errs)
    return out


def main() -> int:
    rows = []
    print(f"{'src':3s} {'step':28s} {'engine':15s} {'GPU':14s} {'L':>3s} {'tok':>5s} {'no-graph':>8s} {'graph':>6s} "
          f"{'w-GPU':>6s} {'w-host':>6s} {'w-add':>5s} {'kern':>5s} {'H add':>6s} {'H floor':>7s} {'add/L':>6s} "
          f"{'flr/L':>6s} {'add/op':>6s} {'flr/op':>6s}")
    for p in pairs():
        gpu, host, added, kernels = priced(p)
        h = implied(p, gpu)
        r = {"source": p.source, "layers": p.layers, "kernels": kernels, **h}
        rows.append(r)
        print(f"{p.source:3s} {p.label:28s} {p.engine:15s} {p.gpu:14s} {p.layers:3d} {p.tokens:5d} "
              f"{p.graphless_ms:8.1f} {p.graphed_ms:6.1f} {gpu:6.1f} {host:6.1f} {added:5.1f} {kernels:5d} "
              f"{h['add']:6.1f} {h['floor']:7.1f} {h['add'] / p.layers:6.2f} {h['floor'] / p.layers:6.2f} "
              f"{1e3 * h['add'] / kernels:6.0f} {1e3 * h['floor'] / kernels:6.0f}")
    print("(ms; H per layer in ms, per op in us; w-GPU / w-host: whatif's priced GPU and eager host of the step, w-add:"
          " what that host adds to the step's time, kern: whatif's kernels in it; b's priced from Kimi-Linear's"
          " layers x 45/27; b's no-graph / graph are CUDA-event spans, its host p50s 177.4 / 103.9 give H add 73.5)")
    print("\nleave one source out (fit: mean per-unit H of the other sources; % error of the held source's H)")
    for form in ("add", "floor"):
        for unit in ("layers", "kernels"):
            e, v = loo(rows, form, unit), loo(rows, form, unit, "ab")
            print(f"  {form:5s} per {unit[:-1]:6s}: " + "  ".join(f"{s} {x:+6.1f}%" for s, x in sorted(e.items()))
                  + "   | vLLM only: " + "  ".join(f"{s} {x:+6.1f}%" for s, x in sorted(v.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
