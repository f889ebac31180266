"""--serve-command: the launch line an engine takes for a predicted deployment, in its own flag names, and the
benchmark that would check the prediction at the same lengths and concurrency or rate."""
import json

import pytest

from tests.test_cli import run_error, run_json, run_text
from whatif.errors import WhatifError
from whatif.queries.deployment import engine_name, model_id
from whatif.queries.serve_command import Deployment, Load, Pool, bench_line, serve_lines

AGG = Deployment("vllm", "meta-llama/Llama-3.1-8B", (Pool(replicas=2, tp=4, max_num_seqs=64,
                                                            max_num_batched_tokens=8192),),
                 kv_dtype="fp8", quantization="fp8", memory_fraction=0.9, max_model_len=2304)
DISAGG = Deployment("vllm", "m/x", (Pool("prefill", 1, tp=2), Pool("decode", 3, tp=4, max_num_seqs=128)))


def flags(line: str) -> list[str]:
    return line.split()


def test_vllm_aggregated_uses_vllm_flag_names():
    (line,) = serve_lines(AGG)
    f = flags(line)
    assert f[:3] == ["vllm", "serve", "meta-llama/Llama-3.1-8B"]
    for flag, value in (("--tensor-parallel-size", "4"), ("--data-parallel-size", "2"), ("--max-num-seqs", "64"),
                        ("--max-num-batched-tokens", "8192"), ("--kv-cache-dtype", "fp8"), ("--quantization", "fp8"),
                        ("--gpu-memory-utilization", "0.9"), ("--max-model-len", "2304")):
        assert f[f.index(flag) + 1] == value, flag


@pytest.mark.parametrize("engine, expected", [
    ("sglang", ["--model-path", "--tp-size", "--dp-size", "--max-running-requests", "--chunked-prefill-size",
                "--kv-cache-dtype", "fp8_e4m3", "--mem-fraction-static", "--context-length"]),
    ("trtllm", ["trtllm-serve", "--backend", "pytorch", "--tp_size", "--max_batch_size", "--max_num_tokens",
                "--max_seq_len", "--kv_cache_free_gpu_memory_fraction", "--extra_llm_api_options"]),
])
def test_other_engines_use_their_own_flag_names(engine, expected):
    text = "\n".join(serve_lines(Deployment(**{**AGG.__dict__, "engine": engine})))
    for word in expected:
        assert word in text.split(), (engine, word)
    assert "--tensor-parallel-size" not in text
    if engine == "trtllm":   # fp8 KV goes through the options file; the fp8 checkpoint is named, not flagged
        assert 'kv_cache_config: {"dtype": "fp8"}' in text and "FP8 checkpoint" in text


def test_disaggregated_is_one_command_per_pool_and_a_frontend():
    lines = serve_lines(DISAGG)
    serves = [line for line in lines if line.startswith("vllm serve")]
    assert len(serves) == 2 and all("NixlConnector" in s for s in serves)
    assert "--tensor-parallel-size 2" in serves[0] and "--tensor-parallel-size 4" in serves[1]
    assert "--data-parallel-size" not in serves[1]      # 3 decode replicas: the note says run it three times
    assert any("decode pool: 3 replicas" in line for line in lines)
    sglang = serve_lines(Deployment(**{**DISAGG.__dict__, "engine": "sglang"}))
    assert sum("--disaggregation-mode" in line for line in sglang) == 2
    assert any(line.startswith("python -m sglang_router.launch_router --pd-disaggregation") for line in sglang)
    trt = serve_lines(Deployment(**{**DISAGG.__dict__, "engine": "trtllm"}))
    assert "trtllm-serve disaggregated -c disagg.yaml" in trt


def test_bench_runs_the_predicted_lengths_and_load():
    closed = flags(bench_line(AGG, Load(2048, 256, concurrency=64)))
    assert closed[:3] == ["vllm", "bench", "serve"]
    for flag, value in (("--random-input-len", "2048"), ("--random-output-len", "256"), ("--max-concurrency", "64"),
                        ("--num-prompts", "640")):
        assert closed[closed.index(flag) + 1] == value
    assert "--ignore-eos" in closed       # the predicted output length, not the model's own stopping
    opened = flags(bench_line(AGG, Load(512, 128, rate=4.5, requests=300, burstiness=0.25)))
    assert opened[opened.index("--request-rate") + 1] == "4.5" and opened[opened.index("--burstiness") + 1] == "0.25"
    sg = bench_line(Deployment(**{**AGG.__dict__, "engine": "sglang"}), Load(512, 128, concurrency=8))
    assert sg.startswith("python -m sglang.bench_serving --backend sglang") and "--random-range-ratio 1" in sg


def test_what_no_engine_flag_says_is_refused_or_noted():
    with pytest.raises(WhatifError, match="KV cache int4"):
        serve_lines(Deployment(**{**AGG.__dict__, "kv_dtype": "int4"}))
    with pytest.raises(WhatifError, match="not a serving engine"):
        engine_name("hf-transformers")
    assert engine_name("vllm-0.6") == "vllm"
    awq = serve_lines(Deployment(**{**AGG.__dict__, "quantization": "awq", "weight_dtype": "int4"}))
    assert "--quantization" not in awq[-1] and "AWQ checkpoint" in awq[0]


def test_model_ids():
    assert model_id("llama-3.1-8b") == "meta-llama/Llama-3.1-8B"
    assert model_id("meta-llama/Llama-3.1-8B-Instruct") == "meta-llama/Llama-3.1-8B-Instruct"
    assert model_id("/ckpt/my-model/config.json") == "/ckpt/my-model"


def test_estimate_and_simulate_print_it(capsys):
    text = run_text(capsys, "estimate", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--tp", "2", "--batch",
                    "16", "--no-ops", "--serve-command", "--technique", "kivi")
    assert "vllm serve meta-llama/Llama-3.1-8B --tensor-parallel-size 2 --max-num-seqs 16" in text
    assert "--max-concurrency 16" in text and "techniques kivi were priced as what-ifs" in text
    sim = run_json(capsys, "simulate", "--model", "llama-3.1-8b", "--hardware", "dgx-h100", "--engine", "sglang",
                   "--rate", "2", "--requests", "20", "--serve-command")
    assert sim["serve_command"]["serve"][0].startswith("python -m sglang.launch_server --model-path")
    assert "--request-rate 2" in sim["serve_command"]["bench"]
    assert "not a serving engine" in run_error(capsys, "estimate", "--model", "llama-3.1-8b", "--engine",
                                               "hf-transformers", "--serve-command")


def test_search_json_carries_commands_per_configuration(capsys):
    out = run_json(capsys, "search", "--model", "llama-3.2-1b", "--hardware", "h100-sxm", "--gpus", "2",
                   "--batches", "8,32", "--prompt", "512", "--output", "64", "--quantizations", "none,fp8",
                   "--serve-command")
    assert out["best"]["serve_command"]["serve"][-1].startswith("vllm serve meta-llama/Llama-3.2-1B")
    assert {row["quantization"] for row in out["frontier"]} <= {None, "fp8"}
    fp8 = [row for row in out["frontier"] if row["quantization"] == "fp8"]
    launches = [line for row in fp8 for line in row["serve_command"]["serve"] if line.startswith("vllm serve")]
    assert fp8 and launches and all("--quantization fp8" in line for line in launches)
    assert all("serve_command" in row for row in out["frontier"])
    json.dumps(out)


def _moe(**pool) -> list[str]:
    return serve_lines(Deployment("vllm", "Qwen/Qwen3-235B-A22B", (Pool(**pool),)))


def test_vllm_expert_flag_runs_the_priced_expert_split():
    # vLLM's experts span its DP x TP GPUs: split like TP by default, whole with --enable-expert-parallel
    # (docs.vllm.ai serving/data_parallel_deployment, expert_parallel_deployment)
    split = _moe(tp=8, ep=1, dp_attention=True)              # attention DP, experts split over the 8 GPUs (moe-tp 8)
    assert "--data-parallel-size 8" in split[-1] and "--enable-expert-parallel" not in split[-1]
    whole = _moe(tp=8, ep=8, dp_attention=True)              # experts whole: vLLM's EP 8
    assert "--enable-expert-parallel" in whole[-1] and not any(line.startswith("# vLLM cannot") for line in whole)
    assert "--enable-expert-parallel" in _moe(tp=4, ep=4)[-1]


@pytest.mark.parametrize("pool", [dict(tp=8, ep=4, dp_attention=True), dict(tp=8, ep=2)])
def test_vllm_says_when_it_cannot_run_an_ep_below_its_group(pool):
    lines = _moe(**pool)
    note = [line for line in lines if line.startswith("# vLLM cannot run the priced experts")]
    assert len(note) == 1 and f"EP {pool['ep']} x moe-tp {8 // pool['ep']}" in note[0] and "--ep_size" in note[0]


def test_a_profile_name_priced_16_bit_says_the_launched_checkpoint_is_stored_quantized():
    # the profile name prices 16-bit weights; `vllm serve openai/gpt-oss-120b` loads its MXFP4 experts
    # (checkpoint_quant/openai--gpt-oss-120b.json): the launch line says so and names the --model that prices it
    from whatif.queries.deployment import stored_format_note
    (note,) = stored_format_note("gpt-oss-120b", "openai/gpt-oss-120b", "", "bf16")
    assert "stored mxfp4" in note and "--model openai/gpt-oss-120b" in note
    assert stored_format_note("openai/gpt-oss-120b", "openai/gpt-oss-120b", "", "bf16") == ()   # an id: as stored
    assert stored_format_note("llama-3.1-8b", "meta-llama/Llama-3.1-8B", "", "bf16") == ()        # stored 16-bit
    (fp8,) = stored_format_note("deepseek-v3", "deepseek-ai/DeepSeek-V3", "fp8", "fp8")           # online fp8
    assert "stored fp8-block" in fp8
    assert stored_format_note("deepseek-v3", "deepseek-ai/DeepSeek-V3", "fp8-block", "fp8") == ()


def test_simulate_prints_the_stored_format_note(capsys):
    out = run_text(capsys, "simulate", "--model", "gpt-oss-120b", "--hardware", "dgx-b200", "--tp", "2", "--requests",
                   "4", "--prompt", "64", "--output", "8", "--no-progress", "--serve-command")
    launch = out.split("# launch (vllm)")[1]
    assert "# priced 16-bit weights (the profile gpt-oss-120b); openai/gpt-oss-120b is stored mxfp4" in launch
