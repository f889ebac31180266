"""The garbage collector is held back during a run only: thresholds and frozen objects come back as
they were, after an error too."""
from __future__ import annotations

import gc

import pytest

from whatif.simulator.collections_paused import YOUNG_THRESHOLD, collections_paused


def test_collector_settings_come_back_after_a_run_and_after_an_error():
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    with collections_paused():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    with pytest.raises(RuntimeError), collections_paused():
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
