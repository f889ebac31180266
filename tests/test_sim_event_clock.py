"""The simulator's event clock (clock.py) makes its calls in SimPy's order: the same processes, timeouts,
wake-ups and run(until) on both give the same trace of (time, what ran)."""
from __future__ import annotations

import random

import pytest

from whatif.simulator.clock import Clock, Signal

simpy = pytest.importorskip("simpy")


def scripted(seed: int, until: float | None):
    """A random script: processes that wait random delays (ties included) or on a shared wake-up, fire it,
    and start short-lived processes; run on SimPy and on the clock, each returns its trace."""
    def on_simpy():
        env, trace, state = simpy.Environment(), [], {"event": None, "idle": 0}
        state["event"] = env.event()
        rng = random.Random(seed)

        def fire():
            if state["idle"]:
                event, state["event"] = state["event"], env.event()
                event.succeed()

        def child(name):
            trace.append((env.now, name, "child"))
            yield env.timeout(rng.choice((0.0, 0.5, 1.0)))
            trace.append((env.now, name, "child done"))

        def proc(name):
            for _ in range(30):
                trace.append((env.now, name))
                r = rng.random()
                if r < 0.2:
                    state["idle"] += 1
                    yield state["event"]
                    state["idle"] -= 1
                else:
                    if r < 0.35:
                        fire()
                    if r < 0.45:
                        env.process(child(name))
                    yield env.timeout(rng.choice((0.0, 0.25, 0.5, 1.0, 1.5)))
        for i in range(4):
            env.process(proc(i))

        def ticks(_event):
            trace.append((env.now, "tick"))
            fire()
            if env.now < 20:
                env.timeout(1.0).callbacks.append(ticks)
        start = env.timeout(0.5)
        start.callbacks.append(ticks)
        env.run(until=until)
        return trace, env.now

    def on_clock():
        env, trace, state = Clock(), [], {"signal": Signal(), "idle": 0}
        rng = random.Random(seed)

        def fire():
            if state["idle"]:
                signal, state["signal"] = state["signal"], Signal()
                env.fire(signal)

        def child(name):
            trace.append((env.now, name, "child"))
            yield rng.choice((0.0, 0.5, 1.0))
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
                    yield rng.choice((0.0, 0.25, 0.5, 1.0, 1.5))
        for i in range(4):
            env.start(proc(i))

        def ticks(_arg):
            trace.append((env.now, "tick"))
            fire()
            if env.now < 20:
                env.at(1.0, ticks)
        env.at(0.5, ticks)
        env.run(until=until)
        return trace, env.now

    return on_simpy(), on_clock()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("until", [None, 7.25])
def test_the_clock_runs_a_script_as_simpy_does(seed, until):
    simpy_run, clock_run = scripted(seed, until)
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
