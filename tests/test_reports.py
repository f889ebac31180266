"""HTML reports: one page per result type, its sections, escaping of user text, plotly.js inlined once and no
network, figures plotly accepts, units on the headline numbers, decimation that keeps a large report small,
and the CLI's --report / `whatif report` / `whatif demo` with their one-line errors."""
from __future__ import annotations

import csv
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("plotly")

from whatif.cli import main  # noqa: E402
from whatif.cli.report import DEMO_OUT  # noqa: E402
from whatif.queries.compare import run_compare  # noqa: E402
from whatif.specs.profiles import MODEL_DIR  # noqa: E402
from whatif.reports import build  # noqa: E402
from whatif.reports.breakdowns import memory_by_tier  # noqa: E402
from whatif.reports.page import Figure, Page, clean, plotly_js, script_json  # noqa: E402
from whatif.reports.simulation import bucket_max, cdf_points  # noqa: E402
from whatif.reports.summary import headline_rows  # noqa: E402
from whatif.reports.sweeps import Sweep, SweepPoint, default_batches, pareto, sweep_section  # noqa: E402
from whatif.reports.validation import validation_section  # noqa: E402
from whatif.validate.reference import vidur_measurements  # noqa: E402
from whatif.validate.table import Measurement, read_measurements, write_measurements  # noqa: E402
from whatif.scenario import build_scenario  # noqa: E402

EVIL = "<script>alert(1)</script>"
VIDUR_DIR = Path(__file__).resolve().parents[1] / "reference" / "vidur-profiling"   # the checkout's copy
SMALL = "llama-3.2-1b"
MB = 1e6


def evil_model(folder: Path) -> str:
    """A model profile whose name is a script tag (user text that must come out escaped)."""
    text = (Path(MODEL_DIR) / "llama-3.2-1b.yaml").read_text()
    path = folder / "evil-model.yaml"
    path.write_text(re.sub(r"(?m)^name: .*$", f"name: '{EVIL}'", text))
    return str(path)


def tiny_vidur(folder: Path) -> Path:
    """A few rows of the Vidur reference layout: one trained and one held-out model on H100, and all-reduces."""
    out = folder / "vidur"
    for rel, step in (("compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv", 60),
                      ("compute/h100/internlm/internlm-20b/mlp.csv", 60), ("network/h100_dgx/all_reduce.csv", 40)):
        lines = (VIDUR_DIR / rel).read_text().splitlines()
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("\n".join(lines[:1] + lines[1::step]) + "\n")
    return out


def _sim(scenario, **traffic):
    from whatif.simulator.cluster import simulate
    from whatif.simulator.config import SLO, SimConfig
    from whatif.simulator.workload import WorkloadSpec
    cfg = SimConfig(scenario, WorkloadSpec(**traffic), slo=SLO(ttft_s=0.1, tpot_s=0.02))
    return cfg, simulate(cfg)


def example_pages(folder: Path) -> dict[str, Page]:
    """One small page per result type (a few seconds in all), for the content and browser tests."""
    from whatif.claims import all_claims
    from whatif.reports.reproduction import evaluate_claims
    from whatif.simulator.capacity import max_rate
    from whatif.simulator.cluster import simulate
    pages = {}
    sc = build_scenario({"model": evil_model(folder), "hardware": "h100-pcie-cxl", "place": ["kv=cxl:0.5"]},
                        {"workload": {"batch": 4, "prompt": 2048, "output": 128}})
    pages["estimate"] = build.estimate_page(sc, sc.run())
    base = build_scenario({"model": SMALL, "hardware": "h100-sxm"}, {"workload": {"batch": 8}})
    result = run_compare(base, ["kivi", "int4+kivi"], ["a100-sxm-80gb"])
    pages["compare"] = build.compare_page(result, build.compare_scenarios(base, ["kivi", "int4+kivi"],
                                                                          ["a100-sxm-80gb"], None))
    cfg, res = _sim(base, lengths="sharegpt", rate=20.0, requests=80)
    pages["simulate"] = build.simulation_page(cfg, res)
    results = {}
    configs = [("baseline", base), ("kivi", replace(base, techniques=("kivi",)))]
    for label, scenario in configs:
        c = replace(cfg, scenario=scenario, workload=replace(cfg.workload, requests=40))
        results[label] = max_rate(lambda rate, c=c: simulate(replace(c, workload=replace(c.workload, rate=rate))),
                                  c.slo, lo=5.0, hi=80.0, rel_tol=0.3, max_runs=5)
    pages["capacity"] = build.capacity_page(configs, results, "40 requests, ShareGPT-like lengths")
    pages["validation"] = build.validation_page(vidur_measurements(tiny_vidur(folder)), "a few Vidur rows")
    claims = all_claims()
    pages["reproduction"] = build.reproduction_page(evaluate_claims([("?", c) for c in claims[::25]]))
    return pages


SECTIONS = {"estimate": ["summary", "roofline", "latency", "memory", "sweep"],
            "compare": ["summary", "comparison", "sweep", "roofline", "latency", "memory"],
            "simulate": ["summary", "simulation"], "capacity": ["summary", "capacity"],
            "validation": ["validation"], "reproduction": ["reproduction"]}


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    return example_pages(tmp_path_factory.mktemp("pages"))


@pytest.fixture(scope="module")
def rendered(pages):
    return {name: page.render() for name, page in pages.items()}


def test_each_result_type_has_its_sections(pages, rendered):
    for name, ids in SECTIONS.items():
        assert [s.id for s in pages[name].sections] == ids, name
        html = rendered[name]
        for sid in ids:
            assert f'<section id="{sid}">' in html
        assert html.count('class="whatif-figure"') == pages[name].figures > 0


def test_plotly_inlined_once_and_nothing_fetched(rendered):
    js_head = plotly_js()[:200]
    for name, html in rendered.items():
        assert html.count(js_head) == 1, name
        assert html.count("<script>/* plotly.js") == 1
        assert not re.search(r"<script[^>]*\bsrc=", html) and "<link" not in html and "<iframe" not in html
        assert "@import" not in html.split("<script>")[0]


def test_user_text_is_escaped(tmp_path, rendered):
    html = rendered["estimate"]
    assert EVIL not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html          # the summary and title, escaped
    assert "alert(1)" in html                                          # ... and present, inside figures as JSON
    # JSON in a <script> never carries a raw '<'
    assert script_json({"name": EVIL}) == '{"name":"\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"}'
    out = tmp_path / "titled.html"
    assert main(["report", "--model", SMALL, "--no-sweep", "--title", EVIL, "--out", str(out)]) == 0
    text = out.read_text()
    assert EVIL not in text and f"<title>{'&lt;script&gt;alert(1)&lt;/script&gt;'}</title>" in text


def test_figures_are_valid_plotly(pages):
    import plotly.graph_objects as go
    for page in pages.values():
        for section in page.sections:
            for block in section.blocks:
                if isinstance(block, Figure):
                    go.Figure(data=block.fig["data"], layout=block.fig["layout"])   # raises on a bad property


def test_summary_states_scenario_efficiency_and_units(pages, rendered):
    html = rendered["estimate"]
    for term in ("model", "system", "parallelism", "dtypes", "techniques", "placement", "workload", "efficiency"):
        assert f"<dt>{term}</dt>" in html
    assert "default (engine vllm" in html and "transferred from h100-sxm" in html   # the source and its provenance
    for name in ("simulate", "capacity"):
        assert "<dt>efficiency</dt><dd>default (" in rendered[name]
    est = build_scenario({"model": SMALL, "price_per_hour": 2.5}, {}).run()
    unit = re.compile(r"\d[\d,.]*\s?(s|ms|us|tok/s|sequences|tokens|[kMGT]?B|USD\b)")
    for metric, value in headline_rows(est):
        assert value == "yes" or unit.search(value), (metric, value)


def test_roofline_has_ceilings_per_dtype_and_tier(pages):
    fig = next(b.fig for s in pages["estimate"].sections if s.id == "roofline" for b in s.blocks
               if isinstance(b, Figure))
    names = [t["name"] for t in fig["data"]]
    assert any("fp8" in n and "peak" in n for n in names) and any("bf16" in n and "peak" in n for n in names)
    assert any(n.startswith("HBM") for n in names)
    assert any("cxl-micron" in n for n in names) and any("ddr5" in n for n in names)
    ops = [t for t in fig["data"] if t["name"].startswith("ops: ")]
    assert {t["name"] for t in ops} == {"ops: prefill", "ops: decode"}
    assert all(len(t["x"]) >= 8 and min(t["y"]) > 0 for t in ops)


@pytest.mark.parametrize("place", [["kv=cxl"], ["kv=cxl:0.5", "weights=host:0.3"], ["activations=host:0.5"], []])
def test_memory_breakdown_adds_up_per_tier(place):
    e = build_scenario({"model": SMALL, "hardware": "h100-pcie-cxl", "place": place},
                       {"workload": {"batch": 8, "prompt": 4096}}).run()
    by_tier = memory_by_tier(e)
    assert list(by_tier)[0] == "hbm"
    for tier, cats in by_tier.items():
        assert sum(cats.values()) == pytest.approx(e.memory.tiers[tier], rel=1e-9), tier
        assert min(cats.values()) >= 0
    assert sum(c["weights"] for c in by_tier.values()) == pytest.approx(e.memory.weights_bytes)
    assert sum(c["KV cache"] for c in by_tier.values()) == pytest.approx(e.memory.kv_cache_bytes)


def test_sweep_batches_and_pareto():
    assert default_batches(0) == [1] and default_batches(1) == [1]
    assert default_batches(20) == [1, 2, 4, 8, 16, 20]
    pts = lambda *xs: tuple(SweepPoint(b, 0.1, t, 1.0, thr, fits) for b, t, thr, fits in xs)  # noqa: E731
    a = Sweep("a", pts((1, 0.01, 100, True), (2, 0.02, 150, True), (4, 0.05, 140, True)), 4)
    b = Sweep("b", pts((1, 0.015, 120, True), (2, 0.03, 300, False)), 1)
    assert [(label, p.batch) for label, p in pareto([a, b])] == [("a", 1), ("b", 1), ("a", 2)]


def test_large_report_stays_small(tmp_path):
    """A sweep of thousands of points per curve, a 100k-row validation table and a 3000-request simulation:
    the data added to plotly.js stays under 1 MB."""
    import random
    rng = random.Random(0)
    sweeps = [Sweep(f"config {k}", tuple(SweepPoint(b, 0.1, 0.001 * (1 + b / 100) * (k + 1), 1.0,
                                                    b * 10.0 / (1 + b / 500), True) for b in range(1, 4001)), 4000)
              for k in range(8)]
    rows = [Measurement("h100-sxm", f"family{i % 7}", "k", "r", m, m * rng.lognormvariate(0, 0.2), "held-out")
            for i, m in enumerate(10 ** rng.uniform(-6, -2) for _ in range(100_000))]
    base = build_scenario({"model": SMALL}, {})
    _, res = _sim(base, lengths="sharegpt", rate=50.0, requests=3000)
    from whatif.reports.simulation import simulation_section
    page = Page("large", [], [sweep_section(sweeps), validation_section(rows, "synthetic"), simulation_section(res)])
    size = page.write(str(tmp_path / "large.html"))
    data = size - len(plotly_js().encode())
    assert data < 1 * MB, data
    assert size < 6 * MB


def test_decimation_limits():
    import numpy as np
    x, p = cdf_points(np.arange(100_000.0), limit=400)
    assert len(x) == 400 and p[0] == 0 and p[-1] == 100 and x[-1] == 99_999
    t = np.arange(50_000.0)
    ts, cols = bucket_max(t, {"v": np.sin(t)}, limit=1000)
    assert len(ts) <= 1000 and cols["v"].max() == pytest.approx(np.sin(t).max())
    assert clean([1.23456789, float("nan"), float("inf"), 3]) == [1.235, None, None, 3]


def test_measurement_table_round_trip_and_errors(tmp_path):
    rows = [Measurement("h100-sxm", "gemm", "qkv", "compute-bound", 1e-4, 1.1e-4, "held-out", "x"),
            Measurement("h100-sxm", "norm", "rms", "memory-bound", 2e-5, 1.8e-5, "train", "x")]
    path = tmp_path / "m.csv"
    write_measurements(str(path), rows)
    assert read_measurements(str(path)) == rows
    bad = tmp_path / "bad.csv"
    with open(bad, "w", newline="") as fh:
        csv.writer(fh).writerows([["family", "measured_s"], ["gemm", "1e-4"]])
    from whatif.errors import WhatifError
    with pytest.raises(WhatifError, match="missing column.*predicted_s"):
        read_measurements(str(bad))
    bad.write_text("family,measured_s,predicted_s\ngemm,abc,1e-4\n")
    with pytest.raises(WhatifError, match=r"bad.csv:2: measured_s 'abc' is not a number"):
        read_measurements(str(bad))


# ---------------------------------------------------------------- the command line


def _one_line_error(capsys, argv, *words):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("whatif: error:") and "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


def test_estimate_report_keeps_stdout_json(tmp_path, capsys):
    out = tmp_path / "e.html"
    assert main(["estimate", "--model", SMALL, "--json", "--report", str(out)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["model"] == SMALL                 # stdout: the JSON object, nothing else
    assert f"report: {out}" in captured.err
    html = out.read_text()
    assert '<section id="roofline">' in html and '<section id="sweep">' in html


def test_compare_simulate_capacity_reports(tmp_path, capsys):
    files = {k: tmp_path / f"{k}.html" for k in ("compare", "simulate", "capacity")}
    assert main(["compare", "--model", SMALL, "--variant", "kivi", "--report", str(files["compare"])]) == 0
    assert main(["simulate", "--model", SMALL, "--rate", "10", "--requests", "40", "--no-progress",
                 "--report", str(files["simulate"])]) == 0
    assert main(["capacity", "--model", SMALL, "--requests", "30", "--slo-ttft", "100ms", "--lo", "5", "--hi", "40",
                 "--rel-tol", "0.3", "--no-progress", "--report", str(files["capacity"])]) == 0
    capsys.readouterr()
    assert '<section id="comparison">' in files["compare"].read_text()
    assert '<section id="simulation">' in files["simulate"].read_text()
    assert '<section id="capacity">' in files["capacity"].read_text()


def test_report_command_sections(tmp_path, capsys):
    out = tmp_path / "r.html"
    m = tmp_path / "m.csv"
    write_measurements(str(m), [Measurement("h100-sxm", EVIL, "qkv", "compute-bound", 1e-4, 1.1e-4),
                                Measurement("h100-sxm", "gemm", "o", "memory-bound", 2e-5, 1.9e-5)])
    assert main(["report", "--model", SMALL, "--variant", "kivi", "--simulate", "--rate", "10", "--requests", "30",
                 "--no-progress", "--measurements", str(m), "--out", str(out), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["report"] == str(out) and d["charts"] > 10
    assert d["sections"] == ["summary", "comparison", "sweep", "roofline", "latency", "memory", "simulation",
                             "validation"]
    html = out.read_text()
    assert EVIL not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html      # a measured family's name


@pytest.mark.parametrize("command", [["estimate", "--report"], ["compare", "--report"],
                                     ["simulate", "--requests", "5", "--report"],
                                     ["capacity", "--slo-ttft", "1s", "--report"], ["report", "--out"],
                                     ["demo", "--out"]])
def test_unwritable_report_path_is_a_one_line_error(tmp_path, capsys, command):
    _one_line_error(capsys, command + [str(tmp_path / "missing" / "x.html")], "no such directory")
    _one_line_error(capsys, command + [str(tmp_path)], "is a directory")
    assert list(tmp_path.iterdir()) == []


def test_report_bad_inputs(tmp_path, capsys):
    _one_line_error(capsys, ["report", "--out", str(tmp_path / "r.html"), "--measurements", str(tmp_path / "no.csv")],
                    "--measurements", "cannot read")
    _one_line_error(capsys, ["report", "--out", str(tmp_path / "r.html"), "--batches", "4,x"], "--batches")
    _one_line_error(capsys, ["report", "--out", str(tmp_path / "r.html"), "--model", "nope"], "unknown model")


def test_missing_plotly_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "plotly" else real(name, *a))
    _one_line_error(capsys, ["estimate", "--report", str(tmp_path / "e.html")], "pip install 'whatif[report]'")


def test_demo(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    line = capsys.readouterr().out.strip()
    path = tmp_path / DEMO_OUT
    assert "\n" not in line and str(path) in line
    for words in ("h100-sxm: does not fit", "gh200-144gb-superchip: TPOT", "h100-pcie-cxl (KV on CXL): TPOT"):
        assert words in line
    html = path.read_text()
    for sid in ("summary", "comparison", "sweep", "roofline", "roofline-offload", "latency", "memory", "simulation",
                "capacity"):
        assert f'<section id="{sid}">' in html
    assert path.stat().st_size < 6 * MB
