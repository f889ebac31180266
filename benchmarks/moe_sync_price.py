"""What a host-device sync inside every MoE layer would add to an eager prefill pass: a diagnostic, nothing mapped.

    python benchmarks/moe_sync_price.py [--max-clients 8] [--isl 1024]

The light-load TTFT gap (docs/accuracy.md "Session 64 I") sits on eager prefill passes of many-layer MoE models.
One candidate: a sync in each MoE layer (a `.item()` / `.tolist()` of routing results, DeepEP normal mode's
host-read receive counts), after which the host waits for the GPU and only then launches the rest, so host and
GPU time add instead of overlapping. Read at source for the rows' releases (docs/accuracy.md "Session 65 G"),
none of the rows' MoE paths has one; this prices what one would cost under whatif's own eager launch queue
(forward_pass.launch_queue_time with `sync_before`): before the first routed-expert op of every MoE layer the
host waits for every kernel queued so far, then one more launch (the D2H copy's call on the stream). The pass is
priced twice for the first row of each deployment group (the light-load slice of light_load_floor.py, MoE
models, prefill steps outside CUDA graphs, one prompt length), and the difference is added to each row's
committed predicted TTFT: a reading of a light-load TTFT, where one request's prefill pass sits in it once.
Also shown: min(GPU, host) of the pass, the most any sync pattern can add (host and GPU fully serialized).
Nothing here feeds a prediction.
"""
from __future__ import annotations

import argparse
import statistics
from contextlib import contextmanager

import light_load_floor as llf
import serving_reference as sr
from step_ops import prefill_pass

from whatif.roofline import forward_pass
from whatif.roofline.ops import graph_role
from whatif.specs.op_kinds import OpRole

# The routed experts' first op: where a host read of the routing (counts a rank receives, tokens an expert) would
# block the launches that follow (DeepEP normal dispatch's num_recv_tokens_per_expert_list is read on the host
# before the expert GEMMs are sized).
EXPERT_ENTRY = frozenset({OpRole.MOE_DISPATCH, OpRole.EXPERT_UP})
GROUP = ("system", "engine", "model", "version", "gemm_quant", "tp", "ep", "isl")


def expert_entry(layer_ops):
    """The predicate true for the first routed-expert op of each layer group (ops of a group share their count;
    a dispatch comes before the gate-up in the pass's order, so it is the one taken where present)."""
    firsts: dict[int, int] = {}
    for op in layer_ops:
        if graph_role(op) in EXPERT_ENTRY:
            firsts.setdefault(op.count, id(op))
    ids = set(firsts.values())
    return lambda op: id(op) in ids


@contextmanager
def synced_queue():
    """forward_pass.launch_queue_time with a sync before each MoE layer's routed experts, one launch its round trip."""
    plain = forward_pass.launch_queue_time

    def with_sync(times, launch_s, gap_s, factors=None, gaps=None):
        entry = expert_entry([t.op for t in times])
        return plain(times, launch_s, gap_s, factors, gaps, sync_before=entry, sync_s=launch_s)

    forward_pass.launch_queue_time = with_sync
    try:
        yield
    finally:
        forward_pass.launch_queue_time = plain


def priced(ref: dict) -> dict:
    """The row's prefill pass (ms) without and with the syncs, its GPU and host time, and their difference."""
    plain = prefill_pass(ref)
    with synced_queue():
        synced = prefill_pass(ref)
    return {"pass_ms": plain.time_s * 1e3, "synced_ms": synced.time_s * 1e3, "gpu_ms": plain.gpu_s * 1e3,
            "host_ms": plain.launch_s * 1e3, "delta_ms": (synced.time_s - plain.time_s) * 1e3,
            "bound_ms": min(plain.gpu_s, plain.launch_s) * 1e3}


def slice_rows(max_clients: int, isl: int | None) -> list[dict]:
    """The light-load rows of MoE models whose prefill ran outside CUDA graphs (and of one prompt length)."""
    return llf.eager_rows(max_clients, isl, moe_only=True)


def price_groups(rows: list[dict]) -> list[dict]:
    """One record per deployment group: its rows, gap, pass parts and the rows' TTFT with the sync's delta added."""
    refs = {r["id"]: r for r in sr.load()}
    out = []
    for key, g in llf.by_group(rows, GROUP).items():
        p = priced(refs[g[0]["id"]])
        meas, pred = [r["meas"] for r in g], [r["pred"] for r in g]
        out.append(dict(zip(GROUP, key), rows=g, moe_layers=g[0]["moe_layers"], gap=statistics.median(
            m - q for m, q in zip(meas, pred)), after=[q + p["delta_ms"] for q in pred], **p))
    return out


def summary(groups: list[dict], keys: tuple[str, ...]) -> list[tuple]:
    """(key, rows, MAPE before %, MAPE after %, median gap ms, median delta ms) over the groups' rows by `keys`."""
    agg: dict[tuple, list] = {}
    for g in groups:
        a = agg.setdefault(tuple(g[k] for k in keys), [[], [], [], [], []])
        a[0] += [r["meas"] for r in g["rows"]]
        a[1] += [r["pred"] for r in g["rows"]]
        a[2] += g["after"]
        a[3] += [r["gap"] for r in g["rows"]]
        a[4] += [g["delta_ms"]] * len(g["rows"])
    return [(k, len(m), llf.mape(m, p), llf.mape(m, q), statistics.median(gp), statistics.median(d))
            for k, (m, p, q, gp, d) in sorted(agg.items())]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-clients", type=int, default=8, help="the slice's largest N (default 8)")
    ap.add_argument("--isl", type=int, default=1024, help="one prompt length (default 1024; 0: all)")
    args = ap.parse_args(argv)
    groups = price_groups(slice_rows(args.max_clients, args.isl or None))
    print("| GPU | engine | model | release | GEMMs | tp / ep | ISL | rows | gap ms | pass GPU / host ms "
          "| + sync ms (us a MoE layer) | min(GPU, host) ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for g in groups:
        print(f"| {g['system']} | {g['engine']} | {g['model'].split('/')[-1]} | {g['version'] or '-'} | "
              f"{g['gemm_quant']} | {g['tp']} / {g['ep']} | {g['isl']} | {len(g['rows'])} | {g['gap']:+.0f} | "
              f"{g['gpu_ms']:.1f} / {g['host_ms']:.1f} | {g['delta_ms']:+.1f} "
              f"({g['delta_ms'] / g['moe_layers'] * 1e3:.0f}) | {g['bound_ms']:.1f} |")
    for keys in (("system", "engine"), ("engine",)):
        print(f"\nTTFT MAPE by {' + '.join(keys)}, committed -> committed + the sync's pass delta:")
        print("| group | rows | MAPE | median gap ms | median + sync ms |")
        print("|---|---|---|---|---|")
        for k, n, before, after, gap, delta in summary(groups, keys):
            print(f"| {' / '.join(k)} | {n} | {before:.1f} -> {after:.1f}% | {gap:+.0f} | {delta:+.1f} |")


if __name__ == "__main__":
    main()
