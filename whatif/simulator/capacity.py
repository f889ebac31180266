"""Capacity search: the highest arrival rate whose simulation meets the SLO at the required attainment.

The search keeps a bracket (highest passing rate, lowest failing rate): it doubles from a guess until a run
fails, then bisects. Attainment of a finite seeded workload is not strictly monotone in rate (a different rate
draws different bursts), so a pass above a fail can exist; the bracket only ever narrows, every probe lies inside
it, and the answer is the highest passing rate below the lowest failing one seen - conservative for the probes.
A run that meets the SLO fails when its queue grows throughout (overload.py) or when its arrivals end before the
rate's steady state (run_length.py): a short run ends before its growing queue or batch misses the SLO, so it
measures a burst absorbed, not a rate sustained."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from ..specs import units
from ..errors import WhatifError, positive_int
from . import run_length
from .config import SLO
from .metrics import SimulationResult

FIRST_GUESS_RPS = 1.0      # where the doubling starts when no bracket is given (assumed: a typical small deployment)
MAX_RATE_RPS = 1e6         # an SLO still met here is vacuous (assumed: no replica set serves a million req/s)
MAX_HALVINGS = 10          # from a failing first guess, go down at most 2^10 = 1024x before giving up (assumed)


@dataclass(frozen=True)
class Probe:
    """One simulation of the search."""

    rate_rps: float
    attainment: float
    goodput_rps: float | None
    ttft_p90_s: float | None
    tpot_p90_s: float | None
    passed: bool                # met the SLO, not overloaded and long enough
    overloaded: bool = False    # met the SLO, but its queue grew throughout (overload.py): failed, a burst absorbed
    short: bool = False         # met the SLO, but its arrivals ended before the steady state (run_length.py): failed


@dataclass
class CapacityResult:
    rate_rps: float                        # highest passing rate found (0 when none passed)
    probes: list[Probe] = field(default_factory=list)   # in the order they ran
    slo: SLO = SLO()
    note: str = ""

    def to_dict(self) -> dict:
        return {"rate_rps": self.rate_rps, "note": self.note,
                "slo": {"ttft_s": self.slo.ttft_s, "tpot_s": self.slo.tpot_s, "attainment": self.slo.attainment},
                "probes": [asdict(p) for p in self.probes]}

    def text(self) -> str:
        rows = [[str(i + 1), units.rate(p.rate_rps, "req/s", 4), f"{p.attainment:.1%}",
                 "-" if p.goodput_rps is None else units.rate(p.goodput_rps, "req/s"),
                 _seconds(p.ttft_p90_s), _seconds(p.tpot_p90_s), verdict(p)]
                for i, p in enumerate(self.probes)]
        table = units.table(["run", "rate", "attainment", "goodput", "p90 TTFT", "p90 TPOT", "SLO"], rows,
                            right={0, 1, 2, 3, 4, 5})
        return "\n".join([f"capacity: {units.rate(self.rate_rps, 'req/s', 4)} under {slo_label(self.slo)}",
                          *([f"note: {self.note}"] if self.note else []), table])


def verdict(p: Probe) -> str:
    """A probe's SLO column: pass, fail, overloaded (met the SLO on a queue that grew throughout) or too short (met
    it before the rate's steady state)."""
    return "pass" if p.passed else "overloaded" if p.overloaded else "too short" if p.short else "fail"


def _seconds(x: float | None) -> str:
    return "-" if x is None else units.seconds(x)


def slo_label(slo: SLO) -> str:
    parts = [f"{name} <= {units.seconds(v)}" for name, v in (("TTFT", slo.ttft_s), ("TPOT", slo.tpot_s))
             if v is not None]
    return " and ".join(parts) + f" for {slo.attainment:.0%} of requests"


def probe(run: Callable[[float], SimulationResult], rate: float, slo: SLO) -> Probe:
    """Simulate at `rate` and judge the run by `slo` (not by whatever SLO the run carries); a run that meets it
    while overloaded, or before its rate's steady state, fails (those verdicts are asked only then)."""
    result = run(rate)
    attainment = result.attainment(slo) or 0.0     # None: no request arrived, which attains nothing
    latency = result.latency()
    met = attainment >= slo.attainment
    over = met and result.overloaded()
    short = met and not over and not result.long_enough()
    return Probe(rate, attainment, result.goodput_rps(slo), latency["ttft_s"]["p90"], latency["tpot_s"]["p90"],
                 met and not over and not short, over, short)


def _rates(rates: list[float]) -> str:
    rates = sorted(rates)
    return ", ".join(units.rate(r, "req/s", 4) for r in rates[:3]) + (f" and {len(rates) - 3} more"
                                                                       if len(rates) > 3 else "")


def unsustained_note(probes: list[Probe]) -> str:
    """Why runs that met the SLO were counted as failing: their queue grew for the whole run, or their arrivals
    ended before the rate's steady state; either way the run ended before it missed the SLO (gpt-oss-120b on one
    H200, 150 requests: 81 req/s met it where 2,000 requests fail above 7.25 req/s)."""
    over = [p.rate_rps for p in probes if p.overloaded]
    short = [p.rate_rps for p in probes if p.short]
    parts = ([f"overloaded at {_rates(over)} (the queue grew for the whole run)"] if over else []) + (
        [f"too short to judge at {_rates(short)} (the arrivals ended within {run_length.SPANS:g}x a request's latency, "
         "before the rate's steady state)"] if short else [])
    if not parts:
        return ""
    more = "; the answer may be a lower bound: more --requests (or --duration) lets higher rates be judged"
    return "; ".join(parts) + ": these met the SLO as a burst absorbed, not a rate sustained, so they count as " \
        "failing" + (more if short else "")


def _check(slo: SLO, lo: float, hi: float | None, rel_tol: float, max_runs: int) -> None:
    if not slo.given:
        raise WhatifError("capacity search needs an SLO: give --slo-ttft and/or --slo-tpot (seconds)")
    positive_int(max_runs, "max_runs")
    if not 0 < rel_tol < 1:
        raise WhatifError(f"rel_tol: {rel_tol!r} must be a number > 0 and < 1")
    if lo < 0 or (hi is not None and hi <= lo):
        raise WhatifError(f"rate bracket: lo={lo!r}, hi={hi!r} must satisfy 0 <= lo < hi (requests/s)")


def max_rate(run: Callable[[float], SimulationResult], slo: SLO, lo: float = 0.0, hi: float | None = None,
             rel_tol: float = 0.02, max_runs: int = 24) -> CapacityResult:
    """The highest arrival rate (requests/s) at which `run(rate)` attains `slo` for `slo.attainment` of requests,
    within `rel_tol` of the lowest failing rate. `lo` (when > 0) must pass and `hi` (when given) is the top of the
    search; without `hi` the search doubles from a guess until a run fails."""
    _check(slo, lo, hi, rel_tol, max_runs)
    probes: list[Probe] = []

    def passes(rate: float) -> bool:
        probes.append(probe(run, rate, slo))
        return probes[-1].passed

    def result(rate: float, note: str) -> CapacityResult:
        warn = unsustained_note(probes)
        return CapacityResult(rate, probes, slo, f"{note}; {warn}" if warn else note)

    if lo > 0 and not passes(lo):
        return result(0.0, f"the SLO fails even at the lowest rate tried, {units.rate(lo, 'req/s', 4)}")
    # find a failing rate above the last passing one
    if hi is None:
        hi = max(FIRST_GUESS_RPS, 2 * lo)
        while passes(hi):
            lo = hi
            if hi >= MAX_RATE_RPS:
                raise WhatifError(f"--slo-ttft/--slo-tpot: {slo_label(slo)} is met even at {hi:g} req/s (every "
                                  "request at once): the SLO is vacuous; give tighter objectives")
            if len(probes) >= max_runs:
                return result(lo, f"every run passed up to max_runs={max_runs}: a lower bound")
            hi *= 2
    elif passes(hi):
        return result(hi, f"passes at the top of the search, hi={units.rate(hi, 'req/s', 4)}: capacity may be higher")
    # no passing rate yet: halve down from the failing one
    halvings = 0
    while lo == 0:
        if halvings == MAX_HALVINGS or len(probes) >= max_runs:
            return result(0.0, f"the SLO fails even at {units.rate(hi, 'req/s', 4)}, the lowest rate tried: "
                               "likely tighter than a lone request's latency")
        rate, halvings = hi / 2, halvings + 1
        if passes(rate):
            lo = rate
        else:
            hi = rate
    # bisect: every pass so far is <= lo and every fail >= hi, so lo stays the highest pass below the lowest fail
    while hi - lo > rel_tol * lo:
        if len(probes) >= max_runs:
            return result(lo, f"stopped at max_runs={max_runs} with the bracket [{lo:.4g}, {hi:.4g}] req/s")
        mid = (lo + hi) / 2
        if passes(mid):
            lo = mid
        else:
            hi = mid
    return result(lo, f"highest passing rate below the lowest failing one, {units.rate(hi, 'req/s', 4)}")


def compare_capacity(runs: dict[str, Callable[[float], SimulationResult]], slo: SLO,
                     **search) -> dict[str, CapacityResult]:
    """max_rate for each named configuration, with the same SLO and search settings."""
    return {name: max_rate(run, slo, **search) for name, run in runs.items()}


def compare_text(results: dict[str, CapacityResult]) -> str:
    """Configurations side by side: capacity, how many runs it took, the note."""
    rows = [[name, units.rate(r.rate_rps, "req/s", 4), str(len(r.probes)), r.note] for name, r in results.items()]
    slo = next(iter(results.values())).slo if results else None
    head = [f"capacity under {slo_label(slo)}"] if slo is not None else []
    return "\n".join(head + [units.table(["configuration", "capacity", "runs", "note"], rows, right={1, 2})])
