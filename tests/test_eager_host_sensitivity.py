"""benchmarks/eager_host_sensitivity.py: the scale reaches the scenario's launch_us only for the named engine on the
named GPU generation, and the patch is undone on exit."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import eager_host_sensitivity as ehs  # noqa: E402
from whatif import api  # noqa: E402


@pytest.fixture
def seen(monkeypatch):
    calls = []
    monkeypatch.setattr(api, "simulate", lambda **kw: calls.append(kw) or kw)
    return calls


def test_scale_sets_launch_us_from_the_engines_host(seen):
    with ehs.scaled_eager_host("trtllm", "blackwell", 2.0):
        api.simulate(kernel_engine="trtllm", hardware="dgx-b200")
        api.simulate(kernel_engine="vllm", hardware="dgx-b200")          # another engine: untouched
        api.simulate(kernel_engine="trtllm", hardware="dgx-h100")        # another generation: untouched
    assert seen[0]["launch_us"] == pytest.approx(2 * 21.5)            # trtllm.yaml eager_launch_by_arch blackwell
    assert "launch_us" not in seen[1] and "launch_us" not in seen[2]


def test_a_family_name_reaches_the_release_the_mapping_names(seen):
    # the serving mapping passes SGLang rows as kernel_engine "sglang-0.5"; "--engine sglang" once matched none
    with ehs.scaled_eager_host("sglang", "blackwell", 2.0):
        api.simulate(kernel_engine="sglang-0.5", hardware="dgx-b200")
        api.simulate(kernel_engine="sglangx", hardware="dgx-b200")       # not of the family: untouched
    assert seen[0]["launch_us"] == pytest.approx(2 * 29.3)            # sglang.yaml eager_launch_by_arch blackwell
    assert "launch_us" not in seen[1]


def test_scale_one_and_exit_leave_runs_alone(seen):
    with ehs.scaled_eager_host("trtllm", "blackwell", 1.0):
        api.simulate(kernel_engine="trtllm", hardware="dgx-b200")
    api.simulate(kernel_engine="trtllm", hardware="dgx-b200")
    assert all("launch_us" not in kw for kw in seen)


def test_summary_counts_rows_off_by_three():
    line = ehs.summary([(4, 50.0, 200.0, 10.0, 10.0), (4, 100.0, 100.0, 11.0, 10.0)])
    assert "off3  1" in line and "x0.62" in line


def test_compile_ms_sets_the_mapped_l2norm_compile_and_restores_it():
    import serving_reference as sr
    before = sr.L2NORM_COMPILE_S
    row = next(r for r in sr.load() if r["backend"] == "sglang" and r["backend_version"] == "0.5.9"
               and "qwen3.5" in r["model_path"].lower())
    with ehs.l2norm_compile(90.0):
        assert sr.sglang_l2norm_recompile(row) == {"prefill_recompile_s": pytest.approx(0.090)}
    with ehs.l2norm_compile(None):                      # None: as mapped
        assert sr.L2NORM_COMPILE_S == before
    assert sr.L2NORM_COMPILE_S == before


def test_seq_host_us_adds_host_time_per_sequence_and_restores_it():
    from whatif.specs.engines import CpuOverhead
    cpu = CpuOverhead(per_step_s=0.6e-3, per_sequence_s=6e-6, overlapped=False)
    with ehs.extra_host_per_sequence(100.0):
        assert cpu.seconds(128) == pytest.approx(0.6e-3 + 128 * (6e-6 + 100e-6))
    with ehs.extra_host_per_sequence(0.0):               # 0: the engine's own host time
        assert cpu.seconds(128) == pytest.approx(0.6e-3 + 128 * 6e-6)
    assert cpu.seconds(128) == pytest.approx(0.6e-3 + 128 * 6e-6)
