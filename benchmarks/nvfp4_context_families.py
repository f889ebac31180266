"""TensorRT-LLM's logged eager NVFP4 DeepSeek context steps (TP4 EP4, B200) op family by op family: whatif's price,
the B200 kernel tables at the same shapes, and the fused-MoE fit at each table's own routing (diagnostic only;
nothing here feeds a prediction; docs/accuracy.md "Session 73 H").

    PYTHONPATH=$PWD python3 benchmarks/nvfp4_context_families.py [--root AICONFIGURATOR_DIR]

The steps are trtllm_iter_logs.STEPS' GPU-bound ones (1.3.0rc10, DeepSeek-R1-0528 NVFP4, 7,238 tokens and 3 x 992),
priced on that script's template row. Families and their tables (../shared/reference/aiconfigurator):
- MLA module (q/kv projections, attention, o_proj, cache write): TensorRT-LLM's whole-module context table
  (modern/b200_sxm/trtllm/mla__mla_context_module_perf, 1.3.0rc20, 32 heads = 128 / TP4, fp8 KV, nvfp4 GEMMs),
  the step's prompts as its batch, linear in isl between measured lengths;
- routed MoE (router + the TRTLLM-Gen experts the logs' `moe_config.backend: TRTLLM` runs): moe.parquet's
  sglang_flashinfer_trtllm_moe (the same kernels, SGLang 0.5.14's collector), EP 4, and TensorRT-LLM 1.3.0rc10's own
  wide-EP table (modern/b200_sxm/trtllm/moe__wideep_moe_perf: its CUTLASS NVFP4 MoE, another kernel) as a bound.
  Each table row is routed as its collector drew it, so whatif's fit is also priced at those routings (fit_at):
  the fit's error there is the fit's; the distance between the tables and whatif's serving price (uniform routing,
  `--expert-skew 0`) is the routing's;
- dense NVFP4 / bf16 GEMMs outside the module (shared expert, the first three layers' dense MLP, router):
  gemm.parquet's TensorRT-LLM torch_flow rows at the op's (n, k), linear in m (their fp4 includes the input's
  quantize kernel, which whatif takes as fused into the norm before it);
- all-reduce: comm.parquet's TensorRT-LLM all-reduce and NCCL at the hidden state's bytes (log-linear);
- the rest (norms, residual adds, embedding, head) at whatif's price.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DEFAULT_ROOT = ROOT.parent / "shared" / "reference" / "aiconfigurator"
HIDDEN, INTER, EXPERTS, TOPK = 7168, 2048, 256, 8   # DeepSeek-V3/R1's MoE shape (config.json)
GROUPED = (8, 4)   # SGLang 0.5.14 collector: DeepSeek grouped top-k (validate/moe_fit.COLLECTOR_GROUPS)
FAMILY = {"attention_mla": "mla module", "q_a_proj": "mla module", "q_b_proj": "mla module",
          "kv_a_proj": "mla module", "kv_b_proj": "mla module", "o_proj": "mla module",
          "kv_cache_write": "mla module", "router": "routed moe", "experts_gate_up": "routed moe",
          "experts_down": "routed moe", "shared_expert_gate_up": "dense gemms", "shared_expert_down": "dense gemms",
          "mlp_gate_up": "dense gemms", "mlp_down": "dense gemms", "attn_allreduce": "all-reduce",
          "mlp_allreduce": "all-reduce", "embedding_allreduce": "all-reduce"}
FAMILIES = ("mla module", "routed moe", "dense gemms", "all-reduce", "rest")
# (label, distribution, grouped top-k): the routings the MoE tables were drawn with, and whatif's serving one
ROUTINGS = (("uniform (serving)", "balanced", None), ("collector balanced, grouped", "balanced", GROUPED),
            ("collector power-law 1.01, grouped", "power_law_1.01", GROUPED),
            ("power-law 1.01, plain top-k", "power_law_1.01", None),
            ("power-law 1.01 + EPLB", "power_law_1.01_eplb", None))


def family(name: str) -> str:
    """The op family of a context-pass op by its graph name."""
    return FAMILY.get(name.removesuffix("_group_quant"), "rest")


def fit_at(tokens: int, ep: int, distribution: str, groups) -> tuple[float, float]:
    """(ms, routed rows on this rank / the uniform share) of the shipped TRTLLM-Gen NVFP4 fit (sglang/fp4's large-M
    block, the one whatif's trtllm-gen experts take) for one DeepSeek MoE layer at `tokens`, EP `ep`, routed as
    `distribution` (through DeepSeek's grouped top-k where `groups`): the serving form (split_moe_time)."""
    from whatif.roofline.kernel_models.moe import (finalize_seconds, moe_gemm_ideal_times, moe_params,
                                                   routing_stats, split_moe_time)
    from whatif.validate.corpus import corpus_gpu
    from whatif.validate.moe_fit import DTYPE_BYTES
    g = corpus_gpu("b200_sxm")
    peak, hbm, l2 = g.peak_flops("fp4"), g.hbm_bandwidth.value, g.l2_size.value
    w_bytes, a_bytes, _ = DTYPE_BYTES["nvfp4"]
    touched, _, assigned = routing_stats(tokens, TOPK, EXPERTS, ep, distribution, groups)
    gemms = moe_gemm_ideal_times(tokens, HIDDEN, INTER, TOPK, EXPERTS, 1, ep, distribution, peak, hbm,
                                 w_bytes, a_bytes, l2, groups)
    fin = finalize_seconds(assigned, HIDDEN, hbm, "sglang", "fp4")
    t = split_moe_time(gemms, moe_params("blackwell", "fp4", "sglang", "large"), 0.0, fin, touched)
    return float(t) * 1e3, assigned / (tokens * TOPK / ep)


def mla_table_ms(root: Path, heads: int, prompts: int, tokens: int, gemm: str = "nvfp4") -> float | None:
    """TensorRT-LLM's MLA context module (ms) at `prompts` x `tokens`, its projections in `gemm`: linear in isl, then
    in batch."""
    import pandas as pd
    from prefill_vs_kernels import interp
    d = pd.read_parquet(root / "modern" / "b200_sxm" / "trtllm" / "mla__mla_context_module_perf.parquet")
    d = d[(d.num_heads == heads) & (d.kv_cache_dtype == "fp8") & (d.gemm_type == gemm)]
    by_batch = [(float(b), interp(list(zip(s.isl.astype(float), s.latency.astype(float))), tokens))
                for b, s in d.groupby("batch_size")]
    return interp([(b, v) for b, v in by_batch if v is not None], prompts)


def wideep_table_ms(root: Path, tokens: int, ep: int, distribution: str) -> float | None:
    """TensorRT-LLM 1.3.0rc10's wide-EP CUTLASS NVFP4 MoE (ms) at `tokens`, DeepSeek's shape, 256 slots."""
    import pandas as pd
    from prefill_vs_kernels import interp
    d = pd.read_parquet(root / "modern" / "b200_sxm" / "trtllm" / "moe__wideep_moe_perf.parquet")
    d = d[(d.hidden_size == HIDDEN) & (d.inter_size == INTER) & (d.num_experts == EXPERTS) & (d.num_slots == EXPERTS)
          & (d.moe_ep_size == ep) & (d.distribution == distribution)]
    return interp(list(zip(d.num_tokens.astype(float), d.latency.astype(float))), tokens)


def gemm_table_us(root: Path, dtype: str, m: float, n: int, k: int) -> float | None:
    """gemm.parquet's TensorRT-LLM torch_flow B200 GEMM (us) at (n, k), linear in m; None off the grid."""
    import pandas as pd
    from prefill_vs_kernels import interp
    d = pd.read_parquet(root / "gemm.parquet", filters=[("gpu", "==", "b200_sxm"), ("framework", "==", "trtllm")])
    d = d[(d.gemm_dtype == {"fp4": "nvfp4", "bf16": "bfloat16"}.get(dtype, dtype)) & (d.n == n) & (d.k == k)]
    rows = d.groupby("m").latency_ms.median()
    v = interp(list(zip(rows.index.astype(float), rows.values)), m)
    return None if v is None else v * 1e3


def allreduce_table_ms(root: Path, nbytes: float) -> dict[str, float | None]:
    """TensorRT-LLM's own all-reduce and NCCL's, 4 B200s, at `nbytes` (ms)."""
    import pandas as pd
    from prefill_vs_kernels import interp
    d = pd.read_parquet(root / "comm.parquet")
    d = d[(d.gpu == "b200_sxm") & (d.op_name == "all_reduce") & (d.num_gpus == 4)]
    out = {}
    for label, sel in (("trtllm", d.implementation == "trtllm"), ("nccl", d.framework == "nccl")):
        s = d[sel].groupby("bytes").latency_ms.median()
        out[label] = interp(list(zip(s.index.astype(float), s.values)), nbytes, log=True)
    return out


# 1.3.0rc10's host cost a call: its host-bound lone 1k step, 58.4 ms over whatif's 1,214 calls (trtllm_iter_logs)
RC10_CALL_S = 48.1e-6


def step_families(step) -> dict:
    """whatif's eager pass of a logged step: {family: ms}, the pass's GPU ms, its op sums by name, and the pass
    through whatif's launch queue (kernel by kernel: a kernel starts when launched and its stream is free) at
    RC10_CALL_S a host call."""
    import eager_call_cost as ecc
    from step_ops import row_estimate, summed
    import serving_reference as sr
    from whatif.roofline import forward_pass
    row = {r["id"]: r for r in sr.load()}[step.template]
    queues: list = []
    with ecc.recorded_queues(queues):
        first = row_estimate(row, batch=step.prompts, prompt=step.prompt_tokens).prefill[0][0]
    times, _, gap_s, factors, gaps = queues[0]
    fam = summed(first.op_times, family)
    return {"families": {f: fam[f].total_s * 1e3 if f in fam else 0.0 for f in FAMILIES},
            "gpu_ms": first.gpu_s * 1e3, "ops": summed(first.op_times),
            "queued_ms": forward_pass.launch_queue_time(times, RC10_CALL_S, gap_s, factors, gaps) * 1e3}


def report(step, root: Path) -> str:
    tokens = step.prompts * step.prompt_tokens
    w = step_families(step)
    fam, ops = w["families"], w["ops"]
    n_moe, n_attn = ops["experts_gate_up"].count, ops["attention_mla"].count
    lines = [f"{step.label}: logged device {step.device_ms:.1f} ms, whatif GPU {w['gpu_ms']:.1f} ms "
             f"(x{step.device_ms / w['gpu_ms']:.2f}, {step.device_ms - w['gpu_ms']:+.1f} ms); through the launch "
             f"queue at rc10's {RC10_CALL_S * 1e6:.1f} us a call {w['queued_ms']:.1f} ms",
             f"  {'family':<12} {'whatif ms':>9}  tables (ms over the layers)"]
    mla = mla_table_ms(root, 32, step.prompts, step.prompt_tokens)
    lines.append(f"  {'mla module':<12} {fam['mla module']:>9.1f}  {n_attn} x {mla:.3f} = {n_attn * mla:.1f} "
                 "(TensorRT-LLM module table, every projection nvfp4)")
    # the checkpoint keeps q_a / q_b / kv_a / kv_b in bf16 (hf_quant_config exclude_modules) and o_proj in NVFP4: the
    # bf16-GEMM module table less o_proj's bf16 -> fp4 difference at the same shape
    o = ops["o_proj"].op.shape
    o_gain = gemm_table_us(root, "bf16", o.m, int(o.n), int(o.k)) - gemm_table_us(root, "fp4", o.m, int(o.n), int(o.k))
    mix = n_attn * (mla_table_ms(root, 32, step.prompts, step.prompt_tokens, "bfloat16") - o_gain / 1e3)
    lines.append(f"  {'':<12} {'':>9}  checkpoint's mix (bf16 q/kv, fp4 o_proj): bf16 table less o_proj's fp4 gain "
                 f"{mix:.1f}")
    moe_lo = n_moe * fit_at(tokens, 4, "balanced", None)[0]
    lines.append(f"  {'routed moe':<12} {fam['routed moe']:>9.1f}  fit at each routing, x{n_moe} layers:")
    for label, dist, groups in ROUTINGS:
        ms, load = fit_at(tokens, 4, dist, groups)
        lines.append(f"  {'':<12} {'':>9}    {label:<34} rank load x{load:.2f}  fit {n_moe * ms:6.1f}")
    import prefill_vs_kernels as pvk
    sgl = pvk.measured_moe_ms(root, tokens, 1, 4, "nvfp4")
    for dist, groups in (("balanced", GROUPED), ("power_law_1.01", GROUPED)):
        fit_ms = fit_at(tokens, 4, dist, groups)[0]
        lines.append(f"  {'':<12} {'':>9}    table TRTLLM-Gen {dist:<17} {n_moe * sgl[dist]:6.1f} (fit/table "
                     f"x{fit_ms / sgl[dist]:.2f})")
    for dist, groups in (("power_law_1.01", None), ("power_law_1.01_eplb", None)):
        t = wideep_table_ms(root, tokens, 4, dist)
        lines.append(f"  {'':<12} {'':>9}    table TRT-LLM CUTLASS {dist:<19} {n_moe * t:6.1f} (TRTLLM-Gen fit "
                     f"x{fit_at(tokens, 4, dist, groups)[0] / t:.2f})")
    dense, dense_ms = [], 0.0
    for name in ("shared_expert_gate_up", "shared_expert_down", "mlp_gate_up", "mlp_down", "router"):
        s = ops.get(name)
        if s is None:
            continue
        sh = s.op.shape
        t = gemm_table_us(root, str(s.op.dtype), sh.m, int(sh.n), int(sh.k))
        each = s.total_s / s.count * 1e6
        dense_ms += s.count * (each if t is None else t) / 1e3 if name != "router" else 0.0
        dense.append(f"{name} {each:.0f}/{'-' if t is None else f'{t:.0f}'} us")
    lines.append(f"  {'dense gemms':<12} {fam['dense gemms']:>9.1f}  whatif/table a call: " + ", ".join(dense))
    ar = allreduce_table_ms(root, tokens * HIDDEN * 2)
    n_ar = sum(ops[k].count for k in ("attn_allreduce", "mlp_allreduce", "embedding_allreduce") if k in ops)
    lines.append(f"  {'all-reduce':<12} {fam['all-reduce']:>9.1f}  {n_ar} x {tokens * HIDDEN * 2 / 1e6:.1f} MB: "
                 f"TensorRT-LLM {n_ar * ar['trtllm']:.1f}, NCCL {n_ar * ar['nccl']:.1f}")
    lines.append(f"  {'rest':<12} {fam['rest']:>9.1f}  whatif's price (norms, residual adds, embedding, head)")
    tabled = (n_attn * mla + moe_lo + dense_ms + n_ar * ar["trtllm"] + fam["rest"]
              + ops["router"].total_s * 1e3)
    lines.append(f"  tables' sum at uniform routing {tabled:.1f} ms (whatif {w['gpu_ms']:.1f}; logged x"
                 f"{step.device_ms / tabled:.2f} of it): MLA module table + MoE fit + dense-GEMM table + "
                 "TensorRT-LLM all-reduce table + router and the rest at whatif's price")
    need = (fam["routed moe"] + step.device_ms - w["gpu_ms"]) / fam["routed moe"]
    lines.append(f"  the MoE alone would need x{need:.2f} of whatif's ({moe_lo:.1f} ms at uniform routing by the fit)")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    if not (args.root / "moe.parquet").exists():
        print(f"--root: no moe.parquet under {args.root}; valid: the aiconfigurator reference folder", file=sys.stderr)
        return 2
    import trtllm_iter_logs as til
    seen = set()
    for step in til.STEPS:
        key = (step.prompts, step.prompt_tokens)
        if til.bound(step.host_ms, step.device_ms) == "GPU" and key not in seen:
            seen.add(key)
            print(report(step, args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
