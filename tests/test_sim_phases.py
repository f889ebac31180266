"""benchmarks/sim_phases.py: the issue-42 process split by phase. Its worker reaches into the simulator's run
(cluster._run, Cluster, generate, Record), so a refactor that moves them breaks the split: run it small."""
from tests.benchmark_module import load_benchmark

sim_phases = load_benchmark("sim_phases")


def test_every_phase_is_timed_in_a_fresh_process():
    split = sim_phases.cpu_split(200, 1)
    assert list(split) == ["interpreter start", *sim_phases.PHASES]
    assert all(s >= 0 for s in split.values())
    assert split["event loop"] > 0 and split["interpreter start"] > 0


def test_function_counts_sum_each_functions_lines():
    text = "events: Ir\nfl=a.c\nfn=eval\n10 5\n11 7\nfn=malloc\n3 2\nfl=b.c\nfn=eval\n4 1\nsummary: 15\n"
    assert sim_phases.function_counts(text) == {"eval": 13, "malloc": 2}
