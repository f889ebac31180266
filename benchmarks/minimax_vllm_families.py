"""vLLM 0.19.0's MiniMax-M2.5 NVFP4 prefill pass on B200 op family by op family: whatif's price beside the B200 vLLM
kernel tables at the same shapes, and the row's measured - predicted TTFT (diagnostic only; nothing here feeds a
prediction; docs/accuracy.md "Session 74 G").

    PYTHONPATH=$PWD python3 benchmarks/minimax_vllm_families.py [--query "..."] [--root AICONFIGURATOR_DIR]

The rows are the committed serving file's (benchmarks/data/serving_reference.csv), by default the NVFP4 v0.19.0 B200
rows at 4 clients (the light-load level). One prompt of the row's ISL is priced as `estimate` prices it under the
serving mapping (benchmarks/step_ops.prefill_pass). Families, and the table each reads (../shared/reference/
aiconfigurator, B200, framework vllm 0.24.0, the only vLLM release the corpus times; MiniMax-M2.5's shape from its
config.json: 62 layers, hidden 3072, 48 query / 8 KV heads of 128, 256 experts top 8 of 1536 columns):
- qkv / o projections: gemm.parquet bfloat16 (torch F.linear), n = 8192 / tp, k = 3072 and n = 3072, k = 6144 / tp
  (NVIDIA's NVFP4 export keeps attention 16-bit: its hf_quant_config's exclude list), linear in m;
- attention (and the KV write the vLLM rows include): attention.parquet prefill, batch 1, 48 / tp heads,
  max(1, 8 / tp) KV heads, bf16 queries over an fp8 cache (the launch's --kv-cache-dtype fp8), linear in isl;
- routed MoE: moe.parquet's vLLM NVFP4 FlashInfer TRTLLM-Gen layer at MiniMax's exact shape, moe_tp = tp, EP 1,
  under the collector's power-law 1.01 and balanced routings (log-linear in tokens);
- all-reduce (two a layer, the hidden state's bf16 bytes): comm.parquet's vLLM custom all-reduce in a CUDA graph
  and TensorRT-LLM's (FlashInfer's fused all-reduce + RMSNorm runs that kernel), log-linear in bytes;
- the rest (router's fp32 GEMM, q/k norm and its all-reduce, RoPE, norms, embedding, head) at whatif's price.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_ROOT = ROOT.parent / "shared" / "reference" / "aiconfigurator"
LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 62, 3072, 48, 8, 128   # MiniMaxAI--MiniMax-M2.5_config.json
INTER, EXPERTS, TOPK = 1536, 256, 8
FAMILY = {"qkv_proj": "qkv", "o_proj": "o", "attention": "attention", "kv_cache_write": "attention",
          "experts_gate_up": "moe", "experts_down": "moe", "attn_allreduce": "all-reduce",
          "mlp_allreduce": "all-reduce"}
FAMILIES = ("qkv", "o", "attention", "moe", "all-reduce", "rest")
DEFAULT_QUERY = ("engine=='vllm' and system=='b200_sxm' and model.str.contains('MiniMax') and version=='0.19.0' "
                 "and moe_quant=='nvfp4' and concurrency==4 and scored==1")


def family(name: str) -> str:
    """The op family of a prefill-pass op by its graph name."""
    return FAMILY.get(name, "rest")


def _interp(x: float, xs, ys, log: bool = False) -> float:
    """ys at x, linear (or log-log) between the sorted measured points, held flat outside them."""
    order = np.argsort(xs)
    xs, ys = np.asarray(xs, float)[order], np.asarray(ys, float)[order]
    if log:
        return float(np.exp(np.interp(np.log(x), np.log(xs), np.log(ys))))
    return float(np.interp(x, xs, ys))


def load_tables(root: Path) -> dict:
    """The B200 vLLM (and TensorRT-LLM all-reduce) rows the families read."""
    import pandas as pd
    g = pd.read_parquet(root / "gemm.parquet")
    a = pd.read_parquet(root / "attention.parquet")
    m = pd.read_parquet(root / "moe.parquet")
    c = pd.read_parquet(root / "comm.parquet")
    b200 = lambda t: t[t.gpu == "b200_sxm"]   # noqa: E731
    return {"gemm": b200(g)[lambda t: (t.framework == "vllm") & (t.gemm_dtype == "bfloat16")],
            "attention": b200(a)[lambda t: (t.framework == "vllm") & (t.phase == "prefill") & (t.batch_size == 1)
                                 & (t.head_dim == HEAD_DIM) & (t.attn_dtype == "bfloat16")
                                 & (t.kv_cache_dtype == "fp8") & (t.window_size.fillna(0) == 0)],
            "moe": b200(m)[lambda t: (t.framework == "vllm") & (t.moe_dtype == "nvfp4") & (t.hidden_size == HIDDEN)
                           & (t.inter_size == INTER) & (t.num_experts == EXPERTS) & (t.topk == TOPK)
                           & (t.moe_ep_size == 1)],
            "comm": b200(c)[lambda t: t.op_name == "all_reduce"]}


def table_families(tables: dict, tokens: int, tp: int) -> dict[str, float]:
    """ms over the pass's layers of each tabled family at one prompt of `tokens` on TP `tp` (see the docstring)."""
    def gemm(n: int, k: int) -> float:
        t = tables["gemm"][(tables["gemm"].n == n) & (tables["gemm"].k == k)]
        return _interp(tokens, t.m, t.latency_ms)

    att = tables["attention"]
    att = att[(att.num_heads == HEADS // tp) & (att.num_key_value_heads == max(1, KV_HEADS // tp))]
    moe = tables["moe"][tables["moe"].moe_tp_size == tp]

    def moe_at(dist: str) -> float:
        t = moe[moe.distribution == dist]
        return _interp(tokens, t.num_tokens, t.latency_ms, log=True)

    def allreduce(source: str) -> float:
        if tp == 1:
            return 0.0
        t = tables["comm"][(tables["comm"].kernel_source == source) & (tables["comm"].num_gpus == tp)]
        return 2 * _interp(tokens * HIDDEN * 2.0, t.bytes, t.latency_ms, log=True)

    per_layer = {"qkv": gemm((HEADS + 2 * KV_HEADS) * HEAD_DIM // tp, HIDDEN),
                 "o": gemm(HIDDEN, HEADS * HEAD_DIM // tp),
                 "attention": _interp(tokens, att.isl, att.latency_ms),
                 "moe power-law 1.01": moe_at("power_law_1.01"), "moe balanced": moe_at("balanced"),
                 "all-reduce vllm graph": allreduce("vLLM_custom_graph"), "all-reduce trtllm": allreduce("TRTLLM")}
    return {k: LAYERS * v for k, v in per_layer.items()}


def whatif_families(op_times) -> dict[str, float]:
    """ms of whatif's pass by family (FAMILIES), from its priced ops."""
    from step_ops import summed
    sums = summed(op_times, family)
    return {f: sums[f].total_s * 1e3 if f in sums else 0.0 for f in FAMILIES}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    import pandas as pd
    from step_ops import find_row, prefill_pass
    if not args.root.is_dir():
        print(f"--root: {args.root} is not a directory (the shared aiconfigurator tables)")
        return 2
    import serving_reference as sr
    committed = pd.read_csv(sr.OUT).query(args.query)
    tables = load_tables(args.root)
    seen = set()
    print("tp  isl  | meas pred gap TTFT ms | whatif: qkv o attn moe ar rest = pass | tables: qkv o attn "
          "moe(pl1.01/bal) ar(vllm/trtllm) | tabled sum - whatif's (pl1.01, vllm ar / bal, trtllm ar)")
    for _, r in committed.sort_values(["tp", "isl"]).iterrows():
        key = (r.tp, r.ep, r.isl, r.concurrency, r.moe_quant)
        if key in seen:
            continue
        seen.add(key)
        row = find_row(r.id)
        w = whatif_families(prefill_pass(row).op_times)
        t = table_families(tables, int(r.isl), int(r.tp))
        wsum = sum(w[f] for f in FAMILIES[:5])
        hi = t["qkv"] + t["o"] + t["attention"] + t["moe power-law 1.01"] + t["all-reduce vllm graph"]
        lo = t["qkv"] + t["o"] + t["attention"] + t["moe balanced"] + t["all-reduce trtllm"]
        print(f"{int(r.tp):<3d} {int(r.isl):<5d}| {r.measured_ttft_ms:5.0f} {r.predicted_ttft_ms:4.0f} "
              f"{r.measured_ttft_ms - r.predicted_ttft_ms:+4.0f} | "
              + " ".join(f"{w[f]:.1f}" for f in FAMILIES) + f" = {wsum + w['rest']:.1f} | "
              f"{t['qkv']:.1f} {t['o']:.1f} {t['attention']:.1f} {t['moe power-law 1.01']:.1f}/"
              f"{t['moe balanced']:.1f} {t['all-reduce vllm graph']:.1f}/{t['all-reduce trtllm']:.1f} | "
              f"{hi - wsum:+.1f} / {lo - wsum:+.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
