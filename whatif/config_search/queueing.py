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
ln(C / (1 - q)) / (2 (c / D - lam)) when C > 1 - q, else 0. Pure functions of floats."""
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
