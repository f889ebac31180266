"""Collectives (all-reduce, all-gather, reduce-scatter, all-to-all) over n GPUs: NCCL's protocols and
algorithms, and the serving engines' custom all-reduce, priced from a link's datasheet figures.

Every time is  latency terms + bytes each GPU moves (per direction) / (link bandwidth x efficiency),
minimised over what NCCL (or the engine) can pick:

  NCCL, protocol p in (LL, LL128, Simple), ring algorithm:
      t_p = base_p + steps(op, n) * step_p * link_latency + wire_bytes(op, S, n) / (B * eff_p * share(n))
  NVLS (NVLink SHARP: the NVSwitch reduces in the switch; all-reduce only, Simple protocol):
      t_nvls = nvls_base + 2 * step_Simple * link_latency + S / (B * nvls_eff)
  NCCL time = min over the protocols (and NVLS where the fabric has it).

  Engine all-reduce under CUDA graphs (peer buffers over NVLink / P2P), by the engine's size tables:
      one-shot: t_1 = oneshot_base + (n-1) * S / (B * oneshot_eff)   (each GPU reads every peer's S)
      two-shot: t_2 = twoshot_base + 2(n-1)/n * S / (B * twoshot_eff) (reduce-scatter + all-gather)
      symmetric-memory multicast (NVLS fabrics): t_s = symm_base + S / (B * symm_eff)
  custom kernel for S < custom_max (one-shot below oneshot_max) on NVSwitch fabrics or at most
  `pcie_max_gpus` GPUs without one; then the multicast kernel below symm_max; otherwise NCCL, whose
  bandwidth reaches `nccl_bw_factor` of nccl-tests'.

S is the nccl-tests message size in bytes (all-reduce: the buffer; all-gather: the gathered output;
reduce-scatter: the input; all-to-all: the whole send buffer). B and link_latency are the link's
per-direction datasheet bandwidth (B/s) and latency (s); every efficiency is in (0, 1], so no
prediction beats the datasheet. share(n) = (2/n)**contention on fabrics without NVSwitch (GPUs of a
PCIe server share host bridges), 1 on NVSwitch. Parameters are fitted per link generation
(whatif/validate/collective_fit.py); they are never measured times looked up.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...errors import WhatifError
from ..engines import DEFAULT_ENGINE
from . import network
from .elementwise import Arrays, evaluate

PROTOCOLS = ("LL", "LL128", "Simple")
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
_ALIASES = {"alltoall": "all_to_all", "allreduce": "all_reduce", "allgather": "all_gather",
            "reducescatter": "reduce_scatter"}


@dataclass(frozen=True)
class ProtocolParams:
    """One NCCL protocol: fixed cost (s), per-step latency (x the link's latency), bandwidth efficiency."""
    base_s: float
    step_lat: float
    bw_eff: float


@dataclass(frozen=True)
class NcclParams:
    """NCCL on one link generation. `nvls`: the generation's NVSwitch reduces in the switch (datasheet)."""
    protocols: dict[str, ProtocolParams]
    nvls_base_s: float
    nvls_bw_eff: float
    contention: float = 0.0
    nvls: bool = False
    provenance: str = ""


@dataclass(frozen=True)
class EngineParams:
    """A serving engine's own all-reduce kernels on one link generation. Fitted: each kernel's fixed
    cost (s) and bandwidth efficiency, and the engine's NCCL bandwidth relative to nccl-tests'.
    Engine data (its source code's dispatch tables, or fitted where `thresholds_source` says so):
    custom_max / oneshot_max / symm_max, bytes below which that kernel runs, each a number or a
    {gpus: bytes} table (the entry of the largest GPU count <= n; 0 above the table's largest)."""
    name: str
    oneshot_base_s: float
    oneshot_bw_eff: float
    twoshot_base_s: float
    twoshot_bw_eff: float
    custom_max: float | dict
    nccl_bw_factor: float = 1.0
    symm_base_s: float = 0.0
    symm_bw_eff: float = 1.0
    oneshot_max: float | dict | None = None     # None: the faster of one-shot and two-shot
    symm_max: float | dict | None = None        # None: no symmetric-memory (multicast) kernel
    pcie_max_gpus: int = 2
    thresholds_source: str = "fitted"
    provenance: str = ""


def canonical_collective(name: str) -> str:
    """The collective's canonical name ('alltoall' -> 'all_to_all'); one-line error if unknown."""
    key = _ALIASES.get(name, name)
    if key not in COLLECTIVES:
        raise WhatifError(f"collective '{name}' is not valid; valid: {', '.join(COLLECTIVES)}")
    return key


def ring_wire_bytes(op: str, nbytes, gpus):
    """Bytes each GPU sends (= receives) in a ring: all-reduce 2(n-1)/n S, the others (n-1)/n S."""
    factor = 2.0 if op == "all_reduce" else 1.0
    return factor * (gpus - 1) / gpus * nbytes


def ring_steps(op: str, gpus, xp=Arrays):
    """Latency-bound steps: ring all-reduce 2(n-1), all-gather / reduce-scatter n-1; all-to-all 1
    (every peer is sent to at once)."""
    if op == "all_to_all":
        return 1.0 + 0.0 * xp.asfloat(gpus)   # (ones shaped as gpus)
    return (2.0 if op == "all_reduce" else 1.0) * (xp.asfloat(gpus) - 1)


def fabric_share(gpus, nvswitch: bool, contention: float, xp=Arrays):
    """Fraction of the link each GPU keeps: 1 on an NVSwitch; (2/n)**contention where GPUs share
    host bridges (PCIe servers), so 2 GPUs see the whole link."""
    if nvswitch:
        return 1.0 + 0.0 * xp.asfloat(gpus)
    return (2.0 / xp.maximum(xp.asfloat(gpus), 2.0)) ** contention


def protocol_time(op: str, nbytes, gpus, bandwidth: float, latency: float, proto: ProtocolParams,
                  share=1.0, bw_factor: float = 1.0, xp=Arrays):
    """Seconds for one ring collective on one protocol:
    base + steps * step_lat * latency + wire_bytes / (bandwidth * bw_eff * share)."""
    eff = xp.minimum(proto.bw_eff * bw_factor, 1.0) * share
    return (proto.base_s + ring_steps(op, gpus, xp) * proto.step_lat * latency
            + ring_wire_bytes(op, nbytes, gpus) / (bandwidth * eff))


def nvls_time(nbytes, bandwidth: float, latency: float, params: NcclParams, bw_factor: float = 1.0, xp=Arrays):
    """Seconds for an NVLS all-reduce: each GPU sends and receives ~S once (the switch reduces):
    nvls_base + 2 * step_Simple * latency + S / (bandwidth * nvls_eff)."""
    eff = min(params.nvls_bw_eff * bw_factor, 1.0)
    return (params.nvls_base_s + 2.0 * params.protocols["Simple"].step_lat * latency
            + xp.asfloat(nbytes) / (bandwidth * eff))


def nccl_time(op: str, nbytes, gpus, bandwidth: float, latency: float, nvswitch: bool,
              params: NcclParams, bw_factor: float = 1.0, xp=Arrays):
    """Seconds NCCL takes: the cheapest protocol (and NVLS for all-reduce on an NVLS NVSwitch)."""
    op = canonical_collective(op)
    share = fabric_share(gpus, nvswitch, params.contention, xp)
    times = [protocol_time(op, nbytes, gpus, bandwidth, latency, params.protocols[p], share, bw_factor, xp)
             for p in PROTOCOLS]
    if op == "all_reduce" and nvswitch and params.nvls:
        times.append(nvls_time(nbytes, bandwidth, latency, params, bw_factor, xp)
                     + 0.0 * xp.asfloat(gpus))
    return xp.least(times)


def threshold_bytes(table, gpus, xp=Arrays):
    """Bytes from a threshold: a number, or a {gpus: bytes} table read at the largest key <= n
    (0 beyond the table: the engine does not run the kernel there); None -> 0."""
    n = xp.asfloat(gpus)
    zero = 0.0 * n
    if table is None:
        return zero
    if not isinstance(table, dict):
        return zero + float(table)
    keys = sorted(int(k) for k in table)
    out = zero
    for k in keys:
        out = xp.where(n >= k, float(table[k]), out)
    return xp.where(n > keys[-1], 0.0, out)


def oneshot_time(nbytes, gpus, bandwidth: float, engine: EngineParams, xp=Arrays):
    """One-shot: each GPU reads all n-1 peers' S bytes: oneshot_base + (n-1) S / (B oneshot_eff)."""
    n = xp.asfloat(gpus)
    return engine.oneshot_base_s + (n - 1) * xp.asfloat(nbytes) / (bandwidth * engine.oneshot_bw_eff)


def twoshot_time(nbytes, gpus, bandwidth: float, engine: EngineParams, xp=Arrays):
    """Two-shot (reduce-scatter + all-gather): twoshot_base + 2(n-1)/n S / (B twoshot_eff)."""
    n = xp.asfloat(gpus)
    wire = 2 * (n - 1) / n * xp.asfloat(nbytes)
    return engine.twoshot_base_s + wire / (bandwidth * engine.twoshot_bw_eff)


def symm_time(nbytes, bandwidth: float, engine: EngineParams, xp=Arrays):
    """Symmetric-memory multicast all-reduce (NVLS fabrics): symm_base + S / (B symm_eff)."""
    return engine.symm_base_s + xp.asfloat(nbytes) / (bandwidth * engine.symm_bw_eff)


def custom_allreduce_time(nbytes, gpus, bandwidth: float, engine: EngineParams, xp=Arrays):
    """The engine's custom kernel: one-shot below `oneshot_max`, two-shot above (or, with no table,
    the faster of the two)."""
    one = oneshot_time(nbytes, gpus, bandwidth, engine, xp)
    two = twoshot_time(nbytes, gpus, bandwidth, engine, xp)
    if engine.oneshot_max is None:
        return xp.minimum(one, two)
    return xp.where(xp.asfloat(nbytes) < threshold_bytes(engine.oneshot_max, gpus, xp), one, two)


def uses_custom_allreduce(nbytes, gpus, nvswitch: bool, engine: EngineParams, xp=Arrays):
    """Whether the engine runs its custom kernel: below `custom_max`, and on an NVSwitch or on at most
    `pcie_max_gpus` GPUs otherwise (engines refuse custom all-reduce across PCIe beyond 2)."""
    fabric_ok = xp.either(bool(nvswitch), xp.asfloat(gpus) <= engine.pcie_max_gpus)
    return xp.both(xp.asfloat(nbytes) < threshold_bytes(engine.custom_max, gpus, xp), fabric_ok)


def engine_allreduce_time(nbytes, gpus, bandwidth: float, latency: float, nvswitch: bool,
                          params: NcclParams, engine: EngineParams, xp=Arrays):
    """An engine's CUDA-graph all-reduce: its custom kernel below `custom_max`; else, on an NVLS
    fabric, its symmetric-memory kernel below `symm_max`; else NCCL at the engine's NCCL efficiency."""
    t = nccl_time("all_reduce", nbytes, gpus, bandwidth, latency, nvswitch, params, engine.nccl_bw_factor, xp)
    if nvswitch and params.nvls and engine.symm_max is not None:
        below = xp.asfloat(nbytes) < threshold_bytes(engine.symm_max, gpus, xp)
        t = xp.where(below, symm_time(nbytes, bandwidth, engine, xp), t)
    return xp.where(uses_custom_allreduce(nbytes, gpus, nvswitch, engine, xp),
                    custom_allreduce_time(nbytes, gpus, bandwidth, engine, xp), t)


def collective_time(op_name: str, nbytes, gpus, link_bandwidth: float, link_latency: float,
                    nvswitch: bool, params: NcclParams, engine_params: EngineParams | None = None,
                    graphed: bool = True):
    """Seconds for one collective of `nbytes` (nccl-tests message size) over `gpus` GPUs on a link of
    `link_bandwidth` B/s per direction and `link_latency` s. With `engine_params` and `graphed`, an
    all-reduce below the engine's threshold runs the engine's custom kernel, larger ones run NCCL at
    the engine's NCCL efficiency; without an engine, plain NCCL (nccl-tests). graphed=False prices
    NCCL only (the engine's kernels are fitted on CUDA-graph replays; eager host launch costs are
    the caller's). One GPU or no bytes: 0 s. Scalars in, float out (plain numbers on plain floats,
    elementwise.evaluate); arrays of nbytes / gpus broadcast."""
    op = canonical_collective(op_name)
    if link_bandwidth <= 0:
        raise WhatifError(f"link_bandwidth: {link_bandwidth} B/s is not valid; valid: > 0")
    args = (op, nbytes, gpus, link_bandwidth, link_latency, nvswitch, params, engine_params, graphed)
    t, = evaluate(_collective_time, args, (nbytes, gpus, link_bandwidth, link_latency))
    return float(t) if getattr(t, "ndim", 0) == 0 else t


def _collective_time(xp, op, nbytes, gpus, link_bandwidth, link_latency, nvswitch, params, engine_params, graphed):
    n = xp.asfloat(gpus)
    n2 = xp.maximum(n, 2.0)
    if engine_params is not None and graphed and op == "all_reduce":
        t = engine_allreduce_time(nbytes, n2, link_bandwidth, link_latency, nvswitch, params, engine_params, xp)
    else:
        bw_factor = engine_params.nccl_bw_factor if engine_params is not None else 1.0
        t = nccl_time(op, nbytes, n2, link_bandwidth, link_latency, nvswitch, params, bw_factor, xp)
    return (xp.where(xp.either(n <= 1, xp.asfloat(nbytes) <= 0), 0.0, t),)


# ---- fitted parameters (whatif/roofline/data/collective_fit.yaml, written by collective_fit.py) ----
FIT_FILE = Path(__file__).resolve().parents[1] / "data" / "collective_fit.yaml"


ASSUMED_FILE = FIT_FILE.parent / "collective_xgmi.yaml"   # the xGMI mesh: assumed, not fitted (no RCCL rows here)


@cache
def _fit_table() -> dict:
    from ...specs.profiles import read_yaml
    return {**read_yaml(FIT_FILE).get("links", {}), **read_yaml(ASSUMED_FILE).get("links", {})}


def nccl_params_from(block: dict, provenance: str) -> NcclParams:
    protos = {p: ProtocolParams(**{k: float(v) for k, v in block["nccl"][p].items()}) for p in PROTOCOLS}
    n = block["nccl"]
    nvls = bool(block.get("nvls", False))   # NVLS terms exist only where the switch reduces
    return NcclParams(protos, float(n.get("nvls_base_s", 0.0)), float(n.get("nvls_bw_eff", 1.0)),
                      float(n.get("contention", 0.0)), nvls, provenance)


def _threshold(value):
    if value is None or not isinstance(value, dict):
        return None if value is None else float(value)
    return {int(k): float(v) for k, v in value.items()}


def engine_params_from(name: str, block: dict, provenance: str) -> EngineParams:
    keys = ("oneshot_base_s", "oneshot_bw_eff", "twoshot_base_s", "twoshot_bw_eff")
    return EngineParams(name, *(float(block[k]) for k in keys), _threshold(block["custom_max_bytes"]),
                        float(block["nccl_bw_factor"]), float(block.get("symm_base_s", 0.0)),
                        float(block.get("symm_bw_eff", 1.0)), _threshold(block.get("oneshot_max_bytes")),
                        _threshold(block.get("symm_max_bytes")), int(block.get("pcie_max_gpus", 2)),
                        str(block.get("thresholds_source", "fitted")), provenance)


def nearest_generation(link: str, table: dict, described: tuple[str, float] | None = None) -> tuple[str, str]:
    """(fitted generation, why) for a link profile name: itself when fitted, else the fitted one of
    the same link type with the closest bandwidth (log scale), else the closest bandwidth overall.
    `described` = (type, bandwidth B/s) of a link that is no shipped profile (a user's own YAML)."""
    if link in table:
        return link, ""
    from ...specs.hardware import load_component
    if described is None:
        try:
            target = load_component(link, "link")
        except WhatifError:
            raise WhatifError(f"link '{link}' is not valid; valid: a link profile name, e.g. "
                              f"{', '.join(sorted(table))}") from None
        described = (target.type, target.bandwidth.value)
    link_type, bandwidth = described

    def distance(gen):
        other = load_component(gen, "link")
        return (other.type != link_type, abs(math.log(other.bandwidth.value / bandwidth)))
    best = min(sorted(table), key=distance)
    return best, f"; link '{link}' has no fit of its own: parameters of the nearest fitted generation '{best}'"


def collective_params(link: str, engine: str = DEFAULT_ENGINE,
                      described: tuple[str, float] | None = None) -> tuple[NcclParams, EngineParams, str]:
    """(NCCL parameters, engine custom all-reduce parameters, provenance) for a link profile name
    (e.g. 'nvlink-4'; `described`: (type, bandwidth) of a link that is no shipped profile); an
    unmeasured link gets its nearest fitted generation, an engine without a fit on that generation
    the default engine's, and the provenance says so."""
    if link_type_of(link, described) == "network":   # NICs: no fit, and not PCIe's (network.py)
        return network_collective_params(engine)
    table = _fit_table()
    gen, why = nearest_generation(link, table, described)
    block = table[gen]
    engines = block.get("engines", {})
    used = engine if engine in engines else DEFAULT_ENGINE
    if used != engine:
        why += f"; engine '{engine}' has no fit on {gen}: {used}'s"
    how = "fitted on" if block.get("provenance", "fitted") == "fitted" else "assumed for (data/collective_xgmi.yaml)"
    provenance = f"{how} {gen} ({block.get('fitted_on', {}).get('gpu', '?')}), engine {used}{why}"
    return (nccl_params_from(block, provenance), engine_params_from(used, engines[used], provenance),
            provenance)


def link_type_of(link: str, described: tuple[str, float] | None = None) -> str | None:
    """The type of a link profile name (or of `described`); None for a name that is no link profile."""
    if described is not None:
        return described[0]
    from ...specs.hardware import load_component
    try:
        return load_component(link, "link").type
    except WhatifError:
        return None


def network_collective_params(engine: str = DEFAULT_ENGINE) -> tuple[NcclParams, EngineParams, str]:
    """NCCL over a network link (NICs): the assumed terms of network.py for every protocol, no NVLS, no
    contention (a switched network gives each NIC its line rate), and no engine custom all-reduce."""
    proto = ProtocolParams(network.NET_BASE_S, network.NET_STEP_LAT, network.NET_BW_EFF)
    nccl = NcclParams({p: proto for p in PROTOCOLS}, 0.0, 1.0, 0.0, False, network.PROVENANCE)
    none = EngineParams(engine, 0.0, 1.0, 0.0, 1.0, custom_max=0.0, pcie_max_gpus=0,
                        thresholds_source="none over a network", provenance=network.PROVENANCE)
    return nccl, none, network.PROVENANCE
