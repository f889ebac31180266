"""A serving row's prompt-sized TP all-reduces as whatif prices them in one prefill pass, beside the measured comm
table of the path the engine runs at that size (diagnostic only; nothing here feeds a prediction; docs/accuracy.md
"Session 74 K").

    PYTHONPATH=$PWD python3 benchmarks/prefill_allreduce_paths.py [--query "..."] [--root AICONFIGURATOR_DIR]

One prompt of the row's ISL is priced as `estimate` prices it under the serving mapping
(benchmarks/step_ops.prefill_pass); its all-reduces of at least 100 kB (the hidden state's: attention's and the
MLP/MoE's, the embedding's) are summed.
Each reads comm.parquet (../shared/reference/aiconfigurator, the row's GPU, log-log in bytes) for the kernel the engine
runs: an all-reduce whatif fuses with the residual + RMSNorm (vLLM's FlashInfer trtllm_allreduce_fusion, within the
caps of allreduce_rms_fusion.py) reads the TRTLLM rows, plus whatif's own epilogue HBM pass (its price less the
collective alone, so both sides carry the same epilogue); any other reads vLLM's communicator in a CUDA graph
(vLLM_custom_graph: custom one-/two-shot, symmetric memory, NCCL by the release's own size tables) and, as the
eager step's upper reading, vLLM_custom_eager. Printed: the row's measured - predicted TTFT and the sums (ms).
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
DEFAULT_QUERY = ("engine=='vllm' and system=='b200_sxm' and model.str.contains('MiniMax') and version=='0.19.0' "
                 "and concurrency==4 and scored==1 and tp>=2")
LINK = {"b200_sxm": "nvlink-5", "h100_sxm": "nvlink-4"}
MIN_BYTES = 1e5   # smaller all-reduces (MiniMax's [T, 2] fp32 q/k variance) are no prompt-sized message


def allreduce_rows(comm):
    """comm.parquet's all-reduce rows; NCCL's 16-bit ones only (its int8 rows carry `bytes` = 2 x message_size too)."""
    ar = comm[comm.op_name == "all_reduce"]
    return ar[(ar.kernel_source != "NCCL") | (ar.nccl_dtype == "half")]


def table_s(rows, gpu: str, source: str, gpus: int, nbytes: float) -> float:
    """Seconds of one all-reduce of `nbytes` on `gpus` GPUs from the `source` rows of `gpu`, log-log between the
    measured sizes (held flat outside them); nan where the table has no such rows."""
    t = rows[(rows.gpu == gpu) & (rows.kernel_source == source) & (rows.num_gpus == gpus)].sort_values("bytes")
    if t.empty:
        return float("nan")
    return 1e-3 * float(np.exp(np.interp(np.log(nbytes), np.log(t.bytes), np.log(t.latency_ms))))


def table_source(fused: bool, eager: bool = False) -> str:
    """The comm.parquet kernel_source that times the path: FlashInfer's fused kernel is TensorRT-LLM's."""
    if fused:
        return "TRTLLM"
    return "vLLM_custom_eager" if eager else "vLLM_custom_graph"


def collective_only_s(op, system: str) -> float:
    """whatif's price of the fused op's collective alone (the trtllm fit, its own thresholds), no epilogue."""
    from whatif.roofline.kernel_models import collectives as coll
    from whatif.specs.hardware import load_component
    link = load_component(LINK[system], "link")
    nccl, engine, _ = coll.collective_params(LINK[system], op.collective_kernel)
    n = int(op.shape.gpus)
    return coll.collective_time("all_reduce", float(op.shape.bytes), n, link.group_bandwidth(n),
                                link.latency.value, link.nvswitch, nccl, engine)


def pass_sums(op_times, rows, system: str) -> dict:
    """{'calls', 'mb', 'paths', 'whatif', 'graph', 'eager'} (ms) over a pass's prompt-sized all-reduces."""
    from whatif.specs.op_kinds import OpClass
    out = {"calls": 0, "mb": 0.0, "paths": set(), "whatif": 0.0, "graph": 0.0, "eager": 0.0}
    for t in op_times:
        s = t.op.shape
        if t.op.op_class != OpClass.COMM or s.collective != "all_reduce" or s.bytes < MIN_BYTES:
            continue
        fused = bool(t.op.collective_kernel)
        epilogue = t.time_s - collective_only_s(t.op, system) if fused and t.op.hbm_bytes else 0.0
        out["calls"] += t.op.count
        out["mb"] = s.bytes / 1e6
        out["paths"].add("fused" if fused else "unfused")
        out["whatif"] += t.total_s * 1e3
        for key, eager in (("graph", False), ("eager", True)):
            one = table_s(rows, system, table_source(fused, eager), int(s.gpus), float(s.bytes)) + epilogue
            out[key] += t.op.count * one * 1e3
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", default=DEFAULT_QUERY)
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    import pandas as pd
    from step_ops import find_row, prefill_pass
    if not (args.root / "comm.parquet").is_file():
        print(f"--root: {args.root} holds no comm.parquet (the shared aiconfigurator tables)")
        return 2
    rows = allreduce_rows(pd.read_parquet(args.root / "comm.parquet"))
    import serving_reference as sr
    committed = pd.read_csv(sr.OUT).query(args.query)
    print("model version gpu tp isl moe | meas-pred TTFT | pass | calls x MB path | AR ms: whatif, table graph, "
          "table eager | table - whatif (graph / eager)")
    seen = set()
    for _, r in committed.sort_values(["model", "version", "system", "tp", "isl"]).iterrows():
        key = (r.model, r.version, r.system, r.tp, r.isl, r.gemm_quant, r.moe_quant)
        if key in seen or r.tp < 2 or r.system not in LINK:
            continue
        seen.add(key)
        pp = prefill_pass(find_row(r.id))
        s = pass_sums(pp.op_times, rows, r.system)
        total = sum(t.total_s for t in pp.op_times) * 1e3
        print(f"{r.model.split('/')[-1][:16]} {r.version} {r.system[:4]} tp{r.tp} {r.isl} {r.moe_quant} | "
              f"{r.measured_ttft_ms - r.predicted_ttft_ms:+5.0f} | {total:6.1f} | {s['calls']} x {s['mb']:.1f} "
              f"{'/'.join(sorted(s['paths']))} | {s['whatif']:5.1f} {s['graph']:5.1f} {s['eager']:5.1f} | "
              f"{s['graph'] - s['whatif']:+5.1f} / {s['eager'] - s['whatif']:+5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
