"""The simulator's event clock (clock.py) makes its calls in SimPy's order: the same processes, timeouts,
wake-ups and run(until) on both give the same trace of (time, what ran)."""
from __future__ import annotations

import random

import pytest

from whatif.simulator.clock import Clock, Signal

simpy = pytest.importorskip("simpy")


class OnSimpy:
    """The script's few verbs on SimPy: a delay is a timeout event, a wake-up an event that succeeds."""

    def __init__(self):
        self.env = simpy.Environment()

    @property
    def now(self) -> float:
        return self.env.now

    def delay(self, seconds):
        return self.env.timeout(seconds)

    def signal(self):
        return self.env.event()

    def fire(self, signal) -> None:
        signal.succeed()

    def start(self, process) -> None:
        self.env.process(process)

    def at(self, seconds, call) -> None:
        self.env.timeout(seconds).callbacks.append(call)

    def run(self, until) -> None:
        self.env.run(until=until)


class OnClock:
    """The same verbs on the clock: a delay is a number of seconds, a wake-up a Signal the clock fires."""

    def __init__(self):
        self.env = Clock()

    @property
    def now(self) -> float:
        return self.env.now

    def delay(self, seconds):
        return seconds

    def signal(self):
        return Signal()

    def fire(self, signal) -> None:
        self.env.fire(signal)

    def start(self, process) -> None:
        self.env.start(process)

    def at(self, seconds, call) -> None:
        self.env.at(seconds, call)

    def run(self, until) -> None:
        self.env.run(until=until)


def scripted(seed: int, until: float | None, env) -> tuple[list, float]:
    """A random script on `env` (OnSimpy or OnClock): processes that wait random delays (ties included) or on
    a shared wake-up, fire it, and start short-lived processes; returns its trace and the final time."""
    trace, state = [], {"signal": env.signal(), "idle": 0}
    rng = random.Random(seed)

    def fire():
        if state["idle"]:
            signal, state["signal"] = state["signal"], env.signal()
            env.fire(signal)

    def child(name):
        trace.append((env.now, name, "child"))
        yield env.delay(rng.choice((0.0, 0.5, 1.0)))
        trace.append((env.now, name, "child done"))

    def proc(name):
        for _ in range(30):
            trace.append((env.now, name))
            r = rng.random()
            if r < 0.2:
                state["idle"] += 1
                yield state["signal"]
                state["idle"] -= 1
            else:
                if r < 0.35:
                    fire()
                if r < 0.45:
                    env.start(child(name))
                yield env.delay(rng.choice((0.0, 0.25, 0.5, 1.0, 1.5)))
    for i in range(4):
        env.start(proc(i))

    def ticks(_arg):
        trace.append((env.now, "tick"))
        fire()
        if env.now < 20:
            env.at(1.0, ticks)
    env.at(0.5, ticks)
    env.run(until)
    return trace, env.now


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("until", [None, 7.25])
def test_the_clock_runs_a_script_as_simpy_does(seed, until):
    simpy_run, clock_run = scripted(seed, until, OnSimpy()), scripted(seed, until, OnClock())
    assert len(simpy_run[0]) > 40
    assert clock_run == simpy_run


def test_run_until_stops_before_calls_due_then():
    env, seen = Clock(), []
    env.at(2.0, seen.append, "at 2")
    env.at(1.0, seen.append, "at 1")
    env.run(until=2.0)
    assert seen == ["at 1"] and env.now == 2.0
    with pytest.raises(ValueError):
        env.run(until=1.0)
