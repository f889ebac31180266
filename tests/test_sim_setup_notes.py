"""The simulator's setup lines say what of a scenario it does not apply (simulator/cluster.describe_setup)."""
from whatif.scenario import Scenario
from whatif.simulator import cluster
from whatif.simulator.config import SimConfig
from whatif.simulator.workload import WorkloadSpec


def _setup(techniques):
    sc = Scenario(techniques=tuple(techniques))
    return cluster.simulate(SimConfig(sc, WorkloadSpec(requests=3, rate=5.0, prompt=512, output=4))).setup


def test_a_technique_that_changes_which_prompt_tokens_are_computed_is_named_as_not_simulated():
    line = _setup(["refrag"]).get("not simulated", "")
    assert line.startswith("refrag:") and "whatif estimate" in line


def test_no_such_line_when_every_technique_is_simulated():
    assert "not simulated" not in _setup([])
    assert "not simulated" not in _setup(["kivi"])
