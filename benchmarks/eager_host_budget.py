"""The host time a layer an eager prefill pass would need to hold a light-load TTFT gap, beside what whatif charges.

    python benchmarks/eager_host_budget.py [--query Q]

For each deployment the query picks from the committed serving table (default: B200 DeepSeek / Kimi / GLM rows at
<= 8 clients and 1,024-token prompts, session 62 F), grouped by engine, model, precision and layout: the median
measured and predicted TTFT, the gap between them, whatif's prefill pass of one prompt (`estimate` under the row's
mapping: GPU ms, host ms of its eager launches, kernels) and, per attention layer, whatif's host time now and the host
time a layer that would put into the pass all of the gap ("need all") or half of it ("need half": session 61 E read
about half of the light-load gap as held inside the step loop, benchmarks/prefill_hold_from_tpot.py). Compare with the
eager floors aiconfigurator measured (benchmarks/eager_module_host.py: SGLang's MLA module 0.53-0.67 ms, its DeepEP
MoE core 0.32-0.40 ms, vLLM's DSA module 1.3-2.2 ms a call). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_QUERY = ("system=='b200_sxm' and model.str.contains('DeepSeek|Kimi|GLM') and concurrency<=8 "
                 "and scored==1 and isl==1024")
GROUP = ["engine", "model", "gemm_quant", "tp", "ep", "attention_dp"]
ATTENTION_OPS = ("attention", "attention_mla", "attention_dsa")   # one a layer: the pass's layer count


def pass_budget(prefill, gap_ms: float) -> dict[str, float]:
    """whatif's pass (GPU / host ms, kernels, layers), its host us a layer, and the host us a layer that would carry
    all / half of `gap_ms` inside the pass (the pass taking max(GPU, host) now)."""
    layers = sum(t.op.count for t in prefill.op_times if t.op.name in ATTENTION_OPS)
    gpu, host = prefill.gpu_s * 1e3, prefill.launch_s * 1e3
    now = max(gpu, host)
    return {"gpu_ms": gpu, "host_ms": host, "kernels": prefill.kernels, "layers": layers,
            "host_us_a_layer": host / layers * 1e3, "need_all_us": (now + gap_ms) / layers * 1e3,
            "need_half_us": (now + gap_ms / 2) / layers * 1e3}


def budgets(query: str = DEFAULT_QUERY) -> list[dict]:
    """One record per deployment group of the query's rows (the first row's mapping prices the pass)."""
    import pandas as pd
    import serving_reference as sr
    from step_ops import prefill_pass

    table = pd.read_csv(sr.OUT).query(query, engine="python")
    table = table[table["predicted_ttft_ms"].notna()]
    rows = {r["id"]: r for r in sr.load()}
    out = []
    for key, grp in table.groupby(GROUP):
        gap = statistics.median(grp["measured_ttft_ms"] - grp["predicted_ttft_ms"])
        rec = dict(zip(GROUP, key), rows=len(grp), measured_ms=grp["measured_ttft_ms"].median(),
                   predicted_ms=grp["predicted_ttft_ms"].median(), gap_ms=gap)
        out.append({**rec, **pass_budget(prefill_pass(rows[grp["id"].iloc[0]]), gap)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY, help="pandas query on the committed serving table")
    args = ap.parse_args()
    print("| engine | model | GEMMs | tp / ep / adp | rows | measured ms | predicted ms | gap ms | pass GPU / host ms "
          "| kernels | host us a layer now | need half / all us a layer |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in budgets(args.query):
        print(f"| {r['engine']} | {r['model'].split('/')[-1]} | {r['gemm_quant']} | {r['tp']} / {r['ep']} / "
              f"{r['attention_dp']} | {r['rows']} | {r['measured_ms']:.0f} | {r['predicted_ms']:.0f} | "
              f"{r['gap_ms']:+.0f} | {r['gpu_ms']:.1f} / {r['host_ms']:.1f} | {r['kernels']} | "
              f"{r['host_us_a_layer']:.0f} | {r['need_half_us']:.0f} / {r['need_all_us']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
