"""Text output puts the answer first and the efficiency fit on one short line; `--explain` prints the whole
provenance there, and `--json` always carries it whole."""
import pytest

from tests.test_cli import run_json, run_text
from whatif.queries.provenance import efficiency_line
from whatif.roofline.efficiency import load_efficiency
from whatif.specs.hardware import load_component

ARGS = ("--model", "llama-3-70b", "--hardware", "dgx-h100", "--tp", "4", "--no-ops")
KERNEL = ("kernel", "gemm", "--m", "16", "--n", "8192", "--k", "8192", "--hardware", "h100-sxm")


def efficiency_of(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("efficiency: "))


def test_the_estimate_answer_comes_before_its_basis(capsys):
    lines = run_text(capsys, "estimate", *ARGS).splitlines()
    ttft = next(i for i, line in enumerate(lines) if line.startswith("TTFT"))
    assert ttft < 8 and all(len(line) <= 80 for line in lines[3:ttft + 1])
    assert ttft < next(i for i, line in enumerate(lines) if line.startswith(("engine: ", "efficiency: ")))


@pytest.mark.parametrize("argv", [("estimate", *ARGS), ("compare", *ARGS[:-1], "--variant", "kivi"), KERNEL])
def test_one_short_line_and_explain_prints_it_whole(argv, capsys):
    short = efficiency_of(run_text(capsys, *argv))
    assert short == "efficiency: default (vllm 0.24.0 kernels fitted on h100-sxm); --explain for all"
    whole = efficiency_of(run_text(capsys, *argv, "--explain"))
    d = run_json(capsys, *argv)
    provenance = d["efficiency_provenance"] if argv[0] == "kernel" else d["efficiency"]["provenance"]
    assert whole == f"efficiency: default ({provenance})" and len(whole) > 500


@pytest.mark.parametrize("gpu,source,calibration,expected", [
    ("h100-sxm", "ideal", None, "efficiency: ideal (datasheet ceilings, no efficiency losses or overheads)"),
    ("t4", "default", None, "efficiency: default (vllm 0.14.0 kernels fitted on a100-sxm-80gb; no turing fit); "
                            "--explain for all"),
    ("h100-sxm", "calibrated", "whatif/validate/measurements/h100-sxm/calibration.yaml",
     "efficiency: calibrated (960 train rows of vidur-reference.csv); --explain for all"),
])
def test_the_short_line_names_the_fit(gpu, source, calibration, expected):
    eff = load_efficiency(source, load_component(gpu, None, "--hardware"), calibration)
    assert efficiency_line(eff) == expected
    assert efficiency_line(eff, explain=True) == f"efficiency: {source} ({eff.provenance})"
