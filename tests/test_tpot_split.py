"""benchmarks/tpot_split.py: the steady window, the decode/prefill split of a step log, and the two-part read."""
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import tpot_split as ts  # noqa: E402


def steps(rows):
    df = pd.DataFrame(rows, columns=["start_s", "duration_s", "decode_seqs", "prefill_seqs"])
    df["end_s"] = df.start_s + df.duration_s
    return df


def test_steady_window_is_the_middle_half_of_finishes():
    assert ts.steady_window([8, 1, 2, 3, 4, 5, 6, 7]) == (3, 7)
    with pytest.raises(ValueError, match="at least 4"):
        ts.steady_window([1, 2, 3])


def test_split_weights_decode_steps_by_sequences_and_counts_prefill_time():
    log = steps([(0.0, 0.010, 4, 0), (0.010, 0.020, 2, 0), (0.030, 0.070, 0, 1), (0.100, 0.010, 4, 0)])
    s = ts.step_split(log, 0.0, 0.1)   # the last step ends past the window: left out
    assert s.decode_ms == pytest.approx((10 * 4 + 20 * 2) / 6)
    assert s.prefill_share == pytest.approx(0.070 / 0.100)


def test_split_without_decode_steps_says_so():
    with pytest.raises(ValueError, match="no decode-only step"):
        ts.step_split(steps([(0.0, 0.05, 0, 1)]), 0.0, 1.0)


def test_two_part_read_recovers_known_factors():
    dec, stall = [10.0, 12.0, 15.0, 20.0], [0.5, 2.0, 4.0, 9.0]
    measured = [0.9 * d + 1.2 * s for d, s in zip(dec, stall)]
    a, b, resid = ts.two_part_read(dec, stall, measured)
    assert (a, b) == (pytest.approx(0.9), pytest.approx(1.2))
    assert resid == pytest.approx(0.0, abs=1e-9)
