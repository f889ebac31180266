"""A run judged only by an SLO can stop once it fails for sure: when more requests have certainly missed the
objectives than the attainment target leaves room for, no later event can make the run pass. A request has
certainly missed when its first token came later than the TTFT target (a first token only moves later), when it
is still waiting for one longer than that, or when it finished outside the objectives. A capacity search needs
only the failing run's verdict, not its figures (config_search/recheck.py stops its failing runs so)."""
from __future__ import annotations

from .config import SLO
from .metrics import attains
from .request import FINISHED

CHECKS = 25   # checks per run at most, on arrivals and on finishes each (assumed: often enough to stop early)


class SloFailed(Exception):
    """The run stopped: it fails `slo` whatever comes next; `attainment` is the most it could still reach."""

    def __init__(self, attainment: float):
        super().__init__(f"fails the SLO for sure: attainment at most {attainment:.3f}")
        self.attainment = attainment


def missed(r, now: float, slo: SLO) -> bool | None:
    """Whether record `r` misses `slo` whatever happens after `now`: True, False (it finished within the
    objectives), or None (not decided yet)."""
    first = r.first_token_s
    if slo.ttft_s is not None and (now if first is None else first) - r.request.arrival_s > slo.ttft_s:
        return True
    return None if r.status != FINISHED else not attains(r, slo)


def watch(slo: SLO, total: int):
    """A check of the first `arrived` of `records` at `now` that raises SloFailed once at most total x
    (1 - slo.attainment) requests can still attain `slo` (the run has `total` requests in all). Each record is
    looked at until it is decided."""
    undecided: list = []
    seen, misses = [0], [0]

    def check(records, arrived: int, now: float) -> None:
        undecided.extend(records[seen[0]:arrived])
        seen[0] = arrived
        still = []
        for r in undecided:
            verdict = missed(r, now, slo)
            if verdict is None:
                still.append(r)
            elif verdict:
                misses[0] += 1
        undecided[:] = still
        best = (total - misses[0]) / total
        if best < slo.attainment:
            raise SloFailed(best)
    return check


class Judged:
    """What capacity.probe reads of a run judged only by its SLO: its attainment and whether it was overloaded or
    too short to judge its rate; no goodput, no latencies (a capacity search that shows only its verdicts skips
    working them out)."""

    def __init__(self, attainment: float | None, overloaded: bool = False, long_enough: bool = True):
        self.bound, self.over, self.long = attainment, overloaded, long_enough

    @classmethod
    def of(cls, result, slo: SLO) -> Judged:
        """The verdicts of a whole SimulationResult: its attainment of `slo`, whether it was overloaded and whether
        it ran long enough to judge its rate (asked only of a run that meets `slo`, as capacity.probe does)."""
        attainment = result.attainment(slo)
        met = (attainment or 0.0) >= slo.attainment
        return cls(attainment, met and result.overloaded(), not met or result.long_enough())

    def attainment(self, slo: SLO | None = None) -> float | None:
        return self.bound

    def overloaded(self) -> bool:
        return self.over

    def long_enough(self) -> bool:
        return self.long

    def goodput_rps(self, slo: SLO | None = None) -> None:
        return None

    def latency(self) -> dict:
        return {"ttft_s": {"p90": None}, "tpot_s": {"p90": None}}


class FailedRun(Judged):
    """What capacity.probe reads of a run stopped by SloFailed: its attainment bound; no goodput, no latencies, no
    overload verdict (it fails either way)."""

    def __init__(self, stopped: SloFailed):
        super().__init__(stopped.attainment)
