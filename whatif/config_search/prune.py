"""`--prune`: skip pricing a batch whose configurations can be neither on the frontier nor among the best.

The search then runs in two waves. The first prices every replica setup at each chunk at its two ends, batch 1
(its memory plan, a request's own prefill) and the largest batch that fits, and at the middle one of the batches
that fit (which gives dominators at middling rates: 17% fewer batches priced on issue 42's space than the ends
alone). The configurations those make (both modes) that meet the SLOs are the dominators. The second prices the
other batches, smallest first, and skips batch B of a setup at a chunk when its optimistic twin is beaten:

- the twin of B is the configurations the setup would give at B if its steps at B took only as long as at the
  largest batch B' < B already priced for it (the same composition code, configs.py, on B's batch with B''s
  e2e and TPOT). A batch's steps are assumed no faster than a smaller batch's (step time non-decreasing in the
  batch at a fixed context, which tests/test_search_prune.py checks on every batch of its spaces), so every real
  configuration of B is no better than its twin on either axis: at a fixed batch, replica count and pools,
  tokens/s per user (1 / TPOT) and per GPU fall as the steps lengthen.
- the twin is beaten when, in each mode the space searches, at least K distinct dominators of that mode (K: the
  re-check's --simulate-top, at least 1; distinct as the re-check counts them) are strictly better on both axes
  than the best of the twin's configurations in that mode (its per-user rate, its highest per-GPU rate).

What this cannot drop: a frontier point (a strictly better configuration exists), the best configuration meeting
the SLOs (a dominator meets them with more tokens/s per GPU), nor any of the K best of a mode the re-check
simulates. What it does drop: the skipped batches' own rows (each counted as pruned), so the table of every
configuration (--csv, --parquet) and the counts of those meeting or missing the SLOs shrink. Only the per-GPU
objective prunes (`--objective tok_s` ranks by a deployment's total, which a per-GPU bound does not bound)."""
from __future__ import annotations

from dataclasses import replace

from .configs import OK, Config, aggregated, disaggregated, same_pool
from .evaluate import BatchPoint, ReplicaProfile, StepPricers, price_batch, resolve_at_chunk
from .space import ReplicaSetup, SearchSpace


def shape(c: Config) -> tuple:
    """What the re-check counts as one configuration (recheck.distinct): all but the replica counts."""
    return (c.mode, c.replica, c.prefill, c.batch, c.chunk)


class Dominators:
    """Per mode, the distinct shapes of the configurations meeting the SLOs: per-user and best per-GPU rate."""

    def __init__(self, configs: list[Config], need: int = 1):
        best: dict[tuple, tuple[float, float]] = {}
        for c in configs:
            if c.status == OK:
                u, g = best.get(shape(c), (c.tok_s_per_user, -1.0))
                best[shape(c)] = (max(u, c.tok_s_per_user), max(g, c.tok_s_per_gpu))
        self.need = max(1, need)
        self.modes: dict[str, list[tuple[float, float]]] = {}
        for key, ug in best.items():
            self.modes.setdefault(key[0], []).append(ug)

    def beat(self, mode: str, user: float, per_gpu: float) -> bool:
        """Whether `need` distinct shapes of `mode` are strictly faster per user and per GPU."""
        n = 0
        for u, g in self.modes.get(mode, ()):
            if u > user and g > per_gpu:
                n += 1
                if n >= self.need:
                    return True
        return False


def twin_beaten(space: SearchSpace, p: ReplicaProfile, last: BatchPoint, batch: int, prefills: list[ReplicaProfile],
                dominators: Dominators) -> bool:
    """Whether batch `batch` of profile `p` can be skipped: its twin (`last`'s step times at `batch`) is beaten in
    every mode searched (as a decode pool beside each of `prefills`, in the disaggregated mode)."""
    osl = space.output
    twin = replace(p, points=(BatchPoint(batch, last.ttft_s, last.tpot_s, last.e2e_s, batch * osl / last.e2e_s),))
    for mode in space.modes:
        configs = aggregated(space, twin) if mode == "aggregated" else \
            [c for pre in prefills for c in disaggregated(space, pre, twin)]
        if configs and not dominators.beat(mode, max(c.tok_s_per_user for c in configs),
                                           max(c.tok_s_per_gpu for c in configs)):
            return False
    return True


def complete_replica(space: SearchSpace, key: ReplicaSetup, ends: list[ReplicaProfile], prefills: list[ReplicaProfile],
                     dominators: Dominators) -> list[ReplicaProfile]:
    """`key`'s profiles (its chunks, from evaluate_replica(ends=True)) with their other batches priced, smallest
    first, or skipped when twin_beaten; `prefills`: every priced profile a disaggregated cluster could
    use as its prefill pool."""
    out = []
    pricers = StepPricers()
    for p in ends:
        fits = [b for b in sorted(set(space.batches)) if b <= p.max_batch]
        middle = [b for b in fits if b not in {pt.batch for pt in p.points}]
        if p.error or not middle:
            out.append(p)
            continue
        pools = [q for q in prefills if q.chunk == p.chunk and same_pool(q.key, key)]
        points, pruned, scenario = list(p.points), [], None
        for b in middle:
            last = max((pt for pt in points if pt.batch < b), key=lambda pt: pt.batch)
            if twin_beaten(space, p, last, b, pools, dominators):
                pruned.append(b)
                continue
            if scenario is None:    # (resolved again: the first wave ran in another task)
                scenario = resolve_at_chunk(space, key, p.chunk)
            sc, resolved, setup = scenario
            points.append(price_batch(resolved, setup, sc, b, pricers, None))
        points.sort(key=lambda pt: pt.batch)
        out.append(replace(p, points=tuple(points), pruned=tuple(pruned),
                           estimates=p.estimates + len(points) - len(p.points)))
    return out


def prunes(space: SearchSpace) -> bool:
    """Whether the space's objective allows pruning (the per-GPU one)."""
    return space.objective == "tok_s_per_gpu"
