"""benchmarks/sim_speed.py --instructions: cachegrind's instruction count read off its summary (issue 42's ratio
that host contention does not move)."""
import pytest

from tests.benchmark_module import load_benchmark

sim_speed = load_benchmark("sim_speed")

SUMMARY = """==31185== Cachegrind, a high-precision tracing profiler
==31185== I1  cache:         32768 B, 64 B, 8-way associative
==31185==
==31185== I   refs:      2,655,494,227
"""


def test_the_instruction_count_is_read_off_cachegrinds_summary():
    assert sim_speed.instruction_refs(SUMMARY) == 2_655_494_227


def test_a_run_without_the_summary_is_an_error_not_a_zero():
    with pytest.raises(RuntimeError, match="I refs"):
        sim_speed.instruction_refs("==1== valgrind: failed to start tool 'cachegrind'\n")
