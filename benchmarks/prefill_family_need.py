"""How much each op family of a serving row's prefill pass would have to be under-priced to close its TTFT miss.

    python benchmarks/prefill_family_need.py ROW_ID [ROW_ID ...] [--twin TWIN_ID] [--root PATH]

For each row: the one-prompt pass op family by op family (prefill_family_tables.compare: whatif's ms and the B200
SGLang tables' ms at the same shape), the row's TTFT miss (measured - predicted, the committed
benchmarks/data/serving_reference.csv), and per family the factor x that family alone would need for the pass to
absorb the miss: (family ms + miss) / family ms. With --twin (a row of the same engine, GPU, precision, ISL and
clients that differs in one layout field, e.g. EP 1 against EP 8), the twin's miss is taken off first: the factor
the family would need for the part of the miss the layout adds. Then DeepEP's normal-mode dispatch + combine at
the pass's tokens a rank (TP attention scatters a prompt over the TP group; DP attention keeps it on its rank),
measured (modern/b200_sxm/sglang/comm__wideep_deepep_normal_perf.parquet, SGLang 0.5.12, 24 SMs) beside
whatif's fit (kernel_models/deepep.py), over the pass's MoE layers: what a DeepEP launch would add, were one run.
Fits nothing and feeds no prediction (docs/accuracy.md, "Session 69 L").
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from prefill_family_tables import compare, load_gemm_table   # noqa: E402
from prefill_vs_kernels import DEFAULT_ROOT   # noqa: E402

COMMITTED = ROOT / "benchmarks" / "data" / "serving_reference.csv"
DEEPEP_SMS = 24   # SGLang's default DeepEP normal-mode SM budget (the table's largest dispatch_sms)


def committed_miss_ms(row_id: str) -> float | None:
    """Measured - predicted TTFT (ms) of a row in the committed table, or None where it was not predicted."""
    import pandas as pd
    d = pd.read_csv(COMMITTED).set_index("id")
    if row_id not in d.index:
        return None
    r = d.loc[row_id]
    miss = float(r["measured_ttft_ms"]) - float(r["predicted_ttft_ms"])
    return None if miss != miss else miss


def need_factor(family_ms: float, miss_ms: float) -> float | None:
    """The factor one family's price would need for the pass to absorb `miss_ms` alone (None: nothing priced)."""
    return (family_ms + miss_ms) / family_ms if family_ms > 0 else None


def deepep_normal_ms(root: Path, tokens: int, hidden: int, topk: int, experts: int) -> tuple[float, float] | None:
    """DeepEP normal dispatch + combine (ms, one MoE layer) at `tokens` a rank: (measured, whatif's fit), or None
    off the table's grid (it holds 1 .. 131,072 tokens at hidden 2,048-7,168)."""
    import pandas as pd

    from whatif.roofline.kernel_models.deepep import deepep_combine_seconds, deepep_dispatch_seconds
    from whatif.specs.hardware import load_component
    d = pd.read_parquet(root / "modern" / "b200_sxm" / "sglang" / "comm__wideep_deepep_normal_perf.parquet")
    d = d[(d.hidden_size == hidden) & (d.num_topk == topk) & (d.num_experts == experts)
          & (d.dispatch_sms == DEEPEP_SMS) & (d.num_token == tokens)]
    if d.empty:
        return None
    measured = (d.dispatch_transmit_us.median() + d.combine_transmit_us.median()) / 1e3
    gpu, link = load_component("b200", "gpu"), load_component("nvlink-5", "link")
    args = (tokens, hidden, topk, experts, gpu, link.bandwidth.value)
    fit = (deepep_dispatch_seconds(*args, link=link.name) + deepep_combine_seconds(*args, link=link.name)) * 1e3
    return measured, fit


def tokens_a_rank(kw: dict, tokens: int) -> int:
    """A prompt's tokens on one EP rank before the dispatch: scattered over TP attention, whole under DP attention."""
    dp = int(kw.get("attention_dp") or kw.get("dp_attention") or 1)
    return tokens if dp > 1 else max(1, tokens // int(kw["tp"]))


def report(row: dict, c: dict, miss: float | None, twin_miss: float | None, root: Path) -> str:
    import serving_reference as sr
    fams = c["families"]
    lines = [f"{row['id']}: pass {c['pass_ms']:.1f} ms (GPU {c['gpu_ms']:.1f}); TTFT miss "
             + (f"{miss:+.0f} ms" if miss is not None else "n/a (not predicted)")
             + (f", less the twin's {twin_miss:+.0f} = {miss - twin_miss:+.0f} ms"
                if miss is not None and twin_miss is not None else "")]
    lines.append(f"  {'family':<17} {'whatif ms':>10} {'whatif/table':>13} {'need (miss)':>12} "
                 f"{'need (less twin)':>17}")
    fmt = lambda x: "-" if x is None else f"x{x:.1f}"   # noqa: E731
    for f, (w, lo, hi, _) in fams.items():
        ratio = f"x{w / hi:.2f}" + (f"-{w / lo:.2f}" if abs(hi - lo) >= 0.05 else "") if lo > 0 else "-"
        whole = need_factor(w, miss) if miss is not None else None
        part = need_factor(w, miss - twin_miss) if miss is not None and twin_miss is not None else None
        lines.append(f"  {f:<17} {w:>10.1f} {ratio:>13} {fmt(whole):>12} {fmt(part):>17}")
    total = sum(v[0] for v in fams.values())
    whole = need_factor(total, miss) if miss is not None else None
    part = need_factor(total, miss - twin_miss) if miss is not None and twin_miss is not None else None
    lines.append(f"  {'whole GPU pass':<17} {total:>10.1f} {'':>13} {fmt(whole):>12} {fmt(part):>17}")
    kw = sr.estimate_kwargs(row)
    moe_layers = fams["routed moe"][3].split(" x ")[0] if " x " in fams["routed moe"][3] else ""
    if moe_layers.isdigit() and int(kw.get("ep") or 1) > 1:   # an EP group: what DeepEP would add, were it run
        per_rank = tokens_a_rank(kw, c["tokens"])
        dd = deepep_normal_ms(root, per_rank, 7168, 8, 256)
        if dd:
            n = int(moe_layers)
            lines.append(f"  DeepEP normal at {per_rank:,} tokens a rank (not launched by this row): "
                         f"{dd[0] * n:.1f} ms measured / {dd[1] * n:.1f} whatif over {n} MoE layers "
                         f"(x{dd[1] / dd[0]:.2f})")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--twin", help="a row whose miss is taken off first (same deployment but one layout field)")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = ap.parse_args(argv)
    import serving_reference as sr
    rows = {r["id"]: r for r in sr.load()}
    bad = [i for i in [*args.ids, *([args.twin] if args.twin else [])] if i not in rows]
    if bad:
        print(f"ids: no such row {bad[0]!r}", file=sys.stderr)
        return 2
    gemm = load_gemm_table(args.root)
    twin_miss = committed_miss_ms(args.twin) if args.twin else None
    for i in args.ids:
        print(report(rows[i], compare(rows[i], args.root, gemm), committed_miss_ms(i), twin_miss, args.root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
