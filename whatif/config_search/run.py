"""`search`: enumerate the space's replica setups, price them (in process or on Ray), compose every configuration,
and rank them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..errors import WhatifError
from ..specs.checks import MAX_REQUESTS, integer
from .backends import evaluate
from .configs import compose
from .pareto import frontier, ranked
from .result import SearchResult, sampled_frontier, unpaired_note
from .space import SearchSpace, replica_setups


def is_moe(model: str) -> bool:
    from ..specs.models import load_model
    return load_model(model).moe is not None


def run_search(space: SearchSpace, backend: str = "process", address: str | None = None,
               progress: Callable[[int, int], None] | None = None, simulate_top: int = 0,
               sim_requests: int | None = None, jobs: int | None = None, prune: bool = False) -> SearchResult:
    """Search `space`; with `simulate_top` K > 0, re-check under the simulator the K best of each mode and the
    frontier rows the text shows, and rerank by goodput (recheck.py). `jobs`: worker processes of the process
    backend (default: this process's CPUs; backends.py) and of the re-check (recheck.py; default the same). `prune`:
    skip pricing the batches that can be neither on the frontier nor among the best (prune.py)."""
    if simulate_top:     # checked before the search, not after it
        integer(simulate_top, "--simulate-top", high=1000, what="configurations")
        if sim_requests is not None:
            integer(sim_requests, "--sim-requests", high=MAX_REQUESTS, what="requests")
    moe = is_moe(space.model)
    if not moe and any(r > 1 for r in space.attention_dps or ()):
        raise WhatifError(f"--dp-attention: {space.model} has no experts; attention DP is for MoE models "
                          f"(valid here: 1, or leave it out)")
    keys = replica_setups(space, moe)
    if not keys and moe and space.eps and replica_setups(replace(space, eps=None), moe):
        tps = ", ".join(map(str, space.tps or ())) or "each TP size tried"
        raise WhatifError(f"--ep: {','.join(map(str, space.eps))}: no TP size tried ({tps}) splits its experts that "
                          f"way (ep x moe_tp = tp; a TP group across nodes runs ep = tp); valid: divisors of --tp")
    if space.attention_dps and not keys:
        raise WhatifError(f"--dp-attention: {','.join(map(str, space.attention_dps))}: no TP size tried splits into "
                          f"that many ranks (each rank's attention TP inside a node); valid: divisors of --tp")
    profiles = evaluate(space, keys, backend, address, progress, jobs, max(1, simulate_top) if prune else 0)
    configs = compose(space, profiles)
    good = ranked(configs, space.objective)
    result = SearchResult(space, configs, frontier(configs), good, replica_setups=len(keys),
                          estimates=sum(p.estimates for p in profiles), pruned=sum(len(p.pruned) for p in profiles),
                          unpaired=unpaired_note(space, profiles, configs))
    if simulate_top:
        from .recheck import recheck
        result.rechecked = recheck(space, good, simulate_top, sim_requests, sampled_frontier(result.frontier),
                                    jobs)
    return result
