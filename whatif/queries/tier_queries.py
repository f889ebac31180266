"""Two what-if questions about memory tiers, each one command:

- crossover: from which batch size does a scenario with offloading (e.g. one H100 streaming part of
  its weights from host memory) deliver more tokens per second per GPU than the same model held
  entirely in HBM on more GPUs?
- size-tier: how many devices of a memory tier (e.g. CXL expanders) does a scenario need to fit, and
  what does it decode at with that many (and with a few more, as the devices' bandwidth adds up)?
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..specs import units
from ..errors import WhatifError, positive_int
from ..roofline.estimate import Estimate
from ..scenario import Scenario

SWEEP_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
MAX_TIER_COUNT = 64        # devices size-tier will try
EXTRA_COUNTS_SHOWN = 4     # rows past the minimum count, to show bandwidth adding up


def _rate(tok_s: float) -> str:
    return f"{tok_s:,.1f}" if tok_s >= 10 else f"{tok_s:.3g}"


def _per_gpu(e: Estimate | None) -> float:
    return e.throughput_tok_s / e.parallel.gpus if e is not None else 0.0


def _fitting(s: Scenario) -> Estimate | None:
    e = s.run(with_max_batch=False)
    return e if e.memory.fits else None


# ---------------------------------------------------------------- crossover


@dataclass(frozen=True)
class CrossoverRow:
    batch: int
    offload: Estimate | None     # None: does not fit at this batch
    hbm: Estimate | None


@dataclass(frozen=True)
class Crossover:
    offload: Scenario
    hbm: Scenario
    rows: tuple[CrossoverRow, ...]

    @property
    def batch(self) -> int | None:
        """Smallest swept batch from which the offload scenario is ahead per GPU at every larger batch
        (a batch where only one side fits counts for that side)."""
        best = None
        for r in reversed(self.rows):
            if _per_gpu(r.offload) >= _per_gpu(r.hbm) and r.offload is not None:
                best = r.batch
            else:
                break
        return best


def run_crossover(offload: Scenario, versus_gpus: int, batches=SWEEP_BATCHES) -> Crossover:
    """`offload` as given against the same model, without any placement, tensor-parallel on
    `versus_gpus` GPUs of the same hardware."""
    positive_int(versus_gpus, "--versus-gpus")
    if not offload.placement() and not offload.techniques:
        raise WhatifError("whatif crossover: the scenario keeps everything in HBM; give --place (e.g. "
                          "weights=host:0.5) or an offloading --technique to compare against more GPUs")
    hbm = replace(offload, place=(), techniques=(), gpus=versus_gpus,
                  parallel=replace(offload.parallel, tp=1, pp=1))
    rows = []
    for b in batches:
        row = CrossoverRow(b, _fitting(replace(offload, workload=replace(offload.workload, batch=b))),
                           _fitting(replace(hbm, workload=replace(hbm.workload, batch=b))))
        if row.offload is None and row.hbm is None:
            break
        rows.append(row)
    return Crossover(offload, hbm, tuple(rows))


def _side(e: Estimate | None) -> dict | None:
    if e is None:
        return None
    return {"throughput_tok_s": e.throughput_tok_s, "throughput_per_gpu_tok_s": _per_gpu(e),
            "tpot_s": e.tpot_s, "ttft_s": e.ttft_s, "gpus": e.parallel.gpus, "hbm_bytes": e.memory.hbm_bytes,
            "usd_per_million_tokens": e.cost_per_mtok}


def crossover_dict(c: Crossover) -> dict:
    return {"offload": {"hardware": c.offload.hardware, "placement": c.offload.placement().label(),
                        "techniques": list(map(str, c.offload.techniques))},
            "versus": {"hardware": c.hbm.hardware, "gpus": c.hbm.gpus},
            "rows": [{"batch": r.batch, "offload": _side(r.offload), "all_in_hbm": _side(r.hbm)} for r in c.rows],
            "crossover_batch": c.batch}


def crossover_text(c: Crossover) -> str:
    first = next((r.offload or r.hbm for r in c.rows if r.offload or r.hbm), None)
    if first is None:
        raise WhatifError("whatif crossover: neither scenario fits at any swept batch")
    gpus = next((r.offload.parallel.gpus for r in c.rows if r.offload), 1)
    head = [f"{first.model.name}: prompt {c.offload.workload.prompt}, output {c.offload.workload.output} tokens",
            f"A: {c.offload.hardware} x{gpus} GPU, {c.offload.placement().label()}"
            + (f", techniques {'+'.join(map(str, c.offload.techniques))}" if c.offload.techniques else ""),
            f"B: {c.hbm.hardware} x{c.hbm.gpus} GPUs (tensor parallel), all in HBM",
            "throughput = generated tokens / end-to-end time of the batch; compared per GPU", ""]
    rows = []
    for r in c.rows:
        cells = [str(r.batch)]
        for e in (r.offload, r.hbm):
            cells += ["no fit", "-", "-"] if e is None else [
                _rate(e.throughput_tok_s), _rate(_per_gpu(e)), units.seconds(e.tpot_s)]
        cells.append("A" if _per_gpu(r.offload) >= _per_gpu(r.hbm) and r.offload else "B")
        rows.append(cells)
    table = units.table(["batch", "A tok/s", "A tok/s/GPU", "A TPOT", "B tok/s", "B tok/s/GPU", "B TPOT",
                         "ahead per GPU"], rows, right=set(range(0, 7)))
    if c.batch is None:
        verdict = "no crossover in the swept batches: B delivers more per GPU at the largest batch either fits"
    else:
        verdict = f"crossover: from batch {c.batch} on, A delivers at least as many tokens/s per GPU as B"
    best = []
    for name, side in (("A", "offload"), ("B", "hbm")):
        fits = [(r.batch, getattr(r, side)) for r in c.rows if getattr(r, side) is not None]
        if fits:
            b, e = max(fits, key=lambda be: _per_gpu(be[1]))
            best.append(f"{name} {_per_gpu(e):,.1f} tok/s/GPU at batch {b}")
        else:
            best.append(f"{name} fits at no swept batch")
    return "\n".join(head) + "\n" + table + "\n\n" + verdict + "\nbest per GPU: " + ", ".join(best)


# ---------------------------------------------------------------- size-tier


@dataclass(frozen=True)
class TierSizing:
    tier: str
    needed: int | None               # None: does not fit with MAX_TIER_COUNT devices
    rows: tuple[tuple[int, Estimate], ...]


def run_size_tier(base: Scenario, tier: str, max_count: int = MAX_TIER_COUNT) -> TierSizing:
    """Fewest devices of memory profile `tier` (added behind the GPU's host link) with which `base`
    fits; fitting is monotone in the count, so a binary search finds it."""
    if not base.placement() and not base.techniques:
        raise WhatifError("whatif size-tier: the scenario keeps everything in HBM, so no tier count changes "
                          "whether it fits; give --place (e.g. kv=cxl:1)")
    if ":" in tier:
        raise WhatifError(f"--tier {tier}: name a memory profile only; size-tier finds the count")

    def with_count(n: int) -> Scenario:
        return replace(base, add_tiers=tuple(base.add_tiers) + (f"{tier}:{n}",))

    def fits(n: int) -> bool:
        return _fitting(with_count(n)) is not None

    if not fits(max_count):
        return TierSizing(tier, None, ())
    lo, hi = 1, max_count
    while lo < hi:
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid + 1
    rows = tuple((n, with_count(n).run(with_max_batch=False))
                 for n in range(lo, min(max_count, lo + EXTRA_COUNTS_SHOWN) + 1))
    return TierSizing(tier, lo, rows)


def size_tier_dict(s: TierSizing) -> dict:
    return {"tier": s.tier, "devices_needed": s.needed,
            "rows": [{"devices": n, "tpot_s": e.tpot_s, "decode_tok_s": e.decode_throughput_tok_s,
                      "ttft_s": e.ttft_s, "tier_bytes": e.memory.tiers, "max_context_tokens": e.max_context}
                     for n, e in s.rows]}


def size_tier_text(s: TierSizing, max_count: int = MAX_TIER_COUNT) -> str:
    if s.needed is None:
        raise WhatifError(f"whatif size-tier: the scenario does not fit even with {max_count} x {s.tier}; "
                          f"something else overflows (run `whatif estimate` with --add-tier {s.tier}:{max_count} "
                          f"to see which tier)")
    e0 = s.rows[0][1]
    w = e0.workload
    head = [f"{e0.model.name} on {e0.system.name.split(' [')[0]}: batch {w.batch}, prompt {w.prompt}, output "
            f"{w.output} tokens; {e0.placement.label()}",
            f"needs {s.needed} x {s.tier} (added behind {e0.system.gpu.host_link.name})", ""]
    rows = []
    for n, e in s.rows:
        path = (e.tier_paths or {}).get(s.tier)
        rows.append([str(n), units.nbytes(e.memory.tiers.get(s.tier, 0.0)),
                     units.rate(path.bandwidth, "B/s") if path else "-", units.seconds(e.tpot_s),
                     _rate(e.decode_throughput_tok_s)])
    return "\n".join(head) + "\n" + units.table(
        ["devices", "bytes in tier per GPU", "tier bandwidth per GPU", "TPOT", "decode tok/s"], rows,
        right=set(range(0, 5)))
