"""The Python API (`whatif.estimate`, `simulate`, `capacity`, `search`): docs/api.md's examples run, the results
are the commands' results, and `import whatif` stays light."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import whatif
from whatif.cli import main
from whatif.errors import WhatifError

ROOT = Path(__file__).resolve().parents[1]
API_PAGE = (ROOT / "docs" / "api.md").read_text()


def readme_api_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", API_PAGE, re.S)


def test_readme_api_examples_run(capsys):
    blocks = readme_api_blocks()
    assert blocks
    for code in blocks:
        namespace: dict = {}
        exec(compile(code, "docs/api.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "TTFT" in out and "tok/s/GPU" in out


def test_import_is_light():
    code = "import sys, whatif; print([m for m in ('pandas', 'simpy', 'plotly') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_estimate_is_the_cli_estimate(capsys):
    argv = ["estimate", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--tp", "2", "--batch", "8",
            "--prompt", "1024", "--output", "128", "--kv-dtype", "fp8", "--json"]
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)
    api = whatif.estimate("llama-3.1-8b", "dgx-h100", tp=2, batch=8, prompt=1024, output=128, kv_dtype="fp8")
    d = api.to_dict()
    for key in ("ttft_s", "tpot_s", "e2e_s", "throughput_tok_s", "max_batch", "max_batch_throughput_tok_s"):
        assert d[key] == cli[key], key
    frame = api.to_frame()
    assert len(frame) == 1 and frame.loc[0, "ttft_s"] == api.ttft_s and frame.loc[0, "kv_dtype"] == "fp8"
    assert "TTFT" in api.text()


def test_estimate_takes_spec_objects():
    from whatif.specs.hardware import load_component
    from whatif.specs.models import load_model
    by_name = whatif.estimate("llama-3.1-8b", "dgx-h100", tp=2, batch=4)
    by_spec = whatif.estimate(load_model("llama-3.1-8b"), load_component("dgx-h100", None, "--hardware"), tp=2,
                              batch=4)
    assert (by_spec.ttft_s, by_spec.tpot_s, by_spec.max_batch) == (by_name.ttft_s, by_name.tpot_s, by_name.max_batch)


def test_estimate_reports_a_batch_that_does_not_fit():
    est = whatif.estimate("llama-3.1-70b", "h100-sxm", batch=1, with_max_batch=False)
    assert not est.fits and est.max_batch == 0


def test_estimate_bad_input_is_a_whatif_error():
    with pytest.raises(WhatifError, match="--tp"):
        whatif.estimate("llama-3.1-8b", "dgx-h100", tp=3)
    with pytest.raises(WhatifError, match="bach: not an argument"):
        whatif.estimate("llama-3.1-8b", "dgx-h100", bach=4)


def test_scenario_file_with_overrides():
    est = whatif.estimate(scenario=str(ROOT / "examples" / "llama3-70b-tp4.yaml"), batch=2)
    assert est.workload.batch == 2 and est.parallel.tp == 4


def test_simulate_and_capacity_results():
    sim = whatif.simulate("llama-3.1-8b", "h100-sxm", rate=2.0, requests=40, prompt=500, output=50,
                          slo_ttft=0.5, slo_tpot=0.05, engine={"max_batch": 16})
    assert len(sim.to_frame()) == 40
    assert {"requests", "latency", "throughput", "slo"} <= set(sim.to_dict())
    assert 0.0 <= sim.attainment() <= 1.0
    cap = whatif.capacity("llama-3.1-8b", "h100-sxm", requests=60, prompt=500, output=50, slo_ttft=0.5,
                          slo_tpot=0.05, rel_tol=0.2)
    assert cap.rate_rps > 0
    assert len(cap.to_frame()) == len(cap.probes) == len(cap.to_dict()["probes"])
    with pytest.raises(WhatifError, match="SLO"):
        whatif.capacity("llama-3.1-8b", "h100-sxm", requests=10)


def test_a_simulator_section_given_as_a_name_is_a_one_line_error():
    with pytest.raises(WhatifError, match="engine: 'trtllm' must be a SchedulerConfig or a dict of its fields"):
        whatif.simulate("llama-3.1-8b", "h100-sxm", engine="trtllm", traffic=dict(concurrency=1, requests=1))
