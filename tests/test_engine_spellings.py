"""The engines' spellings (vllm serve, vllm bench serve, sglang.launch_server, trtllm-serve) as aliases of the
flags, vLLM's --burstiness (gamma shape), time flags with units, "did you mean", one time unit per column, and
the overload verdict."""
from __future__ import annotations

import json
import math

import pytest

from whatif.cli import build_parser, main
from whatif.specs import units

SIM = ["--prompt", "128", "--output", "16", "--no-progress"]


def _args(*argv):
    return build_parser().parse_args(list(argv))


def _error(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    return err


@pytest.mark.parametrize("engine_flags,ours", [
    (["--tensor-parallel-size", "2"], ["--tp", "2"]), (["-tp", "2"], ["--tp", "2"]),
    (["--pipeline-parallel-size", "2"], ["--pp", "2"]), (["--input-len", "900"], ["--prompt", "900"]),
    (["--random-output-len", "64"], ["--output", "64"]), (["--kv-cache-dtype", "fp8"], ["--kv-dtype", "fp8"]),
    (["--gpu-memory-utilization", "0.8"], ["--memory-utilization", "0.8"]),
    (["--request-rate", "3"], ["--rate", "3"]), (["--num-prompts", "7"], ["--requests", "7"]),
    (["--max-concurrency", "4"], ["--concurrency", "4"]), (["--max-running-requests", "8"], ["--max-num-seqs", "8"]),
    (["--no-enable-prefix-caching"], ["--no-prefix-caching"]), (["--enable-chunked-prefill"], ["--chunked-prefill"]),
])
def test_engine_spelling_sets_the_same_field(engine_flags, ours):
    assert vars(_args("simulate", *engine_flags)) == vars(_args("simulate", *ours))


def test_engine_spellings_are_in_help(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--tensor-parallel-size", "--request-rate", "--num-prompts", "--max-concurrency",
                 "--gpu-memory-utilization", "--kv-cache-dtype", "--input-len", "--output-len"):
        assert flag in text, flag


def test_an_error_names_the_spelling_given(capsys):
    assert "argument --max-concurrency: 0 is out of range" in _error(capsys, "simulate", "--max-concurrency", "0")


@pytest.mark.parametrize("typo,suggested", [("--tensor-paralel-size", "--tensor-parallel-size"),
                                            ("--slo-tpt", "--slo-tpot"), ("--num_prompts", "--num-prompts")])
def test_unknown_flag_gets_did_you_mean(capsys, typo, suggested):
    assert f"did you mean {suggested}?" in _error(capsys, "simulate", typo, "1")


def test_an_engine_flag_without_a_twin_says_what_to_give(capsys):
    assert "--slo-tpot 30ms" in _error(capsys, "simulate", "--goodput", "tpot:30")


def test_burstiness_is_vllms_gamma_shape():
    from whatif.cli.sim_flags import simulation_values
    traffic = simulation_values(_args("simulate", "--burstiness", "0.25"))["traffic"]
    assert traffic["arrival"] == "gamma" and traffic["burstiness"] == pytest.approx(2.0)   # CV = 1/sqrt(shape)
    assert simulation_values(_args("simulate", "--burstiness", "1"))["traffic"]["burstiness"] == 1.0


def test_burstiness_shape_below_one_is_burstier(capsys):
    def p99_ttft(shape):
        main(["simulate", *SIM, "--rate", "20", "--requests", "400", "--burstiness", shape, "--json"])
        return json.loads(capsys.readouterr().out)["latency"]["ttft_s"]["p99"]
    assert p99_ttft("0.1") > p99_ttft("10")


@pytest.mark.parametrize("value,spelled", [("30", "30ms"), ("0.02", "0.02s")])
def test_a_time_flag_without_unit_is_refused_with_spellings(capsys, value, spelled):
    assert spelled in _error(capsys, "simulate", "--slo-tpot", value)
    assert spelled in _error(capsys, "search", "--slo-tpot", value)


def test_an_absurd_slo_is_warned(capsys):
    assert main(["simulate", *SIM, "--requests", "10", "--slo-tpot", "30s", "--json"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "30ms" in err


def test_scenario_file_times_stay_seconds(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text("model: llama-3-8b\nslo: {ttft_s: 0.5}\ntraffic: {requests: 10}\n")
    assert main(["simulate", "--scenario", str(path), *SIM, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["slo"]["ttft_s"] == 0.5


def test_times_print_without_exponent_and_one_unit_per_column():
    assert units.seconds(1080) == "1080 s" and "e" not in units.seconds(4.2e-5)
    text = units.table(["x", "t"], [["a", "21 ms"], ["b", "2.3 s"], ["c", "1.5 s+"], ["d", "-"]])
    assert [line.split(None, 1)[1] for line in text.splitlines()[2:]] == ["0.021 s", "2.3 s", "1.5 s+", "-"]


def test_overload_is_said_first_and_tails_marked(capsys):
    assert main(["simulate", *SIM, "--rate", "300", "--requests", "300"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OVERLOADED: offered")
    assert "+" in out.split("\n\n")[1]   # the latency table marks the tails
    assert main(["simulate", *SIM, "--rate", "300", "--requests", "300", "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["overload"]
    assert o["overloaded"] and o["sustained_rps"] < o["offered_rps"]
    assert math.isclose(o["queue_growth_rps"], o["offered_rps"] - o["sustained_rps"])
    assert "ttft_s" in o["unbounded"]["latencies"]


def test_a_light_load_is_not_overloaded(capsys):
    assert main(["simulate", *SIM, "--rate", "5", "--requests", "100", "--json"]) == 0
    o = json.loads(capsys.readouterr().out)["overload"]
    assert not o["overloaded"] and o["unbounded"] is None


@pytest.mark.parametrize("engine,on", [("vllm", True), ("sglang", True), ("trtllm", True), ("vllm-0.6", False),
                                       ("vllm-0.2", False), ("hf-transformers", False)])
def test_prefix_caching_defaults_to_the_engine_spec(engine, on):
    from whatif.scenario import Scenario
    from whatif.simulator.config import SchedulerConfig
    spec = Scenario(kernel_engine=engine).engine_spec()
    assert spec.prefix_caching is on and "scheduler.prefix_caching" in spec.sources
    assert SchedulerConfig.for_engine(spec).prefix_caching is on
    assert SchedulerConfig.for_engine(spec, prefix_caching=not on).prefix_caching is (not on)


def _summary(capsys, *argv) -> dict:
    assert main(["simulate", *SIM, "--requests", "60", "--rate", "8", *argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    return {"latency": d["latency"], "throughput": d["throughput"], "hit": d["prefix_cache"]["hit_rate"]}


def test_prefix_caching_moves_only_workloads_that_share_prefixes(capsys):
    assert _summary(capsys) == _summary(capsys, "--no-prefix-caching")   # no shared prefix: the same run
    shared = ["--prefix-groups", "2", "--prefix-tokens", "512"]
    cached, uncached = _summary(capsys, *shared), _summary(capsys, *shared, "--no-prefix-caching")
    assert cached["hit"] > 0.5 and not uncached["hit"]
    assert cached["latency"]["ttft_s"]["p50"] < uncached["latency"]["ttft_s"]["p50"]
