"""Expert load across EP ranks: how many of the group's token-expert assignments the busiest rank gets.

A MoE layer waits for its busiest EP rank. Routing skew is a Zipf law over the experts' popularity,
p_i ~ i^-s (s = --expert-skew; 0: uniform, the default, assumed). Without a balancer the experts sit on
the ranks in an order unrelated to their popularity: the busiest rank's load is the mean over a fixed
set of random placements (seeded, so the answer is deterministic). With EPLB's redundant experts
(--redundant-experts R: SGLang --ep-num-redundant-experts, TensorRT-LLM's extra expert slots) the
balancer of DeepSeek's EPLB (github.com/deepseek-ai/EPLB, the global policy) gives the R extra slots
one by one to the expert with the most load per replica, then packs the E + R replicas on the ranks,
heaviest first onto the least-loaded rank with a free slot. Returns busiest / mean (>= 1).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

PLACEMENTS = 64    # random static placements averaged (no balancer)


def popularity(num_experts: int, skew: float) -> np.ndarray:
    """Each expert's share of the assignments: Zipf with exponent `skew` (0: all equal)."""
    p = np.arange(1, num_experts + 1, dtype=float) ** -float(skew)
    return p / p.sum()


@lru_cache(maxsize=1024)
def busiest_rank_factor(num_experts: int, ep: int, skew: float, redundant: int = 0) -> float:
    """The busiest of `ep` ranks' assignments over the mean rank's, for `num_experts` (+ `redundant`) experts."""
    if ep <= 1 or (skew == 0 and redundant == 0):
        return 1.0
    p = popularity(num_experts, skew)
    slots = (num_experts + redundant) // ep
    if redundant == 0:
        rng = np.random.default_rng(0)
        loads = [rng.permutation(p).reshape(ep, slots).sum(axis=1).max() for _ in range(PLACEMENTS)]
        return float(np.mean(loads) * ep)
    return float(_eplb_busiest(p, ep, redundant) * ep)


def _eplb_pack(p: np.ndarray, ep: int, redundant: int) -> tuple[np.ndarray, list]:
    """(each rank's load, each rank's slot loads) after EPLB's replication and balanced packing (module docstring)."""
    replicas = np.ones(len(p), dtype=int)
    for _ in range(redundant):
        replicas[np.argmax(p / replicas)] += 1
    pieces = np.repeat(p / replicas, replicas)
    slots = len(pieces) // ep
    load, used = np.zeros(ep), np.zeros(ep, dtype=int)
    held = [[] for _ in range(ep)]
    for w in np.sort(pieces)[::-1]:
        free = np.flatnonzero(used < slots)
        rank = free[np.argmin(load[free])]
        load[rank] += w
        used[rank] += 1
        held[rank].append(w)
    return load, held


def eplb_busiest_slots(p: np.ndarray, ep: int, redundant: int) -> np.ndarray:
    """The loads of the busiest rank's slots after EPLB's replication and balanced packing."""
    load, held = _eplb_pack(p, ep, redundant)
    return np.array(held[int(np.argmax(load))])


def _eplb_busiest(p: np.ndarray, ep: int, redundant: int) -> float:
    """The busiest rank's load after EPLB's replication and balanced packing (see the module docstring)."""
    return float(_eplb_pack(p, ep, redundant)[0].max())
