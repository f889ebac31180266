"""What a new user meets in the first hour: fp4 (NVFP4) as a dtype, per-system parallelism in compare, a warning
when --shared-prefix can change nothing, rates printed with significant figures, the shipped example config and
the GH200 NVL2 system."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from whatif.cli import main
from whatif.reports.output import tok_rate
from whatif.errors import WhatifError
from whatif.roofline.config import Precision
from whatif.specs.dtypes import gemm_compute_dtype

ROOT = Path(__file__).resolve().parents[1]


def _json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- fp4

def test_fp4_stores_nvfp4_block_scales():
    p = Precision(weight="fp4", activation="bf16", kv="fp4")
    assert p.weight_bytes == pytest.approx(0.5 + 1 / 16)       # E2M1 values + one E4M3 scale per 16
    assert p.kv_bytes == pytest.approx(0.5 + 1 / 16)
    assert p.embedding_bytes == 2.0                           # embeddings and LM head stay 16-bit
    assert Precision(weight="int4").weight_bytes < p.weight_bytes


def test_fp4_gemms_run_at_the_fp4_peak_only_with_fp4_activations():
    assert gemm_compute_dtype("fp4", "fp4") == "fp4"
    assert gemm_compute_dtype("fp4", "bf16") == "bf16"         # weight-only: dequantized to 16-bit
    assert gemm_compute_dtype("fp4", "fp8") == "fp8"


def test_fp4_on_blackwell_and_a_clear_error_without_an_fp4_peak(capsys):
    fp4 = _json(capsys, "estimate", "--hardware", "b200", "--dtype", "fp4")
    bf16 = _json(capsys, "estimate", "--hardware", "b200")
    assert fp4["precision"] == {"weight": "fp4", "activation": "fp4", "kv": "fp4", "quantization": None}
    assert fp4["ceilings"]["peak_flop_s"]["value"] == 9000e12       # B200 datasheet, dense
    assert fp4["memory"]["weights_bytes"] < 0.45 * bf16["memory"]["weights_bytes"]
    assert fp4["ttft_s"] < bf16["ttft_s"]
    assert main(["estimate", "--hardware", "h100-sxm", "--dtype", "fp4"]) == 2
    err = capsys.readouterr().err
    assert "fp4" in err and "h100-sxm" in err and len(err.strip().splitlines()) == 1
    assert _json(capsys, "estimate", "--hardware", "h100-sxm", "--weight-dtype", "fp4")["precision"]["weight"] == "fp4"


# ---------------------------------------------------------------- compare: parallelism per system

def test_compare_sets_parallelism_per_system(capsys):
    d = _json(capsys, "compare", "--model", "llama-3-70b", "--batch", "8",
              "--systems", "dgx-h100:tp=8,dgx-h100:tp=4:pp=2,gh200-nvl2:tp=2")
    rows = d["rows"]
    assert [r["gpus"] for r in rows] == [8, 8, 2]
    assert [r["hardware"] for r in rows] == ["dgx-h100 tp=8 pp=1", "dgx-h100 tp=4 pp=2", "gh200-nvl2 tp=2 pp=1"]
    assert rows[0]["tpot_s"] < rows[2]["tpot_s"]


@pytest.mark.parametrize("systems,needle", [("dgx-h100:tp=0", "tp=0"), ("dgx-h100:xp=2", "xp=2"),
                                            ("dgx-h100:tp=2:tp=4", "each at most once")])
def test_a_bad_system_parallelism_is_a_one_line_error(systems, needle, capsys):
    assert main(["compare", "--systems", systems]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_capacity_keeps_two_parallelisms_of_one_system_apart(capsys):
    d = _json(capsys, "capacity", "--systems", "dgx-h100:tp=1,dgx-h100:tp=2", "--slo-ttft", "500ms",
              "--requests", "40", "--hi", "8", "--no-progress")
    assert [c["label"] for c in d["configurations"]] == ["baseline on dgx-h100 tp=1 pp=1",
                                                         "baseline on dgx-h100 tp=2 pp=1"]


def test_compare_without_system_parallelism_keeps_its_labels(capsys):
    d = _json(capsys, "compare", "--systems", "h100-sxm,a100-sxm-80gb")
    assert [r["hardware"] for r in d["rows"]] == ["h100-sxm", "a100-sxm-80gb"]


def test_a_row_that_does_not_fit_shows_no_latency(capsys, tmp_path):
    """Llama-3-70B bf16 on one GH200 cannot hold its weights: compare printed 168 ms / 44.9 ms beside '145 GB (no
    fit)' as if it ran. Its TTFT, TPOT and tok/s read '-' with the reason, in text, --json, --csv and the report."""
    argv = ["compare", "--model", "llama-3-70b", "--systems", "gh200-96gb,dgx-h100:tp=8", "--batch", "1"]
    rows = _json(capsys, *argv)["rows"]
    unfit, fit = rows
    assert not unfit["fits"] and "does not fit: hbm needs" in unfit["no_fit_reason"]
    assert unfit["ttft_s"] is None and unfit["tpot_s"] is None and unfit["throughput_tok_s"] is None
    assert fit["fits"] and fit["no_fit_reason"] is None and fit["tpot_s"] > 0
    assert fit["vs_baseline"]["tpot_speedup"] is None            # no ratio against a baseline that cannot run
    assert main([*argv, "--csv", str(tmp_path / "c.csv"), "--report", str(tmp_path / "c.html")]) == 0
    text = capsys.readouterr().out
    line = next(ln for ln in text.splitlines() if ln.startswith("baseline    gh200-96gb"))
    assert " ms" not in line and "(no fit)" in line
    assert "gh200-96gb tp=1 pp=1: does not fit: hbm needs" in text and "TTFT, TPOT and tok/s not shown" in text
    csv_rows = (tmp_path / "c.csv").read_text().splitlines()
    header = csv_rows[0].split(",")
    assert csv_rows[1].split(",")[header.index("tpot_s")] == ""
    assert csv_rows[2].split(",")[header.index("tpot_s")] != ""
    assert "they cannot run" in (tmp_path / "c.html").read_text()


# ---------------------------------------------------------------- silent no-ops and messages

def test_shared_prefix_without_a_sharing_technique_warns(capsys):
    assert main(["estimate", "--batch", "8", "--shared-prefix", "256", "--no-ops"]) == 0
    err = capsys.readouterr().err
    assert "warning: --shared-prefix 256 changes nothing" in err and "prefix_caching" in err
    assert main(["estimate", "--batch", "8", "--shared-prefix", "256", "--technique", "prefix_caching",
                 "--no-ops"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main(["compare", "--batch", "8", "--shared-prefix", "256", "--variant", "hydragen"]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize("value,text", [(0.059, "0.059 tok/s"), (2.345, "2.35 tok/s"), (15.26, "15.3 tok/s"),
                                        (1455.34, "1,455.3 tok/s")])
def test_token_rates_keep_their_significant_figures(value, text):
    assert tok_rate(value) == text


def test_the_shipped_example_config_loads(capsys):
    path = ROOT / "examples" / "qwen2.5-7b" / "config.json"
    d = _json(capsys, "estimate", "--model", str(path), "--hardware", "gh200-superchip", "--weight-dtype", "int4")
    assert d["model"] == "qwen2.5-7b" and d["memory"]["fits"]


def test_gh200_nvl2_is_two_superchips_on_nvlink():
    from whatif.specs.hardware import load_system
    s = load_system("gh200-nvl2")
    assert s.gpu_count == 2 and s.gpu.name == "gh200-144gb" and s.gpu_link.type == "nvlink"
    assert not s.gpu_link.nvswitch and [t.tier.name for t in s.tiers] == ["grace-lpddr5x-480gb"]
    with pytest.raises(WhatifError):
        load_system("gh200-nvl2", 4)
