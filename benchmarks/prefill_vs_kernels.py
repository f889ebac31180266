"""A serving row's prefill pass as whatif prices it, op group by op group, against aiconfigurator's B200 kernel tables.

    python benchmarks/prefill_vs_kernels.py ROW_ID [ROW_ID ...] [--root PATH]

For a DeepSeek-V3/R1 (MLA + MoE) row of benchmarks/serving_reference.py: whatif's `estimate` of one prompt of the
row's input length (its layout, precision and engine as the serving mapping gives them), its prefill pass split into
the MLA attention module, the routed MoE, the shared expert, the all-reduces and the rest, each group's total over the
layers next to the measured kernels at the same shape:
- the MLA module: TensorRT-LLM's whole-module context table (modern/b200_sxm/trtllm/mla__mla_context_module_perf:
  CUDA-graph replays of DeepseekV3's attention forward, collector/trtllm/collect_mla_module.py), one prompt of the
  row's length, 128 / tp heads, fp8 KV cache, the row's GEMM format; SGLang runs the same trtllm-gen MLA kernels and
  FlashInfer's block-scale GEMMs (the recipes' --attention-backend trtllm_mla), so the table stands for both;
- the routed MoE: `moe.parquet`'s flashinfer_trtllm fused layer (the TRTLLM-Gen kernels TensorRT-LLM's
  moe_config.backend TRTLLM and SGLang's --moe-runner-backend flashinfer_trtllm both call), the row's token count,
  moe_tp / moe_ep, routing balanced and power-law 1.01 (the collector's tied logits go through DeepSeek's grouped
  top-k, docs/accuracy.md session 52: read the two as a range);
- the all-reduce: `comm.parquet`'s engine all-reduce (TensorRT-LLM's own; SGLang's eager custom all-reduce) at the
  hidden state's bytes, interpolated in log-bytes;
the rest (norms, residuals, dense layers, embedding, head) at whatif's price. Where the measured sum matches whatif's
GPU time the light-load TTFT gap lies outside the kernels (docs/accuracy.md, "The light-load prefill of DeepSeek on
B200, op by op"). Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from step_ops import OpSum, prefill_pass, summed   # noqa: E402

DEFAULT_ROOT = ROOT.parent / "shared" / "reference" / "aiconfigurator"
HIDDEN = 7168   # DeepSeek-V3's hidden size: the all-reduced activation's width
MLA_OPS = ("q_a_proj", "q_b_proj", "kv_a_proj", "kv_b_proj", "kv_cache_write", "attention_mla", "o_proj")
GROUPS = ("mla module", "routed moe", "shared expert", "all-reduce", "rest")
GEMM_TYPES = {"fp8": "fp8_block", "fp8_block": "fp8_block", "nvfp4": "nvfp4"}   # the row's gemm_quant_mode
ALLREDUCE = {"trtllm": ("trtllm", "implementation"), "sglang": ("sglang_eager", "backend")}


def op_group(name: str) -> str:
    """The group of a prefill-pass op by its graph name."""
    base = name.removesuffix("_group_quant")
    if base in MLA_OPS:
        return "mla module"
    if base == "router" or base.startswith("router_") or base.startswith("experts_"):
        return "routed moe"
    if base.startswith("shared_expert"):
        return "shared expert"
    if base.endswith("allreduce"):
        return "all-reduce"
    return "rest"


def interp(points: list[tuple[float, float]], x: float, log: bool = False, extend: bool = False) -> float | None:
    """Linear interpolation of y at x over sorted (x, y) points (in log x if `log`); outside their range None, or
    with `extend` the line through the nearest two points (x distinct)."""
    pts = sorted(points)
    f = math.log if log else (lambda v: v)
    if not pts or x < pts[0][0] or x > pts[-1][0]:
        if not extend or len(pts) < 2:
            return None
        (x0, y0), (x1, y1) = pts[:2] if x < pts[0][0] else pts[-2:]
        return y0 + (y1 - y0) * (f(x) - f(x0)) / (f(x1) - f(x0))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if x0 <= x <= x1:
            return y0 if x1 == x0 else y0 + (y1 - y0) * (f(x) - f(x0)) / (f(x1) - f(x0))
    return pts[0][1]


def measured_mla_ms(root: Path, heads: int, tokens: int, gemm: str) -> float | None:
    import pandas as pd
    d = pd.read_parquet(root / "modern" / "b200_sxm" / "trtllm" / "mla__mla_context_module_perf.parquet")
    d = d[(d.num_heads == heads) & (d.batch_size == 1) & (d.kv_cache_dtype == "fp8") & (d.gemm_type == gemm)]
    return interp(list(zip(d.isl.astype(float), d.latency.astype(float))), tokens)


def measured_moe_ms(root: Path, tokens: int, moe_tp: int, ep: int, dtype: str,
                    extend: bool = False) -> dict[str, float | None]:
    import pandas as pd
    d = pd.read_parquet(root / "moe.parquet")
    d = d[(d.gpu == "b200_sxm") & (d.kernel_source == "sglang_flashinfer_trtllm_moe") & (d.hidden_size == HIDDEN)
          & (d.inter_size == 2048) & (d.num_experts == 256) & (d.moe_dtype == dtype) & (d.moe_tp_size == moe_tp)
          & (d.moe_ep_size == ep)]
    out = {}
    for dist in ("balanced", "power_law_1.01"):
        rows = d[d.distribution == dist].groupby("num_tokens").latency_ms.median()
        out[dist] = interp(list(zip(rows.index.astype(float), rows.values)), tokens, extend=extend)
    return out


def measured_allreduce_ms(root: Path, engine: str, gpus: int, nbytes: float) -> float | None:
    import pandas as pd
    d = pd.read_parquet(root / "comm.parquet")
    d = d[(d.gpu == "b200_sxm") & (d.op_name == "all_reduce") & (d.num_gpus == gpus)]
    value, column = ALLREDUCE.get(engine, (None, None))
    d = d[d[column] == value] if column else d[d.framework == "nccl"]
    return interp(list(zip(d.bytes.astype(float), d.latency_ms.astype(float))), nbytes, log=True)


def compare(row: dict, root: Path) -> str:
    import serving_reference as sr
    kw, first = sr.estimate_kwargs(row), prefill_pass(row)
    by_group, by_name = summed(first.op_times, op_group), summed(first.op_times)   # times by group, instances by op
    groups = {g: by_group.get(g, OpSum()).total_s for g in GROUPS}
    count = {name: s.count for name, s in by_name.items()}
    tp, ep, tokens = kw["tp"], kw.get("ep", 1), kw["prompt"]
    gemm = GEMM_TYPES.get(row["gemm_quant_mode"], "fp8_block")
    moe_dtype = GEMM_TYPES.get(row["moe_quant_mode"], gemm)
    mla = measured_mla_ms(root, 128 // tp, tokens, gemm)
    moe = measured_moe_ms(root, tokens, tp // ep, ep, moe_dtype)
    ar = measured_allreduce_ms(root, row["backend"], tp, tokens * HIDDEN * 2)
    n_attn, n_moe = count.get("attention_mla", 0), count.get("experts_gate_up", 0)
    n_ar = count.get("attn_allreduce", 0) + count.get("mlp_allreduce", 0)
    lines = [f"{row['id']}: {row['backend']} {row['backend_version']}, TP {tp} EP {ep}, {row['gemm_quant_mode']}, "
             f"{tokens} tokens; measured TTFT {float(row['silicon_ttft_ms']):.0f} ms at "
             f"{row['silicon_data_source'].split('silicon_concurrency=')[-1].split(';')[0].split(',')[0]} clients",
             f"  whatif's pass {first.time_s * 1e3:.1f} ms (GPU {first.gpu_s * 1e3:.1f}, host launches "
             f"{first.launch_s * 1e3:.1f}, {first.kernels} kernels)",
             f"  {'group':<14} {'whatif ms':>10} {'tables ms':>16}  basis"]
    moe_lo, moe_hi = (None, None) if None in moe.values() else (min(moe.values()), max(moe.values()))
    meas = {"mla module": (mla, mla, n_attn, "TensorRT-LLM's module table, CUDA graph"),
            "routed moe": (moe_lo, moe_hi, n_moe, f"flashinfer_trtllm, moe_tp {tp // ep} ep {ep}, balanced..power-law"),
            "all-reduce": (ar, ar, n_ar, f"{row['backend']}'s all-reduce, {tokens * HIDDEN * 2 / 1e6:.1f} MB")}
    lo = hi = 0.0
    for g in GROUPS:
        whatif_ms = groups[g] * 1e3
        each_lo, each_hi, n, basis = meas.get(g, (None, None, 0, "whatif's price"))
        if each_lo is None:
            rng = (whatif_ms, whatif_ms)
            basis = basis if g not in meas else "no table row at this shape: whatif's price"
        else:
            rng = (each_lo * n, each_hi * n)
            each = f"{each_lo:.3f}" if each_lo == each_hi else f"{each_lo:.3f}-{each_hi:.3f}"
            basis = f"{n} x {each} ms ({basis})"
        lo, hi = lo + rng[0], hi + rng[1]
        shown = f"{rng[0]:.1f}" if abs(rng[0] - rng[1]) < 0.05 else f"{rng[0]:.1f}-{rng[1]:.1f}"
        lines.append(f"  {g:<14} {whatif_ms:>10.1f} {shown:>16}  {basis}")
    lines.append(f"  {'GPU sum':<14} {sum(groups.values()) * 1e3:>10.1f} {f'{lo:.1f}-{hi:.1f}':>16}")
    return "\n".join(lines)


def rows_named(argv, description: str):
    """(args, the named serving rows), or None after a one-line error: the CLI both prefill tools share."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    bad = [i for i in args.ids if i not in rows]
    if bad:
        print(f"ids: no such row {bad[0]!r}", file=sys.stderr)
        return None
    return args, [rows[i] for i in args.ids]


def main(argv=None) -> int:
    named = rows_named(argv, __doc__.splitlines()[0])
    if named is None:
        return 2
    args, rows = named
    for row in rows:
        print(compare(row, args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
