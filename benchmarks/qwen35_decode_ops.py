"""Qwen3.5-397B-A17B's decode step on 8x B200 (SGLang), op family by op family, against the measured kernel tables.

For each layout the serving set ran (bf16 TP8, fp8 TP8, fp8 TP4 EP4, fp8 TP4 EP1: the -mtp key's plain decode step) and
a few decode batches, prints the
microseconds per layer that `estimate` charges each op family (summed over the layers that run it, divided by the
layers) beside the same family's measured time at the same shape in ../shared/reference/aiconfigurator (SGLang
0.5.14 on B200, CUDA-graph replays, warm L2): the fused MoE (balanced and power-law routing), the GDN recurrent
decode and conv1d update (modern/ gdn_perf), SGLang's graph all-reduce, the full-attention decode (head_dim 256),
and the dense GEMMs (nearest n, k of the table's grid; the table's fp8 is per-tensor where the checkpoint is
128x128 blocks). A diagnostic: nothing here is fitted or used at prediction time.

`--prefill-tokens 8192` prints instead one prompt's prefill pass of that many tokens, a layer's op families against the
tables at the same shape (session 66 G): the fused MoE at the layout's moe_tp / EP (balanced, power-law 1.01), the GDN
chunked kernel and causal conv1d (gdn_perf context rows, batch 1), SGLang's trtllm_mha prefill attention (the recipes'
--attention-backend) and SGLang's eager all-reduce of the pass's hidden states.

`--moe-tokens 128,512,1024` prints instead the fused MoE a layer at N routed tokens (fp8_block, moe_tp 4 and 8): the
table's balanced and power-law rows beside what `estimate` prices for the experts of one N-token prefill, with the
regime of whatif's fit (kernel_models/moe.py: small-M parameters at <= SMALL_M routed rows a touched expert).

    python benchmarks/qwen35_decode_ops.py [--batches 4,16,64] [--context 1536] [--moe-tokens 256,512,768,1024]
        [--prefill-tokens 8192]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from step_ops import summed   # benchmarks/ is on the path: this is run as a script or through tests' load_benchmark

REF = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"
MODEL = "Qwen/Qwen3.5-397B-A17B"
LAYOUTS = (("bf16", 8, 1), ("fp8", 8, 1), ("fp8", 4, 4), ("fp8", 4, 1))   # the serving set's SGLang B200 layouts
TOPK, EXPERTS, LAYERS = 10, 512, 60
K_HEADS, V_HEADS, HEADS, KV_HEADS, HIDDEN = 16, 64, 32, 2, 4096   # Qwen3.5-397B-A17B config.json


def predicted(dtype: str, tp: int, ep: int, batch: int, context: int) -> tuple[float, dict]:
    """(TPOT s, {op name: OpSum}) of `estimate`'s decode step."""
    from whatif.api import estimate
    extra = {} if dtype == "bf16" else {"kv_dtype": "fp8", "quantization": "fp8"}
    e = estimate(MODEL, "dgx-b200", tp=tp, gpus=tp, ep=ep, batch=batch, prompt=context, output=2,
                 kernel_engine="sglang", with_max_batch=False, **extra).estimate
    return e.tpot_s, summed(e.decode.op_times)


def _nearest(values, x: float) -> float:
    return min(values, key=lambda v: abs(math.log(v) - math.log(x)))


def tables():
    import pandas as pd
    b200 = lambda d: d[d.gpu.str.contains("b200", case=False)]   # noqa: E731
    moe = b200(pd.read_parquet(REF / "moe.parquet"))
    moe = moe[(moe.framework == "sglang") & (moe.num_experts == 512) & (moe.hidden_size == HIDDEN)
              & (moe.inter_size == 1024) & (moe.topk == 10)]
    gdn = pd.read_parquet(REF / "modern" / "b200_sxm" / "sglang" / "linear_attention__gdn_perf.parquet")
    gdn = gdn[(gdn.model_name == MODEL) & (gdn.phase == "generation")]
    comm = b200(pd.read_parquet(REF / "comm.parquet"))
    comm = comm[(comm.backend == "sglang_graph") & (comm.op_name == "all_reduce")]
    att = b200(pd.read_parquet(REF / "attention.parquet"))
    att = att[(att.framework == "sglang") & (att.phase == "decode") & (att.head_dim == 256)]
    gemm = b200(pd.read_parquet(REF / "gemm.parquet"))
    gemm = gemm[gemm.framework == "sglang"]
    return moe, gdn, comm, att, gemm


def measured(t, dtype: str, tp: int, ep: int, batch: int, context: int, shapes: dict) -> dict:
    """{family: us per layer} from the tables at the step's shapes (None where the table has no such row)."""
    moe, gdn, comm, att, gemm = t
    moe_tp = tp // ep
    m = moe[(moe.moe_dtype == ("bfloat16" if dtype == "bf16" else "fp8_block")) & (moe.moe_tp_size == moe_tp)
            & (moe.moe_ep_size == ep) & (moe.num_tokens == batch)]
    out = {"moe balanced": pick(m[m.distribution == "balanced"]),
           "moe power_law_1.2": pick(m[m.distribution == "power_law_1.2"])}
    g = gdn[(gdn.num_k_heads == K_HEADS // tp) & (gdn.num_v_heads == V_HEADS // tp) & (gdn.batch_size == batch)]
    out["gdn recurrent"] = _gdn(g, "fused_recurrent_gated_delta_rule_packed_decode")
    out["gdn conv1d"] = _gdn(g, "causal_conv1d_update")
    c = comm[(comm.num_gpus == tp) & (comm.bytes == batch * HIDDEN * 2)]
    out["all-reduce"] = pick(c)
    a = att[(att.num_heads == HEADS // tp) & (att.num_key_value_heads == max(1, KV_HEADS // tp))
            & (att.kv_cache_dtype == ("bfloat16" if dtype == "bf16" else "fp8")) & (att.batch_size == batch)]
    out["attention"] = _at_context(a, context)
    gd = gemm[(gemm.gemm_dtype == ("bfloat16" if dtype == "bf16" else "fp8")) & (gemm.m == batch)]
    for name in ("mixer_in_proj", "mixer_out_proj", "qkv_proj", "o_proj", "router", "shared_expert_gate_up",
                 "shared_expert_down"):
        s = shapes.get(name)
        if s is None or not len(gd):
            continue
        n, k = _nearest(gd.n.unique(), s["n"]), _nearest(gd.k.unique(), s["k"])
        out[f"gemm {name}"] = pick(gd[(gd.n == n) & (gd.k == k)])
    return {k: (v * 1e3 if v is not None else None) for k, v in out.items()}


def _at_context(rows, context: int) -> float | None:
    """Median latency (ms) of decode-attention rows at `context` cached tokens, linear between the table's steps."""
    by = rows.groupby("step").latency_ms.median()
    if by.empty:
        return None
    lo, hi = by[by.index <= context], by[by.index >= context]
    if lo.empty or hi.empty:
        return float((lo if hi.empty else hi).iloc[-1 if hi.empty else 0])
    (s0, t0), (s1, t1) = (lo.index[-1], lo.iloc[-1]), (hi.index[0], hi.iloc[0])
    return float(t0 if s1 == s0 else t0 + (t1 - t0) * (context - s0) / (s1 - s0))


def pick(rows) -> float | None:
    """The median latency (ms) of table rows, or None."""
    return float(rows.latency_ms.median()) if len(rows) else None


def _gdn(g, kernel: str):
    d = g[g.kernel_source == kernel]
    return float(d.latency.median()) if len(d) else None


FAMILIES = {"moe balanced": ("experts_gate_up", "experts_act", "experts_down"), "gdn recurrent": ("gated_deltanet",),
            "gdn conv1d": ("short_conv",), "all-reduce": ("attn_allreduce",), "attention": ("attention",)}


def per_layer(ops: dict, names) -> float | None:
    """us per layer of the ops `names` (their total over the layers that run them)."""
    hits = [ops[n] for n in names if n in ops]
    if not hits:
        return None
    return sum(h.total_s for h in hits) / max(h.count for h in hits) * 1e6


def moe_regime(tokens: int, topk: int = TOPK, experts: int = EXPERTS) -> str:
    """Which of the fused-MoE fit's two parameter sets prices `tokens` routed tokens: small-M at <= SMALL_M routed rows
    a touched expert (every expert touched once tokens x topk >= experts), large-M above (kernel_models/moe.py)."""
    from whatif.roofline.kernel_models.moe import SMALL_M
    rows = tokens * topk / min(experts, tokens * topk)
    return "small-M" if rows <= SMALL_M else "large-M"


def moe_seam(tokens_list, moe) -> list[tuple]:
    """(moe_tp, tokens, rows an expert, regime, table balanced us, table power_law_1.01 us, estimate us) a layer."""
    out = []
    for tp in (4, 8):
        for n in tokens_list:
            m = moe[(moe.moe_dtype == "fp8_block") & (moe.moe_tp_size == tp) & (moe.moe_ep_size == 1)
                    & (moe.num_tokens == n)]
            tab = [pick(m[m.distribution == d]) for d in ("balanced", "power_law_1.01")]
            out.append((tp, n, n * TOPK / min(EXPERTS, n * TOPK), moe_regime(n),
                        *(None if t is None else t * 1e3 for t in tab), _priced_experts_us(tp, n)))
    return out


def _priced_experts_us(tp: int, tokens: int) -> float:
    """us a layer `estimate` charges the routed experts (GEMMs, activation, group quantization) of one prompt's
    prefill pass of `tokens` tokens, fp8 with fp8-block experts, TP `tp`."""
    from whatif.api import estimate
    e = estimate(MODEL, "dgx-b200", tp=tp, gpus=tp, batch=1, prompt=tokens, output=2, kernel_engine="sglang",
                 with_max_batch=False, kv_dtype="fp8", quantization="fp8", expert_quantization="fp8-block").estimate
    ops = summed(e.prefill[0][0].op_times)
    return sum(v.total_s for k, v in ops.items() if k.startswith("experts")) / LAYERS * 1e6


PREFILL_FAMILIES = {"moe": ("experts_gate_up", "experts_act", "experts_down"), "gdn chunked": ("gated_deltanet",),
                    "gdn conv1d": ("short_conv",), "attention": ("attention",), "all-reduce": ("attn_allreduce",)}


def prefill_tables():
    """(moe, gdn context rows, SGLang trtllm_mha prefill attention at head_dim 256, SGLang eager all-reduce) on B200."""
    import pandas as pd
    moe = tables()[0]
    gdn = pd.read_parquet(REF / "modern" / "b200_sxm" / "sglang" / "linear_attention__gdn_perf.parquet")
    gdn = gdn[(gdn.model_name == MODEL) & (gdn.phase == "context")]
    att = pd.read_parquet(REF / "attention.parquet")
    att = att[att.gpu.str.contains("b200", case=False) & (att.framework == "sglang") & (att.phase == "prefill")
              & (att.head_dim == 256) & (att.kernel_source == "trtllm_mha")]
    comm = pd.read_parquet(REF / "comm.parquet")
    comm = comm[comm.gpu.str.contains("b200", case=False) & (comm.backend == "sglang_eager")
                & (comm.op_name == "all_reduce")]
    return moe, gdn, att, comm


def prefill_measured(t, dtype: str, tp: int, ep: int, tokens: int) -> dict:
    """{family: (us a layer balanced / the one row, us power-law 1.01 or None)} from the tables at one prompt's
    prefill of `tokens` tokens (None where the table has no such row). The attention rows are the recipes' fp8 q and
    KV (bf16 for the bf16 layout), batch 1."""
    moe, gdn, att, comm = t
    m = moe[(moe.moe_dtype == ("bfloat16" if dtype == "bf16" else "fp8_block")) & (moe.moe_tp_size == tp // ep)
            & (moe.moe_ep_size == ep) & (moe.num_tokens == tokens)]
    g = gdn[(gdn.num_k_heads == K_HEADS // tp) & (gdn.num_v_heads == V_HEADS // tp) & (gdn.batch_size == 1)
            & (gdn.seq_len == tokens)]
    kv = "bfloat16" if dtype == "bf16" else "fp8"
    a = att[(att.num_heads == HEADS // tp) & (att.num_key_value_heads == max(1, KV_HEADS // tp))
            & (att.attn_dtype == kv) & (att.kv_cache_dtype == kv) & (att.batch_size == 1) & (att.isl == tokens)]
    c = comm[(comm.num_gpus == tp) & (comm.bytes == tokens * HIDDEN * 2)]
    us = lambda v: None if v is None else v * 1e3   # noqa: E731
    return {"moe": (us(pick(m[m.distribution == "balanced"])), us(pick(m[m.distribution == "power_law_1.01"]))),
            "gdn chunked": (us(_gdn(g, "chunk_gated_delta_rule")), None),
            "gdn conv1d": (us(_gdn(g, "causal_conv1d_fn")), None),
            "attention": (us(pick(a)), None), "all-reduce": (us(pick(c)), None)}


def prefill_pass(dtype: str, tp: int, ep: int, tokens: int):
    """(pass GPU s, host launch s, {op name: OpSum}) of `estimate`'s one-prompt prefill of `tokens` tokens, in one
    chunk (the recipes' --chunked-prefill-size 32768 takes an 8k prompt whole)."""
    from whatif.api import estimate
    extra = {} if dtype == "bf16" else {"kv_dtype": "fp8", "quantization": "fp8", "expert_quantization": "fp8-block"}
    e = estimate(MODEL, "dgx-b200", tp=tp, gpus=tp, ep=ep, batch=1, prompt=tokens, output=2, kernel_engine="sglang",
                 prefill_chunk=tokens, with_max_batch=False, **extra).estimate
    (p, _), = e.prefill
    return p.gpu_s, p.launch_s, summed(p.op_times)


def print_prefill(tokens: int) -> None:
    t = prefill_tables()
    fmt = lambda v: "-" if v is None else f"{v:.1f}"   # noqa: E731
    for dtype, tp, ep in LAYOUTS:
        gpu_s, host_s, ops = prefill_pass(dtype, tp, ep, tokens)
        print(f"\n{dtype} TP{tp} EP{ep}, one {tokens}-token prompt: estimate GPU {gpu_s * 1e3:.1f} ms, "
              f"host launches {host_s * 1e3:.1f} ms")
        print(f"  {'family (us a layer)':20s} {'estimate':>9s} {'table':>9s} {'pl1.01':>9s}")
        for fam, (val, pl) in prefill_measured(t, dtype, tp, ep, tokens).items():
            est = per_layer(ops, PREFILL_FAMILIES[fam])
            print(f"  {fam:20s} {fmt(est):>9s} {fmt(val):>9s} {fmt(pl):>9s}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", default="4,16,64")
    p.add_argument("--context", type=int, default=1536, help="tokens in each sequence's cache (default 1536)")
    p.add_argument("--moe-tokens", default="", help="routed token counts: print the fused-MoE seam table instead")
    p.add_argument("--prefill-tokens", type=int, default=0, help="print one prompt's prefill pass part by part instead")
    a = p.parse_args(argv)
    if a.prefill_tokens < 0:
        p.error("--prefill-tokens: must be a positive token count")
    if a.prefill_tokens:
        print_prefill(a.prefill_tokens)
        return
    from whatif.roofline.ops import shape_record
    t = tables()
    if a.moe_tokens:
        print(f"{'moe_tp':>6s} {'tokens':>6s} {'rows/exp':>8s} {'regime':>8s} {'bal us':>8s} {'pl1.01 us':>9s} "
              f"{'estimate':>9s}")
        for tp, n, rows, regime, bal, pl, est in moe_seam([int(x) for x in a.moe_tokens.split(",")], t[0]):
            fmt = lambda v: "-" if v is None else f"{v:.1f}"   # noqa: E731
            print(f"{tp:6d} {n:6d} {rows:8.1f} {regime:>8s} {fmt(bal):>8s} {fmt(pl):>9s} {est:9.1f}")
        return
    for dtype, tp, ep in LAYOUTS:
        for batch in (int(x) for x in a.batches.split(",")):
            tpot, ops = predicted(dtype, tp, ep, batch, a.context)
            shapes = {k: shape_record(v.op) for k, v in ops.items()}
            meas = measured(t, dtype, tp, ep, batch, a.context, shapes)
            print(f"\n{dtype} TP{tp} EP{ep}, batch {batch}, context {a.context}: estimate TPOT {tpot * 1e3:.2f} ms")
            print(f"  {'family (us a layer)':28s} {'estimate':>9s} {'table':>9s}")
            for fam, val in meas.items():
                names = FAMILIES.get(fam, (fam.removeprefix("gemm "),) if fam.startswith("gemm ") else ())
                est = per_layer(ops, names)
                shown = "" if est is None else f"{est:9.1f}"
                print(f"  {fam:28s} {shown:>9s} {'-' if val is None else f'{val:9.1f}':>9s}")


if __name__ == "__main__":
    main()
