"""The roofline chart: the GPU's compute ceilings per dtype, its bandwidth ceilings per memory level (HBM and
each tier it reaches: host DDR, Grace LPDDR5X over NVLink-C2C, CXL, NVMe), and every op of one prefill pass
and one decode step placed by arithmetic intensity (FLOP per HBM byte) and attained FLOP/s."""
from __future__ import annotations

import math

from ..specs import units
from ..roofline.estimate import Estimate, PassTime
from .page import COLOURS, Section, esc, layout, note

PHASE_COLOURS = {"prefill": "#1f77b4", "decode": "#ff7f0e"}
X_MIN, X_MAX = 0.01, 1e5       # FLOP/B range the chart never leaves
N_LINE = 60                    # points along each bandwidth ceiling (log-spaced)


def _passes(e: Estimate) -> list[tuple[str, PassTime]]:
    out = [("prefill", e.prefill[0][0])]
    if e.decode is not None:
        out.append(("decode" if e.decode_round is None else "decode (verify pass)", e.decode))
    return out


def _compute_ceilings(e: Estimate) -> list[tuple[str, float, str]]:
    """(label, FLOP/s, provenance) per distinct dense peak, dtypes with the same figure merged."""
    gpu = e.system.gpu
    merged: dict[float, list[str]] = {}
    prov: dict[float, str] = {}
    for dtype, q in gpu.peak.items():
        merged.setdefault(q.value, []).append(dtype)
        prov.setdefault(q.value, q.provenance)
    out = [("/".join(d) + f" peak {units.rate(v, 'FLOP/s')}", v, prov[v]) for v, d in merged.items()]
    for key, q in gpu.achievable.items():
        if key.startswith("matmul_"):
            out.append((f"{key.removeprefix('matmul_')} matmul, measured {units.rate(q.value, 'FLOP/s')}", q.value,
                        q.provenance))
    return sorted(out, key=lambda x: -x[1])


def _bandwidth_ceilings(e: Estimate) -> list[tuple[str, float, str]]:
    """(label, B/s, kind) for HBM (datasheet and measured) and every tier beyond it, as one GPU sees it."""
    gpu = e.system.gpu
    out = [(f"HBM {units.rate(gpu.hbm_bandwidth.value, 'B/s')} ({gpu.hbm_bandwidth.provenance})",
            gpu.hbm_bandwidth.value, "hbm")]
    measured = gpu.achievable.get("hbm_bandwidth")
    if measured is not None:
        out.append((f"HBM measured {units.rate(measured.value, 'B/s')}", measured.value, "measured"))
    for t in e.system.tiers:
        path = (e.tier_paths or {}).get(t.tier.name)
        if path is None:
            continue
        via = " -> ".join(link.name for link in t.path)
        out.append((f"{t.tier.name} x{t.count} via {via}: {units.rate(path.bandwidth, 'B/s')} h2d", path.bandwidth,
                    "tier"))
    return out


def placed_ops(e: Estimate) -> tuple[list[dict], list[str]]:
    """Points of the chart (one per distinct op per phase) and the names of ops that cannot be placed (no
    FLOPs, or no HBM bytes: transfers, collectives, lookups)."""
    points, skipped = [], []
    for phase, p in _passes(e):
        total = sum(t.total_s for t in p.op_times) or 1.0
        for t in p.op_times:
            op = t.op
            ai = op.intensity
            if op.flops <= 0 or not math.isfinite(ai) or t.time_s <= 0:
                skipped.append(f"{op.name} ({op.op_class}, {phase})")
                continue
            points.append({"phase": phase, "name": op.name, "op_class": op.op_class, "dtype": op.dtype,
                           "count": op.count, "ai": ai, "attained": t.attained_flops, "time_s": t.time_s,
                           "share": t.total_s / total, "flops": op.flops, "bytes": op.hbm_bytes, "bound": t.bound})
    return points, skipped


def _hover(p: dict) -> str:
    return (f"<b>{esc(p['name'])}</b> ({esc(p['op_class'])}, {esc(p['phase'])}, {esc(p['dtype'])})<br>"
            f"x{p['count']} per pass, {units.seconds(p['time_s'])} each, {p['share']:.1%} of the pass<br>"
            f"{units.flops(p['flops'])}, {units.nbytes(p['bytes'])} HBM<br>"
            f"intensity {p['ai']:.3g} FLOP/B, attained {units.rate(p['attained'], 'FLOP/s')}<br>"
            f"bound: {esc(p['bound'])}")


def roofline_figure(e: Estimate) -> dict:
    points, _ = placed_ops(e)
    compute = _compute_ceilings(e)
    bandwidth = _bandwidth_ceilings(e)
    top = max(v for _, v, _ in compute)
    lo_ai = min([p["ai"] for p in points] + [0.5])
    hi_ai = max([p["ai"] for p in points] + [top / bandwidth[0][1] * 4])
    x0, x1 = max(X_MIN, lo_ai / 3), min(X_MAX, hi_ai * 3)
    data = []
    for i, (label, bw, kind) in enumerate(bandwidth):
        xs = [x0 * (x1 / x0) ** (k / (N_LINE - 1)) for k in range(N_LINE)]
        xs = [x for x in xs if x * bw <= top * 1.0001] + [min(x1, top / bw)]
        dash = {"hbm": "solid", "measured": "dot", "tier": "dash"}[kind]
        data.append({"type": "scatter", "mode": "lines", "x": xs, "y": [x * bw for x in xs], "name": esc(label),
                     "line": {"color": "#444" if kind != "tier" else COLOURS[(i + 4) % len(COLOURS)], "dash": dash,
                              "width": 1.5},
                     "hovertemplate": esc(label) + "<br>%{x:.3g} FLOP/B -> %{y:.3s}FLOP/s<extra></extra>"})
    for i, (label, value, prov) in enumerate(compute):
        data.append({"type": "scatter", "mode": "lines", "x": [x0, x1], "y": [value, value],
                     "name": esc(label if prov in label else f"{label} ({prov})"),
                     "line": {"color": "#8c564b" if "measured" not in label else "#bcbd22",
                              "dash": "solid" if "measured" not in label else "dot", "width": 1.2 + (i == 0)},
                     "hovertemplate": esc(label) + "<extra></extra>"})
    for phase in dict.fromkeys(p["phase"] for p in points):
        mine = [p for p in points if p["phase"] == phase]
        data.append({"type": "scatter", "mode": "markers", "name": esc(f"ops: {phase}"),
                     "x": [p["ai"] for p in mine], "y": [p["attained"] for p in mine],
                     "text": [_hover(p) for p in mine], "hovertemplate": "%{text}<extra></extra>",
                     "marker": {"color": PHASE_COLOURS.get(phase.split(" ")[0], "#2ca02c"), "opacity": 0.85,
                                "size": [7 + 24 * math.sqrt(p["share"]) for p in mine],
                                "line": {"color": "#fff", "width": 1}}})
    y0 = math.log10(max(1e6, min([p["attained"] for p in points] + [top / 1e4]) / 3))
    y1 = math.log10(top * 2)
    decades = range(math.ceil(y0), math.floor(y1) + 1)
    lay = layout(f"Roofline: {e.model.name} on {e.system.gpu.name}", "arithmetic intensity (FLOP/B of HBM traffic)",
                 "attained performance (FLOP/s)",
                 xaxis={"type": "log", "range": [math.log10(x0), math.log10(x1)]},
                 yaxis={"type": "log", "range": [y0, y1], "tickvals": [10.0 ** k for k in decades],
                        "ticktext": [units.rate(10.0 ** k, "FLOP/s") for k in decades]})
    return {"data": data, "layout": lay}


def roofline_section(e: Estimate, title: str = "Roofline", section_id: str = "roofline") -> Section:
    points, skipped = placed_ops(e)
    s = Section(section_id, title)
    s.figure(roofline_figure(e), height=560)
    w = e.workload
    first = e.prefill[0][0]
    ctx = e.decode.batch.groups[0][1] if e.decode is not None else 0
    s.html(note(f"Each marker is one kernel of one prefill pass ({first.batch.tokens:,} tokens) or of one decode "
                f"step (batch {w.batch}, context {ctx:,} tokens), sized by its share of the pass time; hover for "
                "its FLOPs, bytes and bound. Solid diagonals are HBM, dashed ones the tiers beyond it as one GPU "
                "sees them (their bytes reach a kernel only through that path), dotted lines measured ceilings. "
                "L2 is not drawn: the profiles carry no L2 bandwidth, so L2 traffic is reported but not timed."))
    if skipped:
        names = ", ".join(dict.fromkeys(skipped))
        s.html(note(f"Not placed (no FLOPs or no HBM bytes; their time is in the breakdowns): {names}."))
    return s
