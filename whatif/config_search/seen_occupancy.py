"""The number of sequences a request runs beside, on average over its life, in an aggregated replica of `slots` B
under Poisson arrivals (the search's point under a TTFT target): the size-biased occupancy E[N^2] / E[N].

A request's TPOT is the mean of the steps it decodes in, and a step's time follows the sequences running in it; a
request is there for the steps in proportion to their count, so its mean step is priced at the occupancy weighted by
itself, not at the time-average E[N] (rate x e2e, Little's law), which a Poisson-fed N swinging around it understates
(session 72 H2: DeepSeek-V3 FP8 8xH200 batch 16, E[N] 10.1 with N between 5 and 16; docs/accuracy.md), nor at the
full batch B. N is taken as the Erlang loss system's M/G/B/B: a Poisson(a) count truncated at B, a = rate x the
time a request holds its slot. Why that one: its occupancy is the truncated Poisson for any holding-time
distribution (Erlang's loss formula is insensitive to it), a replica runs at most B, and under a TTFT target the
search's rate leaves the wait for a slot all but nil (queueing.py's M/D/B term), so the few arrivals a loss system
would turn away are the few a delay system queues; M/G/inf (a + 1, untruncated) would put sequences above B.
Stated approximation: the occupancy seen by an arrival (PASTA) is held over its life; an attention-DP replica's
ranks are pooled (the search prices a batch over them all)."""
from __future__ import annotations

import math


def seen_occupancy(offered: float, slots: int) -> float:
    """E[N^2] / E[N] of N ~ Poisson(`offered`) truncated at `slots` (sequences; `offered` = rate x slot holding time,
    Erlangs): between 1 (a lone request, itself) and `slots`; a + 1 well below `slots`."""
    if slots < 1:
        raise ValueError(f"slots: {slots}; valid: at least 1")
    if offered <= 0.0:
        return 1.0
    logs = [n * math.log(offered) - math.lgamma(n + 1) for n in range(slots + 1)]
    top = max(logs)
    weights = [math.exp(x - top) for x in logs]      # relative to the largest term: no overflow at a ~ B ~ 1000
    mean = sum(n * w for n, w in enumerate(weights))
    square = sum(n * n * w for n, w in enumerate(weights))
    return square / mean
