"""The README and the docs pages cannot drift: every `$ whatif ...` example runs in-process and prints what the
page shows (numbers within benchmarks/readme_examples.py's tolerance), the files they cite exist, the quick start's
commands are the ones CI runs, and the table columns docs/tables.md documents are the ones the commands write."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from whatif.cli import main
from tests.benchmark_module import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


BENCH = load_benchmark("readme_examples")
DOCS = BENCH.documentation()        # the README and every docs/*.md page
# Capacity's examples run some fifty 2000-request simulations (about a minute): the benchmark checks them.
SLOW = ("$ whatif capacity",)
# an example shown on two pages with the same output runs once
EXAMPLES = list(dict.fromkeys((line, shown) for line, shown in BENCH.examples(DOCS) if not line.startswith(SLOW)))


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("line,shown", EXAMPLES, ids=[" ".join(BENCH.argv_of(line)[:3]) for line, _ in EXAMPLES])
def test_readme_example_prints_what_the_readme_shows(line, shown, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)                   # paths in the examples are relative to the checkout
    code = main(BENCH.argv_with_out(line, str(tmp_path)))
    out = capsys.readouterr()
    real = out.out + (out.err if code else "")
    why = BENCH.mismatch(shown, real)
    assert why is None, f"{line}: {why} (python benchmarks/readme_examples.py --write refreshes the pages)"


def test_the_comparison_catches_drift_and_tolerates_rounding():
    shown = "TTFT  2.08 s (4 prefill passes)\nmax batch  211"
    assert BENCH.mismatch(shown, "TTFT      2.1 s (4 prefill passes)\nmax batch  213") is None
    assert BENCH.mismatch(shown, "TTFT  2.30 s (4 prefill passes)\nmax batch  211") is not None
    assert BENCH.mismatch(shown, "TTFT  2.08 s (5 prefill passes)\nmax batch  211") is not None
    assert BENCH.mismatch(shown, "TTFT  2.08 ms (4 prefill passes)\nmax batch  211") is not None
    assert BENCH.mismatch(shown, shown + "\nextra") is not None
    demo = "whatif demo: wrote /home/me/whatif/whatif-demo.html (4.95 MB, 16 charts, 2.3 s); TPOT 27.2 ms"
    now = "whatif demo: wrote /tmp/x/whatif-demo.html (4.97 MB, 16 charts, 9.1 s); TPOT 27.3 ms"
    assert BENCH.mismatch(demo, now) is None
    assert BENCH.mismatch(demo, now.replace("16 charts", "15 charts")) is not None
    assert BENCH.keep_volatile(demo, now) == demo.replace("27.2", "27.3")


def test_files_the_readme_and_the_profiles_cite_exist():
    cited = set(re.findall(r"`((?:whatif|docs|examples|benchmarks|tests|reference)/[\w./-]+?)`", DOCS))
    cited |= set(re.findall(r"--(?:model|scenario) ((?:examples|whatif)/[\w./-]+)", DOCS))
    profiles = (ROOT / "whatif" / "hardware_profiles").glob("*.yaml")
    cited |= {m for p in profiles for m in re.findall(r"\((docs/[\w./-]+\.md)\)", p.read_text())}
    missing = sorted(c for c in cited if "*" not in c and not (ROOT / c).exists())
    assert not missing, missing


def test_the_quick_start_is_what_ci_runs():
    block = re.search(r"## Quick start\n\n```bash\n(.*?)```", README, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines()]
    assert commands[0] == "pip install -e . && whatif demo"
    ci = (ROOT / ".ci" / "run").read_text().replace("python3 -m pip install --quiet", "pip install")
    assert commands[1] in ci.replace("python3 -m pytest", "python -m pytest")


@pytest.mark.parametrize("name", ["ESTIMATE_COLUMNS", "COMPARE_COLUMNS", "KERNEL_COLUMNS", "SIMULATE_COLUMNS",
                                  "CAPACITY_COLUMNS"])
def test_the_table_columns_are_documented(name):
    from whatif.cli import result_rows
    section = (ROOT / "docs" / "tables.md").read_text()
    documented = set(re.findall(r"`(\w+)`", section))
    latency = re.compile(rf"({'|'.join(result_rows.LATENCIES)})_({'|'.join(result_rows.STATS)})_s")
    missing = [c for c in getattr(result_rows, name) if c not in documented and not latency.fullmatch(c)]
    assert not missing, missing


def test_the_counts_the_readme_states_are_the_shipped_ones():
    from whatif.roofline.techniques.registry import all_techniques
    models = len(list((ROOT / "whatif" / "model_profiles").glob("*.yaml")))
    assert int(re.search(r"Models: (\d+) profiles in `whatif/model_profiles/`", DOCS).group(1)) == models
    assert int(re.search(r"`whatif list techniques` lists (\d+) techniques", DOCS).group(1)) == len(all_techniques())
