"""`whatif simulate` and `whatif capacity`: text, JSON and CSV output, scenario files with the simulator's
sections under flags, one-line errors for flags that do not apply, the progress bar, lazy help."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from dataclasses import fields

import pytest

from whatif.scenario import Scenario

from whatif.cli import main
from whatif.cli.progress import ProgressBar
from whatif.cli.simulate import CAPACITY_REQUESTS
from whatif.cli.traces import time_scaled
from whatif.simulator.config import SchedulerConfig
from whatif.simulator.request import Request

SMALL = ["--requests", "40", "--rate", "5", "--prompt", "128", "--output", "16", "--no-progress"]
SEARCH = ["--requests", "30", "--prompt", "128", "--output", "16", "--slo-ttft", "50ms", "--rel-tol", "0.1",
          "--no-progress"]


def run_text(capsys, *argv) -> str:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def run_json(capsys, *argv) -> dict:
    out = run_text(capsys, *argv, "--json")
    assert out.count("\n") == 1, "one JSON document on one line"
    return json.loads(out)


def run_error(capsys, *argv) -> str:
    """Exit 2, nothing on stdout, one line on stderr without a traceback."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("whatif: error: "), err
    return lines[0]


def write(tmp_path, text: str, name: str = "sim.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------- simulate

def test_text_has_latency_table_with_units(capsys):
    out = run_text(capsys, "simulate", *SMALL)
    assert "requests: 40 arrived, 40 finished" in out
    table = out[out.index("latency"):].split("\n\n")[0].splitlines()
    for column in ("TTFT", "TPOT", "ITL", "E2EL", "queue"):
        assert f" {column}" in table[0], column
    assert [line.split()[0] for line in table[2:]] == ["p50", "p90", "p95", "p99", "mean", "max"]
    assert " ms" in "\n".join(table) and "req/s" in out and "tok/s" in out


def test_json_counts_add_up_to_arrived(capsys):
    d = run_json(capsys, "simulate", *SMALL, "--slo-ttft", "50ms")
    c = d["requests"]
    assert c["arrived"] == 40
    assert c["finished"] + c["queued"] + c["running"] + c["rejected"] == c["arrived"]
    assert d["latency"]["ttft_s"]["p50"] > 0
    assert d["slo"]["ttft_s"] == 0.05 and 0 <= d["slo"]["attainment"] <= 1


def test_csv_dir_writes_one_row_per_request(capsys, tmp_path):
    out = run_text(capsys, "simulate", *SMALL, "--csv-dir", str(tmp_path / "csv"))
    with open(tmp_path / "csv" / "requests.csv", newline="") as f:
        requests = list(csv.DictReader(f))
    with open(tmp_path / "csv" / "iterations.csv", newline="") as f:
        iterations = list(csv.DictReader(f))
    assert sorted(int(r["id"]) for r in requests) == list(range(40))
    assert len(iterations) > 0 and "duration_s" in iterations[0]
    assert str(tmp_path / "csv" / "requests.csv") in out


def test_csv_dir_that_is_a_file_fails_before_running(capsys, tmp_path):
    path = write(tmp_path, "", "file.txt")
    assert "--csv-dir" in run_error(capsys, "simulate", *SMALL, "--csv-dir", path)


SIM_YAML = """\
model: llama-3-8b
hardware: h100-sxm
workload: {batch: 16}
traffic: {rate: 3, requests: 30, prompt: 256, output: 8, seed: 2}
engine: {max_batch: 8, prefix_caching: true}
slo: {ttft_s: 0.05}
horizon_s: 1000
"""


def test_scenario_file_sections_and_flags_over_them(capsys, tmp_path):
    path = write(tmp_path, SIM_YAML)
    d = run_json(capsys, "simulate", "--scenario", path, "--no-progress")
    assert d["requests"]["arrived"] == 30
    assert d["prefix_cache"]["prompt_tokens"] == 30 * 256
    assert d["setup"]["config"]["engine"]["max_batch"] == 8 and d["setup"]["config"]["engine"]["prefix_caching"] is True
    assert d["slo"]["ttft_s"] == 0.05
    o = run_json(capsys, "simulate", "--scenario", path, "--no-progress", "--requests", "20", "--prompt", "64",
                 "--max-batch", "4", "--no-prefix-caching", "--slo-ttft", "100ms")
    assert o["requests"]["arrived"] == 20
    assert o["prefix_cache"]["prompt_tokens"] == 20 * 64
    engine = o["setup"]["config"]["engine"]
    assert engine["max_batch"] == 4 and engine["prefix_caching"] is False
    assert o["slo"]["ttft_s"] == 0.1
    # not given: the engine spec's as vLLM configures itself on an H100 (its large-GPU default, 8192)
    budget = Scenario(hardware="h100-sxm").engine_spec().max_num_batched_tokens
    assert o["setup"]["config"]["engine"]["token_budget"] == budget


def test_estimate_ignores_the_simulator_sections(capsys, tmp_path):
    scenario_only = "".join(SIM_YAML.splitlines(keepends=True)[:3])     # model, hardware, workload
    plain = run_json(capsys, "estimate", "--scenario", write(tmp_path, scenario_only, "plain.yaml"))
    with_sim = run_json(capsys, "estimate", "--scenario", write(tmp_path, SIM_YAML))
    assert with_sim == plain


@pytest.mark.parametrize("text,words", [
    ("traffic: {rates: 3}\n", ["sim.yaml.traffic", "rates", "valid:", "rate"]),
    ("engine: {max_batches: 3}\n", ["sim.yaml.engine", "max_batches"]),
    ("slo: {ttft: 1}\n", ["sim.yaml.slo", "'ttft'"]),
    ("traffic: 5\n", ["sim.yaml.traffic", "mapping"]),
])
def test_unknown_field_in_a_simulator_section(capsys, tmp_path, text, words):
    msg = run_error(capsys, "simulate", "--scenario", write(tmp_path, text))
    for word in words:
        assert word in msg, (word, msg)


@pytest.mark.parametrize("flag,hint", [("--batch", "--max-batch"), ("--prefill-chunk", "--token-budget"),
                                       ("--shared-prefix", "--prefix-groups")])
def test_estimate_batch_flags_point_to_the_simulator_ones(capsys, flag, hint):
    msg = run_error(capsys, "simulate", *SMALL, flag, "4")
    assert flag in msg and hint in msg


@pytest.mark.parametrize("argv,words", [
    (["--batching", "dynamic"], ["--batching", "'dynamic'", "continuous"]),
    (["--router", "random"], ["--router", "least-outstanding"]),
    (["--lengths", "zipf"], ["--lengths", "sharegpt"]),
    (["--rate", "-1"], ["--rate", "-1"]),
    (["--attainment", "2"], ["--attainment"]),
    (["--max-batch", "many"], ["--max-batch", "many"]),
])
def test_bad_values_are_one_line_errors(capsys, argv, words):
    msg = run_error(capsys, "simulate", *SMALL, *argv)
    for word in words:
        assert word in msg, (word, msg)


# ---------------------------------------------------------------- capacity

def test_capacity_finds_a_rate_and_json_has_probes(capsys):
    d = run_json(capsys, "capacity", *SEARCH)
    (row,) = d["configurations"]
    probes = row["probes"]
    assert row["rate_rps"] > 0 and row["slo"]["ttft_s"] == 0.05
    assert any(p["passed"] for p in probes) and any(not p["passed"] for p in probes)
    lowest_fail = min(p["rate_rps"] for p in probes if not p["passed"])
    assert row["rate_rps"] == max(p["rate_rps"] for p in probes if p["passed"] and p["rate_rps"] < lowest_fail)


def test_capacity_text_is_the_search(capsys):
    out = run_text(capsys, "capacity", *SEARCH)
    assert "capacity:" in out and "req/s" in out and "pass" in out and "fail" in out
    assert "5 req/s" not in out.splitlines()[0]        # the traffic line names no fixed rate


def test_capacity_default_traffic_size_is_stated(capsys):
    with pytest.raises(SystemExit):
        main(["capacity", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"default {CAPACITY_REQUESTS}" in out


def test_capacity_needs_an_slo(capsys):
    msg = run_error(capsys, "capacity", "--requests", "30", "--no-progress")
    assert "--slo-ttft" in msg and "--slo-tpot" in msg


def test_capacity_refuses_rate(capsys):
    assert "drop --rate" in run_error(capsys, "capacity", *SEARCH, "--rate", "5")


def test_capacity_variant_gives_a_row_each(capsys):
    d = run_json(capsys, "capacity", *SEARCH, "--variant", "int4")
    rows = d["configurations"]
    assert [r["label"] for r in rows] == ["baseline", "int4"]
    assert rows[0]["techniques"] == [] and rows[1]["techniques"] == ["int4"]
    assert all(r["rate_rps"] > 0 for r in rows)
    text = run_text(capsys, "capacity", *SEARCH, "--variant", "int4")
    assert "\nbaseline " in text and "\nint4 " in text


def test_capacity_bad_search_bounds(capsys):
    assert "--rel-tol" in run_error(capsys, "capacity", *SEARCH, "--rel-tol", "1.5")
    assert "--hi" in run_error(capsys, "capacity", *SEARCH, "--lo", "4", "--hi", "2")


def test_time_scaled_keeps_the_traffic_and_changes_the_rate():
    reqs = [Request(i, 1.0 + 0.5 * i, 10 + i, 3) for i in range(5)]
    scaled = time_scaled(reqs, 4.0)
    assert [r.arrival_s for r in scaled] == [1.0 + 2.0 * i for i in range(5)]
    assert [(r.id, r.prompt, r.output) for r in scaled] == [(r.id, r.prompt, r.output) for r in reqs]


# ---------------------------------------------------------------- progress and help

class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_bar_waits_then_redraws_then_clears():
    stream, clock = io.StringIO(), Clock()
    bar = ProgressBar(stream, delay_s=2.0, clock=clock)
    bar(10, 100)
    assert stream.getvalue() == "", "silent for short runs"
    clock.now = 3.0
    bar(50, 100)
    clock.now = 4.0
    bar(100, 100)
    frames = stream.getvalue().split("\r")[1:]
    assert "50%" in frames[0] and "3 s" in frames[0] and "100%" in frames[1] and "\n" not in stream.getvalue()
    bar.clear()
    assert stream.getvalue().endswith("\r") and stream.getvalue().split("\r")[-2].strip() == ""


def test_help_defaults_come_from_the_dataclasses(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())     # help wraps to the terminal's width
    engine = {f.name: f.default for f in fields(SchedulerConfig)}
    assert f"default {engine['max_batch']}" in out and f"default {engine['token_budget']}" in out
    assert "--no-chunked-prefill" in out and "continuous, static" in out


def test_building_the_parser_does_not_import_numpy():
    code = "import sys; from whatif.cli import build_parser; build_parser(); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


@pytest.mark.parametrize("command", ["simulate", "capacity"])
def test_a_cluster_larger_than_the_system_is_a_one_line_error(command, capsys):
    from whatif.cli import main
    slo = ["--slo-ttft", "200ms"] if command == "capacity" else []
    assert main([command, "--hardware", "dgx-h100", "--tp", "4", "--replicas", "3", "--requests", "5",
                 "--no-progress", *slo]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "12 GPUs, more than the 8 GPUs of system 'dgx-h100'" in err[0]


# ---------------------------------------------------------------- closed loop

def test_concurrency_runs_a_closed_loop(capsys):
    d = run_json(capsys, "simulate", "--concurrency", "3", "--requests", "12", "--prompt", "128", "--output", "16",
                 "--no-progress")
    assert "closed loop of 3 clients" in d["setup"]["workload"]
    assert d["requests"]["finished"] == 12


@pytest.mark.parametrize("argv, message", [
    (["simulate", "--concurrency", "3", "--rate", "5"], "give --rate (an open stream of arrivals) or --concurrency"),
    (["simulate", "--concurrency", "3", "--duration", "10s"], "--concurrency: a closed loop runs --requests"),
    (["simulate", "--concurrency", "0"], "--concurrency: 0 is out of range"),
    (["capacity", "--concurrency", "3", "--slo-ttft", "100ms"], "capacity searches an open stream's rate"),
])
def test_concurrency_refusals_are_one_line(capsys, argv, message):
    assert message in run_error(capsys, *argv, "--no-progress")


def test_the_benchmark_clients_length_spread_is_a_flag(capsys, tmp_path):
    """A closed loop of fixed lengths keeps the clients in lockstep (gpt-oss-120b, B200 TP2, 64 clients 1,000 /
    1,000: TTFT (server) mean 169 ms where the deployment measured 101.6); the benchmark clients draw each length
    uniform in [0.8 L, L] (sglang.bench_serving --random-range-ratio; serving_reference.py CLIENT_RANGE_RATIO).
    --range-ratio asks for that spread (default 1: fixed, as before), and --serve-command sends the same spread."""
    argv = ["simulate", "--concurrency", "8", "--requests", "32", "--prompt", "1000", "--output", "50",
            "--no-progress"]
    fixed = run_json(capsys, *argv)
    spread = run_json(capsys, *argv, "--range-ratio", "0.8", "--csv-dir", str(tmp_path))
    assert "fixed lengths" in fixed["setup"]["workload"] and "uniform in [0.8 x, 1 x]" in spread["setup"]["workload"]
    rows = list(csv.DictReader((tmp_path / "requests.csv").open()))
    prompts = {int(r["prompt"]) for r in rows}
    assert min(prompts) >= 800 and max(prompts) <= 1000 and len(prompts) > 10
    d = run_json(capsys, *argv, "--range-ratio", "0.8", "--serve-command")
    bench = d["serve_command"]["bench"]
    assert "--random-input-len 900" in bench and "--random-range-ratio 0.1111" in bench   # vLLM's [(1-b) M, (1+b) M]
    assert "--range-ratio" in run_error(capsys, *argv, "--range-ratio", "1.5")
