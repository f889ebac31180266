"""How many experts the waited-for EP rank of a serving row's decode step touches, as its measured TPOT implies:
measured TPOT less whatif's step without its routed-MoE ops, per MoE layer, read against aiconfigurator's measured
fused-MoE layer at the collector's balanced routing (rank 0 touches exactly min(T k, E) / ep experts, one row each)
and set beside uniform routing's mean and busiest rank (roofline/moe.py). A diagnostic: nothing here feeds a
prediction (docs/accuracy.md, "The busiest EP rank against the serving rows").

    python benchmarks/moe_step_implied.py "PANDAS QUERY" --gpu h100_sxm --framework trtllm --dtype fp8_block \
        [--kernel SUBSTRING] [--max-clients 32]

The query runs on benchmarks/data/serving_reference.csv (e.g. "engine=='trtllm' and model=='Qwen/Qwen3-235B-A22B-FP8'
and ep>2"); rows whose decode batch is above --max-clients are skipped (their steps carry prefill chunks more often).
The implied time carries whatif's errors on the rest of the step (attention, GEMMs, CPU time) and the prefill steps
inside the measured TPOT, so read it by band, not row by row.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from moe_serving_path import CORPUS, corpus_slice, of_shape  # noqa: E402 (benchmarks/moe_serving_path.py)

SCORED = ROOT / "benchmarks" / "data" / "serving_reference.csv"   # the committed predictions: ids, layouts, measured
ROUTED = ("router_topk", "experts_gate_up_group_quant", "experts_gate_up", "experts_act", "experts_down_group_quant",
          "experts_down", "experts_up")   # the fused MoE's kernels (the router GEMM and shared experts stay outside)


def balanced_curve(table, moe, ep: int):
    """(touched, measured us) of the table's balanced rows at this EP, moe_tp 1, fewest-first: the time of a rank
    that touches a known number of experts (through the collector's grouped top-k where it routed one)."""
    from whatif.roofline.kernel_models.moe import routing_stats
    from whatif.validate.moe_fit import collector_groups
    s = of_shape(table, moe["hidden"], moe["inter"], moe["experts"], moe["k"])
    s = s[(s.moe_ep_size == ep) & (s.distribution == "balanced") & (s.num_tokens * moe["k"] <= moe["experts"])]
    if s.empty:
        return [], []
    g = s.groupby("num_tokens").latency_ms.mean().sort_index()
    groups = collector_groups(s.framework.iloc[0], s.version.iloc[0], moe["hidden"], moe["experts"], moe["k"])
    touched = [routing_stats(int(t), moe["k"], moe["experts"], ep, "balanced", groups)[0] for t in g.index]
    return touched, list(g.values * 1e3)


def implied_rows(query: str, gpu: str, framework: str, dtype: str, kernel: str, max_clients: int):
    import numpy as np
    import pandas as pd
    import serving_reference as sr
    from decode_step_ops import decode_step
    from whatif.roofline.moe import busiest_rank_touched, experts_touched
    from whatif.specs.models import load_model
    table = pd.read_parquet(CORPUS)
    table = corpus_slice(table, gpu, framework, dtype, kernel)
    rows = {r["id"]: r for r in sr.load()}
    scored = pd.read_csv(SCORED).query(query, engine="python")
    out = []
    for _, x in scored[scored.scored == 1].iterrows():
        clients, ep = int(x.concurrency), int(x.ep)
        if clients > max_clients:
            continue
        row = rows[x.id]
        spec = load_model(sr.estimate_kwargs(row)["model"])
        m = spec.moe
        moe = dict(hidden=spec.hidden_size, inter=m.expert_intermediate_size, experts=m.num_experts,
                   k=m.experts_per_token)
        step = decode_step(row, clients, int(x.isl) + int(x.osl) // 2)
        layers = sum(t.op.count for t in step.op_times if t.op.name in ("experts_down",))
        routed = sum(t.total_s for t in step.op_times if t.op.name in ROUTED)
        implied = (x.measured_tpot_ms * 1e-3 - (step.time_s - routed)) / layers
        touched, us = balanced_curve(table, moe, ep)
        local = m.num_experts / ep
        out.append(dict(ep=ep, clients=clients, whatif_us=routed / layers * 1e6, implied_us=implied * 1e6,
                        implied_touched=float(np.interp(implied * 1e6, us, touched)) if us else float("nan"),
                        uniform_mean=experts_touched(local, m.experts_per_token, clients, m.num_experts),
                        uniform_busiest=busiest_rank_touched(local, m.experts_per_token, clients, m.num_experts, ep)))
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("query")
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--framework", required=True)
    ap.add_argument("--dtype", required=True, help="the table's moe_dtype (fp8_block, nvfp4, ...)")
    ap.add_argument("--kernel", default="", help="a substring of the table's kernel_source")
    ap.add_argument("--max-clients", type=int, default=32)
    args = ap.parse_args(argv)
    f = implied_rows(args.query, args.gpu, args.framework, args.dtype, args.kernel, args.max_clients)
    if f.empty:
        print("no rows", file=sys.stderr)
        return 2
    print(f.groupby(["ep", "clients"]).median().round(1).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
