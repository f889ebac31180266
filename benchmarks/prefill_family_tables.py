"""A serving row's one-prompt prefill pass, op family by op family, priced against the B200 SGLang kernel tables.

    python benchmarks/prefill_family_tables.py ROW_ID [ROW_ID ...] [--root PATH]

Any MoE row of benchmarks/serving_reference.py (DeepSeek-V3/R1, GLM-5, Qwen3.5, ...): the model's shape is read off
the priced ops themselves (the router GEMM's k = hidden and n = experts, the expert GEMMs' rows = tokens x top-k / EP,
the down GEMM's k = intermediate / moe_tp), so one script covers every family; each family's total over the layers
(ms) beside the same ops' measured time at the same shape in ../shared/reference/aiconfigurator:
- attention module: DeepSeek's MLA from TensorRT-LLM's whole-module context table (prefill_vs_kernels.measured_mla_ms;
  SGLang runs the same trtllm-gen MLA), GLM-5's DSA from SGLang 0.5.14's dsa_context_module table (its executed
  kernel: `sglang_dsa_dense_mha_trtllm_ragged` at <= 2,048 tokens, `sglang_dsa_indexer_trtllm` past it, fp8 cache,
  fp8-block GEMMs); none for Qwen3.5 (its GDN and attention: qwen35_decode_ops.py --prefill-tokens);
- routed MoE (router + expert GEMMs + their quantize / activation): moe.parquet's sglang_flashinfer_trtllm_moe layer
  at the row's tokens, moe_tp / EP, balanced .. power-law 1.01 (the collector's routings; under EP its grouped top-k
  loads half the ranks, docs/accuracy.md session 65 N, so an EP range overshoots a uniform routing);
- all-reduce: comm.parquet's SGLang eager custom all-reduce at the pass's bytes (prefill_vs_kernels);
- dense GEMMs outside the module (shared experts, dense layers, GDN projections): gemm.parquet's SGLang 0.5.14 rows
  at the nearest (n, k) grid point, linear in m, scaled by the op's n x k over the grid point's; its fp8 is
  per-tensor (sgl-kernel fp8_scaled_mm: a lower bound for the checkpoints' 128x128 block scales);
- the rest (norms, residual adds, GDN / attention kernels without a table here, head) at whatif's price.
A table time that stays flat in tokens (the dense DSA module: 0.76-0.84 ms from 4 to 16,384 tokens) is the
collector's back-to-back eager timing, i.e. host-bound, not kernel time (collect_mla_module.py times call_target()
eagerly when no graph is captured); it is printed, flagged, and compared with the pass's host time. Nothing here
feeds a prediction (docs/accuracy.md, "Session 68 D").
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from prefill_vs_kernels import (GEMM_TYPES, MLA_OPS, interp, measured_allreduce_ms, rows_named,  # noqa: E402
                                measured_mla_ms)
from step_ops import prefill_pass   # noqa: E402

FAMILIES = ("attention module", "routed moe", "all-reduce", "dense gemms", "rest")
GEMM_TABLE_DTYPE = {"fp8": "fp8", "fp4": "nvfp4"}   # whatif op dtype -> gemm.parquet gemm_dtype (else bfloat16)
DSA_DENSE_MAX = 2048   # SGLang's DSA backend runs its dense MHA path while the keys fit index_topk (session 62 I)


def moe_shape(ops, ep: int) -> dict | None:
    """hidden, experts, top-k, intermediate x moe_tp and tokens, read off a pass's router and expert GEMMs."""
    by = {t.op.name: t.op for t in ops}
    router, up, down = by.get("router"), by.get("experts_gate_up"), by.get("experts_down")
    if router is None or up is None or down is None:
        return None
    tokens = router.shape.m
    return {"tokens": tokens, "hidden": int(router.shape.k), "experts": int(router.shape.n),
            "topk": round(up.shape.m * ep / tokens), "inter_local": down.shape.k}


def family(op, module: str | None) -> str:
    """The family of one priced prefill op (`module`: "dsa", "mla" or None, the pass's attention module table)."""
    from whatif.roofline.module_fits import DSA_MODULE_ROLES
    from whatif.roofline.ops import graph_role
    name = op.name.removesuffix("_group_quant")
    if (module == "dsa" and graph_role(op) in DSA_MODULE_ROLES) or (module == "mla" and name in MLA_OPS):
        return "attention module"
    if name == "router" or name.startswith("experts_"):
        return "routed moe"
    if name.endswith("allreduce"):
        return "all-reduce"
    if type(op.shape).__name__ == "GemmShape" and op.shape.groups <= 1:
        return "dense gemms"
    return "rest"


def measured_dsa_ms(root: Path, heads: int, tokens: int) -> tuple[float | None, str]:
    """GLM-5-FP8's SGLang DSA context module (ms, one prompt, fp8 cache) and the kernel the table names."""
    import pandas as pd
    d = pd.read_parquet(root / "modern" / "b200_sxm" / "sglang" / "sparse_attention__dsa_context_module_perf.parquet")
    kernel = "sglang_dsa_dense_mha_trtllm_ragged" if tokens <= DSA_DENSE_MAX else "sglang_dsa_indexer_trtllm"
    d = d[(d.model == "zai-org/GLM-5-FP8") & (d.op_name == "dsa_context_module") & (d.kernel_source == kernel)
          & (d.num_heads == heads) & (d.batch_size == 1) & (d.step == 0) & (d.kv_cache_dtype == "fp8")]
    rows = d.groupby("isl").latency.median()
    return interp(list(zip(rows.index.astype(float), rows.values)), tokens), kernel


def measured_moe_layer_ms(root: Path, shape: dict, moe_tp: int, ep: int, dtype: str) -> tuple[float, float] | None:
    """The fused MoE layer's measured ms at the pass's tokens (balanced, power-law 1.01), or None off the table."""
    import pandas as pd
    d = pd.read_parquet(root / "moe.parquet")
    d = d[(d.gpu == "b200_sxm") & (d.kernel_source == "sglang_flashinfer_trtllm_moe") & (d.moe_dtype == dtype)
          & (d.hidden_size == shape["hidden"]) & (d.num_experts == shape["experts"]) & (d.topk == shape["topk"])
          & (d.inter_size == round(shape["inter_local"] * moe_tp)) & (d.moe_tp_size == moe_tp)
          & (d.moe_ep_size == ep)]
    out = []
    for dist in ("balanced", "power_law_1.01"):
        rows = d[d.distribution == dist].groupby("num_tokens").latency_ms.median()
        out.append(interp(list(zip(rows.index.astype(float), rows.values)), shape["tokens"]))
    return None if None in out else (min(out), max(out))


def measured_gemm_ms(gemm, op) -> float | None:
    """One dense GEMM's measured ms: the nearest (n, k) grid point's rows, linear in m, scaled to the op's n x k."""
    d = gemm[gemm.gemm_dtype == GEMM_TABLE_DTYPE.get(op.dtype, "bfloat16")]
    if d.empty:
        return None
    near = lambda vals, x: min(vals, key=lambda v: abs(math.log(v) - math.log(max(x, 1.0))))   # noqa: E731
    s = op.shape
    n, k = near(d.n.unique(), s.n), near(d.k.unique(), s.k)
    rows = d[(d.n == n) & (d.k == k)].groupby("m").latency_ms.median()
    t = interp(list(zip(rows.index.astype(float), rows.values)), s.m, extend=True)
    return None if t is None else t * (s.n * s.k) / (n * k)


def load_gemm_table(root: Path):
    """gemm.parquet's SGLang B200 rows."""
    import pandas as pd
    gemm = pd.read_parquet(root / "gemm.parquet")
    return gemm[(gemm.gpu == "b200_sxm") & (gemm.framework == "sglang")]


def compare(row: dict, root: Path, gemm) -> dict:
    """{family: (whatif ms, table lo ms, table hi ms, basis)} and the pass's totals for one row."""
    import serving_reference as sr
    kw, first = sr.estimate_kwargs(row), prefill_pass(row)
    tp, ep, tokens = kw["tp"], kw.get("ep", 1), kw["prompt"]
    ops = first.op_times
    names = {t.op.name for t in ops}
    module = ("dsa" if "indexer_scores" in names else "mla") if "attention_mla" in names else None
    priced = {f: 0.0 for f in FAMILIES}
    gemm_ms, gemm_missing = 0.0, 0.0
    for t in ops:
        f = family(t.op, module)
        priced[f] += t.total_s * 1e3
        if f == "dense gemms":
            each = measured_gemm_ms(gemm, t.op)
            if each is None:
                gemm_missing += t.total_s * 1e3
            else:
                gemm_ms += each * t.op.count
    layers = sum(t.op.count for t in ops if t.op.name == "attention_mla")
    gemm_type = GEMM_TYPES.get(row["gemm_quant_mode"], "fp8_block")
    out = {}
    if module == "dsa":
        heads = next(t.op.shape.heads for t in ops if t.op.name == "attention_mla")
        each, kernel = measured_dsa_ms(root, heads, tokens)
        flat = "flat in tokens: eager host-bound timing" if kernel.startswith("sglang_dsa_dense") else ""
        out["attention module"] = (each, each, layers, f"{kernel} {heads} heads {flat}".strip())
    elif module == "mla":
        heads = next(t.op.shape.heads for t in ops if t.op.name == "attention_mla")
        each = measured_mla_ms(root, heads, tokens, gemm_type)
        out["attention module"] = (each, each, layers, f"TensorRT-LLM MLA module {heads} heads")
    shape = moe_shape(ops, ep)
    if shape:
        dtype = GEMM_TYPES.get(row["moe_quant_mode"], "bfloat16")   # an empty mode: the 16-bit checkpoint
        m = measured_moe_layer_ms(root, shape, tp // ep, ep, dtype)
        n = sum(t.op.count for t in ops if t.op.name == "experts_gate_up")   # every layer group's MoE
        out["routed moe"] = (*(m or (None, None)), n, f"{dtype} moe_tp {tp // ep} ep {ep} top-{shape['topk']}")
        n_ar = sum(t.op.count for t in ops if t.op.name.endswith("allreduce") and t.op.name != "embedding_allreduce")
        ar = measured_allreduce_ms(root, row["backend"], tp, tokens * shape["hidden"] * 2)
        out["all-reduce"] = (ar, ar, n_ar, f"sglang eager, {tokens * shape['hidden'] * 2 / 1e6:.1f} MB")
    result = {}
    for f in FAMILIES:
        if f == "dense gemms":
            note = f" (+{gemm_missing:.1f} priced, no rows)" if gemm_missing else ""
            result[f] = (priced[f], gemm_ms + gemm_missing, gemm_ms + gemm_missing, "gemm.parquet sglang 0.5.14" + note)
            continue
        lo, hi, n, basis = out.get(f, (None, None, 0, "whatif's price"))
        result[f] = ((priced[f], priced[f], priced[f], basis) if lo is None
                     else (priced[f], lo * n, hi * n, f"{n} x {basis}"))
    return {"row": row, "tokens": tokens, "families": result, "gpu_ms": first.gpu_s * 1e3,
            "host_ms": first.launch_s * 1e3, "pass_ms": first.time_s * 1e3}


def report(c: dict) -> str:
    r = c["row"]
    lines = [f"{r['id']}: {r['backend']} {r['backend_version']}, {c['tokens']} tokens; pass {c['pass_ms']:.1f} ms "
             f"(GPU {c['gpu_ms']:.1f}, host launches {c['host_ms']:.1f}); measured TTFT "
             f"{float(r['silicon_ttft_ms']):.0f} ms",
             f"  {'family':<17} {'whatif ms':>10} {'tables ms':>14} {'x':>10}  basis"]
    lo_sum = hi_sum = 0.0
    for f, (w, lo, hi, basis) in c["families"].items():
        lo_sum, hi_sum = lo_sum + lo, hi_sum + hi
        rng = f"{lo:.1f}" if abs(hi - lo) < 0.05 else f"{lo:.1f}-{hi:.1f}"
        ratio = f"x{w / hi:.2f}" + (f"-{w / lo:.2f}" if abs(hi - lo) >= 0.05 else "") if lo > 0 else "-"
        lines.append(f"  {f:<17} {w:>10.1f} {rng:>14} {ratio:>10}  {basis}")
    w_sum = sum(v[0] for v in c["families"].values())
    lines.append(f"  {'GPU sum':<17} {w_sum:>10.1f} {f'{lo_sum:.1f}-{hi_sum:.1f}':>14} "
                 f"{f'x{w_sum / hi_sum:.2f}-{w_sum / lo_sum:.2f}':>10}")
    return "\n".join(lines)


def main(argv=None) -> int:
    named = rows_named(argv, __doc__.splitlines()[0])
    if named is None:
        return 2
    args, rows = named
    gemm = load_gemm_table(args.root)
    for row in rows:
        print(report(compare(row, args.root, gemm)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
