"""One collective's seconds over a link by the fitted collective models (kernel_models/collectives.py): NCCL's
protocols, NVLS on an NVSwitch fabric, or the engine's custom all-reduce under CUDA graphs (data/collective_fit.yaml,
per link generation). Imported when an op is priced, not at start: the fits load numpy."""
from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from .kernel_models import collectives as coll

CACHE_SIZE = 1 << 16


def collective_seconds(collective: str, nbytes: float, gpus: int, link, engine: str, cuda_graphs: bool = True,
                       custom_max: float | None = None):
    """Seconds of one collective over `link`: NCCL's best protocol (NVLS on an NVSwitch fabric), or the
    engine's custom all-reduce under CUDA graphs; a send/recv is a one-way copy at NCCL's cheapest protocol.
    `custom_max` (bytes; an engine spec's custom_allreduce_max_bytes) caps the sizes the custom kernel takes:
    0 leaves every all-reduce to NCCL (an engine version built without a custom all-reduce)."""
    return _collective_terms(collective, float(nbytes), int(gpus), link.name, link.type, link.group_bandwidth(gpus),
                             link.latency.value, link.nvswitch, engine, cuda_graphs,
                             None if custom_max is None else float(custom_max))


def capped_threshold(threshold, cap: float):
    """A fitted custom-kernel threshold (bytes, or a {gpus: bytes} table) no larger than `cap` bytes."""
    if isinstance(threshold, dict):
        return {k: min(v, cap) for k, v in threshold.items()}
    return min(float(threshold or 0.0), cap)


@lru_cache(maxsize=CACHE_SIZE)
def _collective_terms(collective, nbytes, gpus, link_name, link_type, bw, lat, nvswitch, engine, cuda_graphs,
                      custom_max=None) -> float:
    # a link the fits do not know by name (a user's own YAML) gets the nearest fitted generation by type and speed
    nccl, engine_params, _ = coll.collective_params(link_name, engine, described=(link_type, bw))
    if custom_max is not None:
        engine_params = replace(engine_params, custom_max=capped_threshold(engine_params.custom_max, custom_max))
    if collective == "send_recv":   # a one-way copy: NCCL picks the cheapest protocol for its size, as for collectives
        return min(p.base_s + p.step_lat * lat + nbytes / (bw * p.bw_eff) for p in nccl.protocols.values())
    return coll.collective_time(collective, nbytes, gpus, bw, lat, nvswitch, nccl, engine_params, graphed=cuda_graphs)
