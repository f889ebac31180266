"""How far a request's TPOT strays from the mean under Poisson arrivals, for the search's TPOT target held by the SLO's
attainment share of requests (the re-check's test: queueing.ATTAINMENT, 0.9), not by the mean.

A request's TPOT is its decode steps (each `slope` s longer per sequence it runs beside) and the prefill passes of the
prompts that arrive while it decodes (`per_prompt` s each), over its output - 1 tokens. Other requests arrive as a
Poisson process; one arriving t before or after it (|t| < T, T the time it holds its slot, offered load a = rate T)
runs beside it for T - |t| of its life (no other overlap with deterministic T), and one arriving during its life adds a
pass. Shot noise (Campbell's theorem): Var = rate * integral of the squared contribution over t, which is
a (2 s_1^2 / 3 + s_1 s_2 + s_2^2), s_1 = slope, s_2 = per_prompt / (output - 1); the quantile is taken normal.
Stated approximation: M/G/inf, the life taken fixed. The B slots bound the others running at an instant, not
those overlapping a life one after another, so no truncation at B is taken (truncating the count at B - 1 read the
simulator's p90 - mean spread closer on 3 of 10 rows, Session 72 H3), except at B = 1, where nothing runs beside it.
Seen in the simulator (DeepSeek-V3 FP8, hgx-h200 TP8, batch 32, 4,000 / 1,000 tokens, 0.807 req/s): p90 - mean
TPOT 2.70 ms; this form 2.74 ms (docs/accuracy.md, Session 72 H3)."""
from __future__ import annotations

import math
from statistics import NormalDist


def tpot_spread_s(offered: float, slope_s: float, per_prompt_s: float, output: int, share: float) -> float:
    """Seconds the `share`-quantile of a request's TPOT lies above its mean: `offered` Erlangs (rate x the time a
    request holds its slot), a decode step `slope_s` longer per sequence beside it, `per_prompt_s` of prefill stall
    per prompt arriving during its `output` tokens."""
    if offered <= 0.0 or output <= 1:
        return 0.0
    s1, s2 = slope_s, per_prompt_s / (output - 1)
    sd = math.sqrt(offered * (2.0 * s1 * s1 / 3.0 + s1 * s2 + s2 * s2))
    return max(NormalDist().inv_cdf(share), 0.0) * sd
