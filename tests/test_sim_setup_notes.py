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


def test_ttft_through_the_server_adds_the_engine_specs_front_end_to_every_request():
    sc = Scenario()
    res = cluster.simulate(SimConfig(sc, WorkloadSpec(requests=20, rate=5.0, prompt=512, output=4)))
    front = sc.engine_spec().frontend
    assert front.seconds(512) > 0 and res.frontend == front
    lat = res.summary()["latency"]
    ttfts = sorted(r.ttft_s for r in res.finished())
    assert lat["served_ttft_s"]["max"] == ttfts[-1] + front.seconds(512)
    assert "TTFT (server)" in res.text()
    # an engine with no server (Hugging Face generate()): no such row, the key's statistics empty
    quiet = cluster.simulate(SimConfig(Scenario(kernel_engine="hf-transformers"),
                                       WorkloadSpec(requests=3, rate=5.0, prompt=512, output=4)))
    assert quiet.frontend is None and quiet.summary()["latency"]["served_ttft_s"]["p50"] is None
    assert "TTFT (server)" not in quiet.text()
