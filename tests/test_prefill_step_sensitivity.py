"""benchmarks/prefill_step_sensitivity.py: only steps with prefill chunks are stretched, by their prefill part, and
the patch is undone on exit."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import prefill_step_sensitivity as pss  # noqa: E402
from whatif.simulator import iteration_time as it  # noqa: E402


def test_stretched_scales_the_prefill_part_and_adds_once():
    assert pss.stretched(0.030, 0.010, 2.0, 0.0) == pytest.approx(0.050)
    assert pss.stretched(0.030, 0.010, 1.0, 0.005) == pytest.approx(0.035)


def test_only_prefill_steps_move_and_exit_restores(monkeypatch):
    monkeypatch.setattr(it.IterationTimes, "time", lambda self, d, c, p: 0.010 * bool(d) + 0.020 * len(p))
    original = it.IterationTimes.time
    with pss.stretched_prefill_steps(3.0, 0.001):
        assert it.IterationTimes.time(None, 8, 100, []) == pytest.approx(0.010)            # decodes alone
        assert it.IterationTimes.time(None, 8, 100, [(512, 0)]) == pytest.approx(0.071)    # 0.010 + 3 x 0.020 + 1 ms
        assert it.IterationTimes.time(None, 0, 0, [(512, 0)]) == pytest.approx(0.061)
    assert it.IterationTimes.time is original
