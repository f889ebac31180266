"""`whatif search` on the command line: JSON, CSV, Parquet, a search file, one-line errors."""
from __future__ import annotations

import json

import pytest

from whatif.cli import main

BASE = ["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "4", "--prompt", "2000",
        "--output", "200", "--slo-ttft", "300ms", "--slo-tpot", "20ms", "--tp", "1,2,4", "--pp", "1",
        "--batches", "1,16,128", "--no-progress"]


def test_text_output(capsys):
    assert main(BASE) == 0
    out = capsys.readouterr().out
    assert "best:" in out and "Pareto frontier" in out and "searched" in out


def test_json_csv_parquet(capsys, tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    csv, pq = tmp_path / "s.csv", tmp_path / "s.parquet"
    assert main([*BASE, "--json", "--csv", str(csv), "--parquet", str(pq)]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert d["best"]["gpus"] <= 4 and d["frontier"] and d["configurations"] == len(pd.read_csv(csv))
    frame = pd.read_parquet(pq)
    assert frame["best"].sum() == 1
    assert frame.loc[frame["best"], "label"].item() == d["best"]["label"]
    assert (frame["gpus"] <= 4).all()


def test_search_file_with_flag_override(capsys, tmp_path):
    f = tmp_path / "search.yaml"
    f.write_text("model: llama-3.1-8b\nhardware: dgx-h100\ngpus: 2\nprompt: 1000\noutput: 100\n"
                 "slo: {ttft: 0.5, tpot: 0.05}\ntp: [1, 2]\npp: [1]\nbatches: [1, 8]\nmodes: aggregated\n")
    assert main(["search", "--scenario", str(f), "--gpus", "1", "--json", "--no-progress"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["space"]["gpu_budget"] == 1 and d["best"]["gpus"] == 1 and d["best"]["mode"] == "aggregated"


@pytest.mark.parametrize("argv, needle", [
    (["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100"], "--gpus"),
    (["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "2", "--tp", "x"], "integers"),
    (["search", "--model", "llama-3.1-8b", "--hardware", "nope-gpu", "--gpus", "2"], "nope-gpu"),
    (["search", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--gpus", "2", "--backend", "spark"],
     "--backend"),
    # session 70 DD: a --tp that splits no head evenly left every configuration invalid and exited 0
    (["search", "--model", "gemma-4-31b", "--hardware", "h100-sxm", "--gpus", "8", "--tp", "3", "--slo-ttft", "1s",
      "--batches", "1,8", "--modes", "aggregated", "--no-progress"],
     "configurations are invalid: --tp: 3 does not divide the 32 attention heads of gemma-4-31b; valid: 1, 2, 4"),
])
def test_errors_are_one_line(capsys, argv, needle):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and needle in err


def test_html_report(capsys, tmp_path):
    pytest.importorskip("plotly")
    page = tmp_path / "search.html"
    assert main([*BASE, "--report", str(page)]) == 0
    out, err = capsys.readouterr()
    html = page.read_text()
    assert "Pareto frontier" in html and "best under the SLOs" in html and "Rejected, and why" in html
    assert f"report: {page}" in err


def test_progress_bar_shows_an_eta_after_the_delay():
    import io

    from whatif.cli.search import SearchProgress
    now = [0.0]
    stream = io.StringIO()
    bar = SearchProgress(stream, clock=lambda: now[0])
    bar(1, 4)
    assert stream.getvalue() == ""            # silent for short searches
    now[0] = 6.0
    bar(2, 4)
    assert "2/4 replica setups" in stream.getvalue() and "ETA 6 s" in stream.getvalue()
    bar.clear()
    assert stream.getvalue().endswith("\r")


@pytest.mark.parametrize("flag, match", [
    ("--tp=", "--tp: '' must be"), ("--batches=", "--batches: '' must be"), ("--tp=1,,2", "--tp:"),
    ("--weight-dtypes=", "--weight-dtypes: '' must be"), ("--technique=", "--technique: an empty"),
    ("--kv-link=x", "--kv-link: unknown link"), ("--tp=" + "9" * 30, "valid: integers from 1"),
    ("--efficiency=x", "invalid choice"), ("--backend=dask", "invalid choice"),
])
def test_bad_space_flags_are_one_line_errors(flag, match, capsys):
    assert main(["search", "--model", "llama-3-8b", "--hardware", "dgx-h100", "--gpus", "8", flag]) == 2
    err = capsys.readouterr().err.strip()
    assert match in err and "\n" not in err


def test_the_check_after_a_search_runs_the_traffic_its_claim_is_about(capsys):
    """Under a TTFT target the search claims a Poisson rate (configs.py); its "check the prediction" ran a closed
    loop of B clients (DeepSeek 8xH200 TP8 batch 16: 0.72 req/s closed loop against 0.507 claimed). It now sends the
    claimed rate, counts goodput by the targets and says which figure to compare; without a target, the closed loop."""
    from whatif.cli import main
    argv = ["search", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "1", "--batches", "16",
            "--prompt", "2000", "--output", "200", "--slo-tpot", "30ms", "--no-progress", "--jobs", "1",
            "--serve-command", "--modes", "aggregated"]
    assert main([*argv, "--slo-ttft", "1s", "--json", "--simulate-top", "1", "--sim-requests", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    best, serve = out["best"], out["best"]["serve_command"]
    bench = serve["bench"].split()
    assert "--max-concurrency" not in bench
    assert float(bench[bench.index("--request-rate") + 1]) == pytest.approx(best["request_rate_req_s"], rel=1e-3)
    assert bench[bench.index("--goodput") + 1:bench.index("--goodput") + 3] == ["ttft:1000", "tpot:30"]
    assert "Poisson arrivals" in serve["check"] and f"{best['request_rate_req_s']:.3g} req/s" in serve["check"]
    assert "the simulator's re-check held the targets up to" in serve["check"]   # the same traffic, simulated
    assert main(argv) == 0          # no TTFT target: the figures are full load, a closed loop of B clients
    text = capsys.readouterr().out
    bench_line = next(ln for ln in text.splitlines() if ln.startswith("vllm bench serve"))
    assert "--max-concurrency 16" in bench_line and "--request-rate" not in bench_line
    assert "# compare: a closed loop of 16 clients" in text
