"""roofline's one step pricer (roofline/step_price/step.py): memoized parts where a pass splits, the whole
pass (forward_pass.engine_step, bit for bit) otherwise or unmemoized."""
from __future__ import annotations

import pytest

from whatif.roofline.config import ForwardBatch
from whatif.roofline.forward_pass import engine_step
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.step_price import StepPricer, step_seconds
from whatif.scenario import Scenario

BATCHES = [((1, 700, 12),), ((1, 3000, 64), (517, 0, 1)), ((2048, 0, 1),), ((300, 1200, 1), (40, 0, 1)),
           ((1, 90, 3), (128, 64, 1), (128, 64, 1))]


def setup_of(sc: Scenario):
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(), sc.placement(),
                      engine_spec=sc.engine_spec())


def test_memoized_and_whole_steps_agree():
    setup = setup_of(Scenario())
    memo, whole = StepPricer(setup), StepPricer(setup, memoized=False)
    assert memo.parts is not None and whole.parts is None
    for groups in BATCHES:
        batch = ForwardBatch(groups)
        for graphs in (True, False):
            exact = engine_step(setup, batch, graphs)[1]
            assert whole.seconds(batch, graphs) == exact == step_seconds(setup, batch, graphs)
            assert whole.step(batch, graphs)[1] == exact
            assert memo.seconds(batch, graphs) == pytest.approx(exact, rel=1e-12)


def test_a_technique_that_does_not_split_is_priced_whole_even_memoized():
    setup = setup_of(Scenario(techniques=("snapkv",)))   # evicts: not Technique.splits
    pricer = StepPricer(setup)
    assert pricer.parts is None
    batch = ForwardBatch(((1, 900, 8), (300, 0, 1)))
    assert pricer.seconds(batch, True, passes=2) == engine_step(setup, batch, True, 2)[1]


def test_a_technique_that_splits_is_priced_from_parts_memoized():
    setup = setup_of(Scenario(techniques=("kivi",)))   # Technique.splits (tests/test_sim_pass_parts.py)
    pricer = StepPricer(setup)
    assert pricer.parts is not None
    batch = ForwardBatch(((1, 900, 8), (300, 0, 1)))
    assert pricer.seconds(batch, True, passes=2) == pytest.approx(engine_step(setup, batch, True, 2)[1], rel=1e-12)
