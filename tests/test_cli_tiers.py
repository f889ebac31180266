"""The tier what-ifs from the command line: placement flags, compare --host-links, crossover, size-tier."""
from __future__ import annotations

import pytest

from tests.test_cli import run_error, run_json, run_text

GH200 = ("--model", "llama-3.1-8b", "--hardware", "gh200-144gb-superchip")


def test_estimate_reports_bytes_per_tier_and_the_placement(capsys):
    d = run_json(capsys, "estimate", *GH200, "--place", "kv=lpddr5x", "--prompt", "100000", "--output", "256")
    assert d["placement"]["shares"] == [{"class": "kv", "tier": "grace-lpddr5x-480gb", "fraction": 1.0}]
    budgets = {b["tier"]: b for b in d["memory"]["tier_budgets"]}
    assert budgets["grace-lpddr5x-480gb"]["bytes"] == pytest.approx(d["memory"]["kv_cache_bytes"])
    assert d["memory_max_context_tokens"] > d["max_context_tokens"]     # the window binds, not the memory
    (tier,) = d["system_tiers"]
    assert tier["bandwidth_h2d_b_s"] == pytest.approx(375e9) and tier["placed_bytes"] > 0
    assert any(op["op_class"] == "transfer" for op in d["ops"]["decode"])


def test_text_estimate_shows_tier_table_and_cost(capsys):
    out = run_text(capsys, "estimate", *GH200, "--place", "kv=host:0.5", "--price-per-hour", "4", "--no-ops")
    assert "placement: kv=grace-lpddr5x-480gb:0.5 (stream, overlapped)" in out
    assert "grace-lpddr5x-480gb" in out and "USD/h (user (--price-per-hour))" in out
    assert "cost per 1M tokens (batch)" in out


def test_compare_runs_the_same_offload_over_each_host_link(capsys):
    d = run_json(capsys, "compare", *GH200, "--place", "kv=host", "--prompt", "16000", "--batch", "2",
                 "--host-links", "nvlink-c2c,pcie-gen5-x16,pcie-gen4-x16")
    tpots = [r["tpot_s"] for r in d["rows"]]
    assert len(tpots) == 3 and tpots[0] < tpots[1] < tpots[2]
    assert d["rows"][1]["hardware"].endswith("via pcie-gen5-x16")


def test_crossover_sweeps_batches_and_names_the_crossover(capsys):
    d = run_json(capsys, "crossover", "--model", "llama-3-70b", "--hardware", "dgx-h100", "--gpus", "1",
                 "--dtype", "fp8", "--place", "weights=host:0.3", "--prompt", "512", "--output", "64",
                 "--versus-gpus", "2", "--batches", "1,8,64")
    assert [r["batch"] for r in d["rows"]] == [1, 8, 64]
    first = d["rows"][0]
    assert first["offload"]["gpus"] == 1 and first["all_in_hbm"]["gpus"] == 2
    # Streaming 30% of 70 GB over PCIe per step: far behind two H100s per GPU at batch 1.
    assert first["offload"]["throughput_per_gpu_tok_s"] < first["all_in_hbm"]["throughput_per_gpu_tok_s"]
    assert d["crossover_batch"] is None or d["crossover_batch"] in (1, 8, 64)


def test_size_tier_finds_the_fewest_expanders(capsys):
    d = run_json(capsys, "size-tier", "--model", "llama-3.1-8b", "--hardware", "h100-pcie-host", "--batch", "16",
                 "--prompt", "100000", "--output", "1000", "--place", "kv=cxl", "--tier", "cxl-micron-cz120-256gb")
    n = d["devices_needed"]
    kv = 16 * 101000 * 131072        # llama-3.1-8b: 128 KiB of bf16 KV per token
    assert (n - 1) * 256e9 * 0.9 < kv <= n * 256e9 * 0.9
    rows = d["rows"]
    assert rows[0]["devices"] == n and rows[1]["tpot_s"] <= rows[0]["tpot_s"]


@pytest.mark.parametrize("argv, match", [
    (("estimate", "--place", "kv=host:2"), "fraction"),
    (("estimate", "--hardware", "dgx-h100", "--place", "kv=optane"), "valid:"),
    (("estimate", "--access", "mmap"), "invalid choice"),
    (("estimate", "--add-tier", "nope"), "unknown memory"),
    (("estimate", "--host-link", "pcie-gen9"), "unknown link"),
    (("estimate", "--context-window", "0"), "--context-window"),
    (("crossover", "--batch", "4"), "--batches"),
    (("crossover",), "keeps everything in HBM"),
    (("crossover", "--place", "kv=host", "--batches", "0,2"), "--batches"),
    (("size-tier", "--tier", "cxl-micron-cz120-256gb"), "keeps everything in HBM"),
    (("compare", "--host-links", ","), "--host-links"),
])
def test_bad_tier_input_is_a_one_line_error(capsys, argv, match):
    assert match in run_error(capsys, *argv)


def test_a_config_that_overfills_a_tier_names_it(capsys):
    err = run_error(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "h100-pcie-cxl", "--place", "kv=cxl",
                    "--batch", "64", "--prompt", "100000", "--output", "1000")
    assert "cxl-micron-cz120-256gb needs" in err and "over by" in err


def test_scenario_file_takes_placement_as_a_mapping(capsys, tmp_path):
    path = tmp_path / "offload.yaml"
    path.write_text("model: llama-3.1-8b\nhardware: h100-pcie-cxl\nplace: {kv: {cxl: 0.5, ddr5: 0.25}}\n"
                    "access: stream\noverlap: false\nprice_per_hour: 2.5\nworkload: {batch: 4, prompt: 4096}\n")
    d = run_json(capsys, "estimate", "--scenario", str(path))
    shares = {(s["class"], s["tier"]): s["fraction"] for s in d["placement"]["shares"]}
    assert shares == {("kv", "cxl-micron-cz120-256gb"): 0.5, ("kv", "ddr5-4800-rdimm"): 0.25}
    assert d["placement"]["overlap"] is False and d["cost"]["price_usd_per_hour"] == 2.5
    path.write_text("place: {kv: 0.5}\n")
    assert "placement.kv" in run_error(capsys, "estimate", "--scenario", str(path))
    path.write_text("overlap: maybe\n")
    assert "overlap" in run_error(capsys, "estimate", "--scenario", str(path))


def test_compare_names_the_tier_each_system_placed_on(capsys):
    """One --place across systems resolves to each one's own tier ('host': Grace LPDDR5X on a GH200, DDR5 on the
    H100 PCIe + CXL host); the table said none of it, so a reader of the CXL row could not tell CXL from DDR5."""
    out = run_text(capsys, "compare", "--model", "llama-3-70b", "--systems", "gh200-144gb-superchip,h100-pcie-cxl",
                   "--batch", "1", "--prompt", "1024", "--output", "16", "--place", "weights=host:0.7")
    assert ("placement: gh200-144gb-superchip: weights=grace-lpddr5x-480gb:0.7 (stream, overlapped); "
            "h100-pcie-cxl: weights=ddr5-4800-rdimm:0.7") in out
