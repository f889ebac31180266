"""The wait a request sees before it is served, at the rate a configuration claims: M/D/c for Poisson arrivals.

The search's steady state runs every server at full load, where a queue of Poisson arrivals grows without bound; the
re-check (recheck.py, simulator.capacity) serves Poisson arrivals and asks that the TTFT target hold for the SLO's
attainment share (SLOTargets.attainment, 0.9) of requests. So the search's rate is the highest at which the
attainment quantile of the wait, plus a request's own TTFT, meets the TTFT target.

Form (sourced): c servers, each request a deterministic service D, Poisson arrivals at rate lam, offered load
a = lam D, rho = a / c. The probability of waiting is Erlang C (M/M/c; Erlang B by its recursion
B_k = a B_{k-1} / (k + a B_{k-1})).
The wait is scaled by (ca^2 + cs^2) / 2 = 1/2 for Poisson arrivals and deterministic service (Allen-Cunneen's
approximation of GI/G/c; exact for the mean of M/D/1: Pollaczek-Khinchine, rho D / (2 (1 - rho))), and its tail taken
exponential (Kingman's heavy-traffic limit): P(W > t) = C exp(-2 t (c / D - lam)), so its q-quantile is
ln(C / (1 - q)) / (2 (c / D - lam)) when C > 1 - q, else 0. Pure functions of floats.

An aggregated replica's prefill is not c servers of one prompt each: as the simulator runs it (simulator/
scheduling/), each step's prefill takes the prompts waiting at its start, up to the token budget, a bulk-service queue
(M/D^b/1 a rank, b = budget // prompt). Stated approximation (bulk_ttft_quantile_s; tests/test_search_ttft_target.py
checks it against the simulator's Poisson runs):
- a prompt's pass holds itself and the prompts that arrive during the pass in progress, found busy with the share
  rho = rate s / k of time the passes run: k = 1 + rho rate s (pass_size), a pass of k taking s(k) between one
  prompt's prefill and a full pass's (the estimate's batch prefill, its share);
- before its pass it waits for the step in progress: a pass (share rho, residual uniform on [0, s]) or a decode
  step (residual uniform on [0, step]); and for the passes ahead: M/D/1 of service s / k a prompt (Kingman's tail,
  wait_quantile_s, which holds the residual of the pass in progress); the larger of the two q-quantiles;
- by the engine's policy: prefill first (decodes wait) the pass is the prefill alone; mixed steps (vLLM chunked
  prefill, TensorRT-LLM) carry the running decodes, so a pass is one decode step longer (configs.prefill_queue_ttft).
A request also waits for one of the B slots, each held e2e(B) (M/D/B above), added: it matters only near full load."""
from __future__ import annotations

import math
from functools import cache

# the share of requests the re-check's capacity search asks to meet the SLO (simulator/config.py SLO.attainment)
ATTAINMENT = 0.9
BISECTIONS = 24      # halvings of a load bracket: 6e-8 of the servers (no_wait_load)
RATE_TOL = 1e-4      # a rate found to this share of the highest one (0.01%: below the 3-4 digits shown)


def erlang_c(servers: int, load: float) -> float:
    """Probability an arrival waits at `servers` servers and offered `load` (Erlangs, < servers): Erlang C."""
    if load <= 0:
        return 0.0
    if load >= servers:
        return 1.0
    if servers == 1:
        return load       # M/M/1: rho
    b = 1.0
    for k in range(1, servers + 1):
        b = load * b / (k + load * b)
    rho = load / servers
    return b / (1.0 - rho * (1.0 - b))


@cache
def no_wait_load(servers: int, q: float = ATTAINMENT) -> float:
    """The offered load (Erlangs) up to which at most 1 - q of arrivals wait (Erlang C grows with the load), so the
    q-quantile wait is 0: bisected once per server count, it spares erlang_c's loop below it."""
    lo, hi = 0.0, float(servers)
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        if erlang_c(servers, mid) <= 1.0 - q:
            lo = mid
        else:
            hi = mid
    return lo


def wait_quantile_s(rate: float, service_s: float, servers: int, q: float = ATTAINMENT) -> float:
    """Seconds within which a share `q` of Poisson arrivals at `rate`/s start service at `servers` deterministic
    servers of `service_s` each (M/D/c, module docstring); inf at or above their capacity."""
    capacity = servers / service_s
    if rate >= capacity:
        return math.inf
    load = rate * service_s
    if load <= no_wait_load(servers, q):
        return 0.0
    waits = erlang_c(servers, load)
    if waits <= 1.0 - q:
        return 0.0
    return math.log(waits / (1.0 - q)) / (2.0 * (capacity - rate))


def max_rate_within(wait_s: float, service_s: float, servers: int, q: float = ATTAINMENT) -> float:
    """The highest Poisson rate (/s) at which `servers` deterministic servers of `service_s` keep the q-quantile wait
    within `wait_s`; 0 when `wait_s` < 0."""
    if service_s <= 0:
        return 0.0
    return max_rate_through(wait_s, ((1, service_s, servers),), servers / service_s, q)


def tandem_wait_s(rate: float, stages, q: float = ATTAINMENT) -> float:
    """The q-quantile waits summed over `stages` in series, each (replicas sharing the rate evenly, service_s,
    servers a replica): an upper bound on the quantile of the sum (a request waits at each stage in turn)."""
    return sum(wait_quantile_s(rate / n, service_s, servers, q) for n, service_s, servers in stages)


def max_rate_through(wait_s: float, stages, top: float, q: float = ATTAINMENT) -> float:
    """The highest Poisson rate (/s), at most `top`, at which the tandem_wait_s of `stages` stays within `wait_s`
    (the wait grows with the rate, so bisection, from the rate at which no stage's quantile waits: no_wait_load, to
    within RATE_TOL of `top`); 0 when `wait_s` < 0."""
    if wait_s < 0:
        return 0.0
    if tandem_wait_s(top, stages, q) <= wait_s:
        return top
    lo = min(top, min(n * no_wait_load(servers, q) / service_s for n, service_s, servers in stages))
    hi = top
    while hi - lo > RATE_TOL * top:
        mid = 0.5 * (lo + hi)
        if tandem_wait_s(mid, stages, q) <= wait_s:
            lo = mid
        else:
            hi = mid
    return lo


def pass_size(rate: float, lone_s: float, full_s: float, per_pass: int) -> tuple[float, float]:
    """(prompts, seconds) of a prompt's prefill pass at `rate` prompts/s (stated approximation of M/D^b/1): the
    prompt itself plus those that arrive during the pass in progress, which it finds busy with the share of time the
    passes run, rho = rate s / k: k = 1 + rho rate s, so k = (1 + sqrt(1 + 4 (rate s)^2)) / 2 (rho < 1 below the
    full pass), at most the `per_pass` a token budget holds; a pass of k takes s(k) = lone_s + (k - 1) (full_s -
    lone_s) / (per_pass - 1) (one prompt's prefill to a full pass's, linear: the weights are read once a pass).
    Fixed point by iteration from k = 1 (k grows with s)."""
    if per_pass <= 1:
        return 1.0, lone_s
    slope = (full_s - lone_s) / (per_pass - 1)
    k = 1.0
    for _ in range(64):
        x = rate * (lone_s + (k - 1) * slope)
        k, before = min(float(per_pass), 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * x * x))), k
        if k - before < 1e-9:
            break
    return k, lone_s + (k - 1) * slope


def residual_quantile_s(rho: float, pass_s: float, step_s: float, q: float = ATTAINMENT) -> float:
    """The q-quantile of the time left of the step in progress at a Poisson arrival: a pass (share rho, residual
    uniform on [0, pass_s]) or a decode step (residual uniform on [0, step_s]). The mixture's tail
    P(R > t) = rho (1 - t / pass_s)+ + (1 - rho) (1 - t / step_s)+ is piecewise linear: solved on each piece."""
    tail = 1.0 - q
    parts = [(w, d) for w, d in ((rho, pass_s), (1.0 - rho, step_s)) if w > 0 and d > 0]
    if not parts:
        return 0.0
    short = min(d for _, d in parts)
    t = (1.0 - tail) / sum(w / d for w, d in parts)      # both pieces falling, up to the shorter one's end
    if t <= short:
        return t
    w, d = max(parts, key=lambda wd: wd[1])              # past it only the longer one's residual remains
    return d * (1.0 - tail / w) if w > tail else short


def bulk_ttft_quantile_s(rate: float, lone_s: float, full_s: float, per_pass: int, step_s: float,
                         q: float = ATTAINMENT) -> float:
    """The q-quantile TTFT (s) of Poisson prompts at `rate`/s at one engine's prefill (a bulk-service queue,
    M/D^b/1, b = `per_pass`; module docstring): its own pass plus the larger of the waits for the step in progress
    and for the passes ahead; inf at or above the passes' capacity."""
    k, s = pass_size(rate, lone_s, full_s, per_pass)
    per_prompt = s / k
    rho = rate * per_prompt               # the share of time the engine runs prefill passes
    if rho >= 1.0:
        return math.inf
    residual = residual_quantile_s(rho, s, step_s, q)
    # the wait for the passes ahead, the one in progress included: M/D/1 per prompt (Kingman's exponential tail,
    # wait_quantile_s); the larger of the two quantiles (the M/D/1 wait holds the pass in progress's residual;
    # summing the two quantiles counted it twice: x1.1-1.4 of the simulator's p90 at 40-60% of full load)
    return s + max(residual, wait_quantile_s(rate, per_prompt, 1, q))


def max_rate_under(quantile, target_s: float, top: float) -> float:
    """The highest rate (/s), at most `top`, at which `quantile(rate)` (growing with the rate) stays within
    `target_s`: bisection to RATE_TOL of `top`; 0 when it misses at no load."""
    if quantile(0.0) > target_s:
        return 0.0
    if quantile(top) <= target_s:
        return top
    lo, hi = 0.0, top
    while hi - lo > RATE_TOL * top:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if quantile(mid) <= target_s else (lo, mid)
    return lo
