"""The `whatif` command line: JSON/text output of every command and one-line errors for bad input."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from whatif.cli import main

REPO = Path(__file__).resolve().parents[1]

OP_KEYS = {"name", "time_s", "flops", "hbm_bytes", "intensity_flop_per_byte", "bound"}
MEMORY_KEYS = {"weights_bytes", "kv_cache_bytes", "activation_bytes", "total_bytes", "capacity_bytes", "fits"}


def run_json(capsys, *argv):
    """Run `whatif argv... --json` in-process; exactly one JSON document on stdout, nothing on stderr."""
    rc = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert err == ""
    assert out.count("\n") == 1, "one JSON document on one line"
    return json.loads(out)


def run_text(capsys, *argv) -> str:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


def run_error(capsys, *argv) -> str:
    """A user error: return code 2, nothing on stdout, one line on stderr starting 'whatif: error:'."""
    rc = main(list(argv))
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("whatif: error: "), err
    return lines[0]


def run_subprocess(*argv, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "whatif", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


# ------------------------------------------------------------------ estimate


def test_estimate_json_schema(capsys):
    d = run_json(capsys, "estimate")
    for key in ("ttft_s", "tpot_s", "e2e_s", "throughput_tok_s"):
        assert isinstance(d[key], float) and d[key] > 0, key
    assert isinstance(d["max_batch"], int) and d["max_batch"] >= 1
    assert d["ttft_s"] < d["e2e_s"]
    assert d["tpot_s"] < d["e2e_s"]
    mem = d["memory"]
    assert MEMORY_KEYS <= set(mem)
    for key in MEMORY_KEYS - {"fits"}:
        assert mem[key] > 0, key
    assert mem["fits"] is True
    assert mem["total_bytes"] < mem["capacity_bytes"]
    assert mem["total_bytes"] >= mem["weights_bytes"] + mem["kv_cache_bytes"] + mem["activation_bytes"]
    assert set(d["ops"]) >= {"prefill", "decode"}
    for phase in ("prefill", "decode"):
        ops = d["ops"][phase]
        assert isinstance(ops, list) and ops
        for op in ops:
            assert OP_KEYS <= set(op), op["name"]
            assert op["time_s"] > 0
            assert op["flops"] >= 0 and op["hbm_bytes"] >= 0
            assert op["bound"] in {"compute", "memory", "overhead", "network"}
        names = [op["name"] for op in ops]
        assert "attention" in names and "lm_head" in names
        gemms = [op for op in ops if op["name"] == "mlp_gate_up"]
        assert gemms and gemms[0]["flops"] > 0 and gemms[0]["intensity_flop_per_byte"] > 0
    # Decode of one sequence is memory bound; a 512-token prefill GEMM is compute bound.
    assert next(op for op in d["ops"]["decode"] if op["name"] == "mlp_gate_up")["bound"] == "memory"
    assert next(op for op in d["ops"]["prefill"] if op["name"] == "mlp_gate_up")["bound"] == "compute"


def test_estimate_json_echoes_scenario(capsys):
    d = run_json(capsys, "estimate", "--model", "llama-2-7b", "--hardware", "dgx-h100", "--tp", "2",
                 "--batch", "4", "--prompt", "256", "--output", "32", "--kv-dtype", "fp8")
    assert d["model"] == "llama-2-7b" and d["hardware"] == "dgx-h100" and d["gpus"] == 2
    assert d["parallel"]["tp"] == 2
    assert d["workload"] == {"batch": 4, "prompt": 256, "output": 32, "prefill_chunk": d["workload"]["prefill_chunk"],
                             "shared_prefix": 0}
    assert d["precision"] == {"weight": "bf16", "activation": "bf16", "kv": "fp8", "quantization": None}
    assert d["throughput_tok_s"] == pytest.approx(4 * 32 / d["e2e_s"])
    # tp=2 adds all-reduces to each pass
    assert any(op["name"].startswith("all_reduce") or op["bound"] == "network" for op in d["ops"]["decode"])


def test_estimate_text(capsys):
    out = run_text(capsys, "estimate")
    for word in ("TTFT", "TPOT", "end-to-end latency", " ms", "tok/s", " GB", "fits", "llama-3-8b", "h100-sxm"):
        assert word in out, word
    assert "prefill pass" in out and "decode step" in out
    headers = [line.split() for line in out.splitlines() if line.startswith("op ")]
    assert headers == [["op", "class", "count", "time/each", "total", "share", "FLOPs/each", "bytes/each",
                        "FLOP/B", "bound"]] * 2
    assert not any(line != line.rstrip() for line in out.splitlines()), "no trailing whitespace"


def test_estimate_text_no_ops(capsys):
    out = run_text(capsys, "estimate", "--no-ops")
    assert "TTFT" in out and "time/each" not in out


def write_scenario(tmp_path, text: str, name: str = "scenario.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


SCENARIO = """\
model: llama-2-7b
hardware: dgx-h100
parallel: {tp: 2}
precision: {weight: bf16, activation: bf16, kv: fp8}
workload: {batch: 4, prompt: 1024, output: 64}
"""
FLAGS = ["--model", "llama-2-7b", "--hardware", "dgx-h100", "--tp", "2", "--kv-dtype", "fp8",
         "--batch", "4", "--prompt", "1024", "--output", "64"]


def test_scenario_file_equals_flags(capsys, tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    from_file = run_json(capsys, "estimate", "--scenario", path)
    from_flags = run_json(capsys, "estimate", *FLAGS)
    assert from_file == from_flags
    assert from_file["parallel"]["tp"] == 2 and from_file["precision"]["kv"] == "fp8"


def test_flag_overrides_scenario_file(capsys, tmp_path):
    path = write_scenario(tmp_path, SCENARIO)
    overridden = run_json(capsys, "estimate", "--scenario", path, "--batch", "8", "--tp", "4")
    assert overridden["workload"]["batch"] == 8 and overridden["parallel"]["tp"] == 4
    assert overridden["workload"]["prompt"] == 1024   # the rest still comes from the file
    flags = list(FLAGS)
    flags[flags.index("--batch") + 1] = "8"
    flags[flags.index("--tp") + 1] = "4"
    assert overridden == run_json(capsys, "estimate", *flags)


def test_example_scenario_runs(capsys):
    d = run_json(capsys, "estimate", "--scenario", str(REPO / "examples" / "llama3-70b-tp4.yaml"))
    assert d["model"] == "llama-3-70b" and d["gpus"] == 4 and d["memory"]["fits"]


def test_gpus_with_pp_sets_tp(capsys):
    d = run_json(capsys, "estimate", "--hardware", "dgx-h100", "--gpus", "8", "--pp", "2")
    assert d["parallel"]["tp"] == 4 and d["parallel"]["pp"] == 2 and d["gpus"] == 8


def test_moe_expert_parallel_fp8(capsys):
    d = run_json(capsys, "estimate", "--model", "deepseek-v3", "--hardware", "hgx-h200", "--tp", "8", "--ep", "8",
                 "--dtype", "fp8")
    assert d["parallel"]["ep"] == 8 and d["precision"]["weight"] == "fp8" and d["memory"]["fits"]
    assert 0 < d["ttft_s"] < d["e2e_s"]


def test_hf_config_path(capsys):
    cfg = REPO / "tests" / "data" / "hf_configs" / "llama-2-7b" / "config.json"
    from_config = run_json(capsys, "estimate", "--model", str(cfg))
    from_profile = run_json(capsys, "estimate", "--model", "llama-2-7b")
    assert from_config["ttft_s"] == pytest.approx(from_profile["ttft_s"])
    assert from_config["memory"]["weights_bytes"] == from_profile["memory"]["weights_bytes"]


# ------------------------------------------------------------------ kernel


def test_kernel_gemm_compute_bound(capsys):
    d = run_json(capsys, "kernel", "gemm", "--m", "4096", "--n", "4096", "--k", "4096")
    assert d["flops"] == 2 * 4096 ** 3
    assert d["bound"] == "compute"
    assert d["hbm_bytes"] == 3 * 4096 * 4096 * 2
    assert d["intensity_flop_per_byte"] == pytest.approx(2 * 4096 ** 3 / (3 * 4096 * 4096 * 2))
    # time is at least the FLOPs over the datasheet peak (989 TFLOP/s bf16 on h100-sxm)
    assert d["time_s"] >= d["flops"] / 989e12


def test_kernel_gemm_m1_memory_bound(capsys):
    d = run_json(capsys, "kernel", "gemm", "--m", "1", "--n", "4096", "--k", "4096")
    assert d["bound"] == "memory"
    assert d["flops"] == 2 * 4096 * 4096
    assert d["time_s"] >= d["hbm_bytes"] / 3.35e12


def test_kernel_gemm_text(capsys):
    out = run_text(capsys, "kernel", "gemm", "--m", "4096", "--n", "4096", "--k", "4096")
    assert "137 GFLOP" in out and "compute" in out and "h100-sxm" in out


def test_kernel_attention_decode_reads_kv_cache(capsys):
    batch, heads, kv_heads, head_dim, seq = 8, 32, 8, 128, 4096
    d = run_json(capsys, "kernel", "attention", "--phase", "decode", "--batch", str(batch), "--heads", str(heads),
                 "--kv-heads", str(kv_heads), "--head-dim", str(head_dim), "--seq-len", str(seq))
    assert d["bound"] == "memory"
    kv_cache = batch * seq * 2 * kv_heads * head_dim * 2
    assert d["hbm_bytes"] >= kv_cache
    assert d["hbm_bytes"] < 1.1 * kv_cache   # read once, not once per query head


def test_kernel_attention_prefill_compute_bound(capsys):
    d = run_json(capsys, "kernel", "attention", "--phase", "prefill", "--batch", "1", "--heads", "32",
                 "--kv-heads", "8", "--head-dim", "128", "--seq-len", "4096")
    assert d["bound"] == "compute" and d["flops"] > 0


def test_kernel_allreduce(capsys):
    def t(nbytes, gpus):
        return run_json(capsys, "kernel", "allreduce", "--bytes", str(nbytes), "--gpus", str(gpus),
                        "--hardware", "dgx-h100")

    times = [t(n, 8)["time_s"] for n in (1 << 10, 1 << 20, 1 << 26, 1 << 30)]
    assert all(a < b for a, b in zip(times, times[1:])), times
    assert times[0] > 0
    single = t(1 << 20, 1)
    assert single["time_s"] == 0
    assert t(1 << 30, 8)["bound"] == "network"
    # ideal efficiency: the ring formula, 2(n-1)/n of the message over each GPU's 450 GB/s link + 2(n-1) hops
    ideal = run_json(capsys, "kernel", "allreduce", "--bytes", str(1 << 30), "--gpus", "8", "--hardware", "dgx-h100",
                     "--efficiency", "ideal")
    assert ideal["time_s"] == pytest.approx(2 * 7 / 8 * (1 << 30) / 450e9 + 2 * 7 * 2e-6)


# ------------------------------------------------------------------ list / show


def test_list_hardware_json(capsys):
    items = run_json(capsys, "list", "hardware")
    assert isinstance(items, list) and items
    assert all(set(item) == {"name", "kind"} for item in items)
    names = {item["name"]: item["kind"] for item in items}
    assert names["h100-sxm"] == "gpu"
    assert names["gh200-superchip"] == "system"
    assert names["dgx-h100"] == "system"
    assert set(names.values()) <= {"gpu", "system", "link", "memory"}


def test_list_hardware_kind_filter(capsys):
    items = run_json(capsys, "list", "hardware", "--kind", "gpu")
    assert items and all(item["kind"] == "gpu" for item in items)


def test_list_models(capsys):
    names = run_json(capsys, "list", "models")
    assert "llama-2-7b" in names and "deepseek-v3" in names
    assert "llama-2-7b" in run_text(capsys, "list", "models").split()


def test_list_hardware_text(capsys):
    out = run_text(capsys, "list", "hardware")
    assert "h100-sxm" in out and "gh200-superchip" in out


def test_show_hardware(capsys):
    d = run_json(capsys, "show", "hardware", "h100-sxm")
    assert d["name"] == "h100-sxm"
    assert d["peak"]["bf16"]["provenance"] == "datasheet"
    assert d["peak"]["bf16"]["value"] == pytest.approx(989e12)
    assert d["peak"]["bf16"]["source"]
    out = run_text(capsys, "show", "hardware", "h100-sxm")
    assert "peak.bf16" in out and "datasheet" in out


def test_show_model(capsys):
    d = run_json(capsys, "show", "model", "llama-2-7b")
    assert d["derived"]["total_params"] == 6738415616
    assert d["num_layers"] == 32
    out = run_text(capsys, "show", "model", "deepseek-v3")
    assert "total parameters" in out and "671,026,404,352" in out


def test_show_model_says_how_a_vision_tower_is_priced(capsys):
    # session 70 DD: 'in memory, not priced' read wrong beside --technique vision_encoder, which prices it
    assert "--technique vision_encoder prices its own tower per image" in run_text(capsys, "show", "model",
                                                                                     "kimi-k2.5")
    assert "vision_encoder prices a CLIP ViT-L/14-336 stand-in" in run_text(capsys, "show", "model", "gemma-4-31b")


# ------------------------------------------------------------------ errors


def test_unknown_model_suggests_closest(capsys):
    msg = run_error(capsys, "estimate", "--model", "lama-3-8b")
    assert "--model" in msg and "'lama-3-8b'" in msg and "did you mean 'llama-3-8b'" in msg


def test_unknown_hardware(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "h100-sxn")
    assert "--hardware" in msg and "'h100-sxn'" in msg and "h100-sxm" in msg


def test_unknown_dtype(capsys):
    msg = run_error(capsys, "estimate", "--dtype", "fp12")
    assert "--dtype" in msg and "fp12" in msg and "bf16" in msg and "--weight-dtype" not in msg


@pytest.mark.parametrize("flag,value", [("--batch", "-1"), ("--prompt", "0"), ("--output", "0")])
def test_non_positive_workload(capsys, flag, value):
    msg = run_error(capsys, "estimate", flag, value)
    assert flag in msg and value in msg and "positive integer" in msg


def test_non_integer_batch(capsys):
    msg = run_error(capsys, "estimate", "--batch", "x")
    assert "--batch" in msg and "'x'" in msg and "int" in msg


def test_tp_not_dividing_heads(capsys):
    msg = run_error(capsys, "estimate", "--model", "llama-2-7b", "--tp", "3")
    assert "--tp" in msg and "3" in msg and "valid: 1, 2, 4, 8, 16, 32" in msg


def test_tp_more_than_system_gpus(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "dgx-h100", "--tp", "16")
    assert "--tp 16" in msg and "8 GPUs" in msg and "dgx-h100" in msg


def test_gpus_more_than_system_gpus(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "dgx-h100", "--gpus", "16")
    assert "--gpus" in msg and "16" in msg and "8 GPUs" in msg


def test_ep_on_dense_model(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "dgx-h100", "--tp", "2", "--ep", "2")
    assert "--ep" in msg and "llama-3-8b" in msg and "no experts" in msg


def test_ep_not_tp_on_moe(capsys):
    msg = run_error(capsys, "estimate", "--model", "mixtral-8x7b", "--hardware", "dgx-h100", "--tp", "2",
                    "--ep", "4")
    assert "--ep" in msg and "valid: 1, 2" in msg


def test_gpus_inconsistent_with_tp(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "dgx-h100", "--gpus", "4", "--tp", "2")
    assert "--gpus" in msg and "--tp" in msg and "4" in msg


def test_malformed_scenario_names_file_and_line(capsys, tmp_path):
    path = write_scenario(tmp_path, "model: llama-3-8b\nhardware: h100-sxm\n  parallel: {tp: 1\n", "bad.yaml")
    msg = run_error(capsys, "estimate", "--scenario", path)
    assert "bad.yaml" in msg and "line 3" in msg and "malformed YAML" in msg


def test_scenario_unknown_field(capsys, tmp_path):
    path = write_scenario(tmp_path, "model: llama-3-8b\nbatch_size: 4\n", "unk.yaml")
    msg = run_error(capsys, "estimate", "--scenario", path)
    assert "unk.yaml" in msg and "batch_size" in msg and "valid:" in msg and "workload" in msg


def test_scenario_unknown_section_field(capsys, tmp_path):
    path = write_scenario(tmp_path, "workload: {batch: 1, prompts: 2}\n", "unk.yaml")
    msg = run_error(capsys, "estimate", "--scenario", path)
    assert "workload" in msg and "prompts" in msg and "prompt" in msg


@pytest.mark.parametrize("text,words", [
    ("memory_utilization: high\n", ["memory_utilization", "'high'"]),
    ("memory_utilization: true\n", ["memory_utilization"]),
    ("cuda_graphs: 'no'\n", ["cuda_graphs", "'no'", "true or false"]),
    ("efficiency: calibrated\ncalibration: 5\n", ["calibration", "5"]),
    ("precision: {weight_group_size: big}\n", ["--weight-group-size", "'big'"]),
    ("workload: {batch: 1.5}\n", ["--batch", "1.5"]),
    ("parallel: {tp: two}\n", ["--tp", "'two'"]),
    ("parallel: 2\n", ["parallel", "mapping"]),
    ("gpus: many\n", ["--gpus", "'many'"]),
    ("- a\n- b\n", ["mapping"]),
])
def test_scenario_bad_values(capsys, tmp_path, text, words):
    msg = run_error(capsys, "estimate", "--scenario", write_scenario(tmp_path, text))
    for word in words:
        assert word in msg, (word, msg)


def test_missing_scenario_file(capsys, tmp_path):
    msg = run_error(capsys, "estimate", "--scenario", str(tmp_path / "nope.yaml"))
    assert "nope.yaml" in msg and "cannot read" in msg


def test_model_does_not_fit(capsys):
    msg = run_error(capsys, "estimate", "--model", "llama-3.1-405b", "--hardware", "h100-sxm")
    assert "does not fit" in msg and "over by" in msg and "llama-3.1-405b" in msg and "--tp" in msg


def test_calibrated_without_calibration(capsys):
    msg = run_error(capsys, "estimate", "--efficiency", "calibrated")
    assert "--efficiency calibrated" in msg and "--calibration" in msg


def test_fp8_on_a100(capsys):
    msg = run_error(capsys, "estimate", "--hardware", "a100-sxm-80gb", "--dtype", "fp8")
    assert "fp8" in msg and "a100-sxm-80gb" in msg and "valid:" in msg and "bf16" in msg


def test_missing_config_json(capsys, tmp_path):
    path = str(tmp_path / "nowhere" / "config.json")
    msg = run_error(capsys, "estimate", "--model", path)
    assert "--model" in msg and path in msg and "no such file" in msg


def test_attention_kv_heads_not_dividing(capsys):
    msg = run_error(capsys, "kernel", "attention", "--phase", "decode", "--batch", "1", "--heads", "32",
                    "--kv-heads", "5", "--head-dim", "128", "--seq-len", "100")
    assert "--kv-heads" in msg and "5" in msg and "32" in msg


@pytest.mark.parametrize("argv,words", [
    (["kernel", "gemm", "--m", "0", "--n", "1", "--k", "1"], ["--m", "positive"]),
    (["kernel", "gemm", "--m", "1", "--n", "1", "--k", "1", "--dtype", "fp12"], ["--dtype", "fp12", "valid:"]),
    (["kernel", "allreduce", "--bytes", "1024", "--gpus", "16", "--hardware", "dgx-h100"], ["--gpus", "16", "8"]),
    (["kernel", "allreduce", "--bytes", "-5", "--gpus", "8"], ["--bytes", "-5"]),
    (["kernel"], ["gemm", "attention", "allreduce"]),
    (["estimate", "--hardware", "nvlink-4"], ["nvlink-4", "link", "h100-sxm"]),
    (["estimate", "--memory-utilization", "1.5"], ["--memory-utilization", "1.5"]),
    (["estimate", "--efficiency", "bogus"], ["--efficiency", "bogus", "calibrated"]),
    (["estimate", "--bogus"], ["--bogus"]),
    (["show", "model", "nope"], ["'nope'"]),
    (["show", "hardware", "h100-sxn"], ["'h100-sxn'", "h100-sxm"]),
    (["list", "models", "--kind", "gpu"], ["--kind"]),
    (["estimate", "--model", "llama-2-7b", "--prompt", "4000", "--output", "200"], ["4200", "context window", "4096"]),
    (["estimate", "--hardware", "h100-sxm", "--tp", "16", "--model", "llama-2-70b"], ["16", "bare", "system"]),
    (["estimate", "--model", "llama-3.1-8b", "--batch", "99999999", "--prompt", "100000"], ["does not fit", "over by"]),
])
def test_other_bad_input(capsys, argv, words):
    msg = run_error(capsys, *argv)
    for word in words:
        assert word in msg, (word, msg)


# ------------------------------------------------------------------ as a process


def test_subprocess_estimate_json():
    proc = run_subprocess("estimate", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    d = json.loads(proc.stdout)
    assert d["ttft_s"] < d["e2e_s"]


@pytest.mark.parametrize("argv", [
    ["estimate", "--model", "lama-3-8b"],
    ["estimate", "--batch", "x"],
    ["estimate", "--model", "llama-3.1-405b", "--hardware", "h100-sxm"],
])
def test_subprocess_error_exit_code(argv):
    proc = run_subprocess(*argv)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("whatif: error: ") and proc.stderr.count("\n") == 1
