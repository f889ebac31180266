"""`search` and `estimate` price one KV dtype for a checkpoint that declares its own (ModelOpt kv_cache_quant_algo,
compressed-tensors kv_cache_scheme): the checkpoint's, where the engine's --kv-cache-dtype auto reads it, unless
--kv-dtypes says otherwise. Session 75 D's walk: nvidia/GLM-5-NVFP4 on 4 B300 at TP4, estimate max batch 506 (fp8
KV), search 279 (bf16 KV by default) (session 75 K)."""
from __future__ import annotations

import re

import pytest

from whatif import api
from whatif.cli import main
from whatif.config_search.checkpoint_scheme import default_kv_dtypes

GLM = "nvidia/GLM-5-NVFP4"   # hf_quant_config.json: quant_algo NVFP4, kv_cache_quant_algo FP8


@pytest.mark.parametrize("model,engine,given,expected", [
    (GLM, "vllm", None, ("fp8",)),
    (GLM, "sglang", None, ("fp8",)),
    (GLM, "trtllm", None, ("fp8",)),
    (GLM, "vllm-0.6", None, ("bf16",)),     # V0 stores the model's dtype under auto (its profile says so)
    (GLM, "vllm", ["bf16"], ("bf16",)),     # --kv-dtypes wins
    ("llama-3-8b", "vllm", None, ("bf16",)),   # a profile name is no checkpoint
])
def test_the_default_kv_dtype_is_estimates(model, engine, given, expected):
    assert tuple(default_kv_dtypes(model, engine, given)) == expected


def _search(**kw):
    return api.search(GLM, "hgx-b300", gpus=4, tp=[4], ep=[1], dp_attention=[1], batches=[16, 512], prompt=4096,
                      output=1024, modes=["aggregated"], jobs=1, **kw)


def _max_batch(result) -> int:
    reason = next(r["reason"] for r in result.rows() if r["batch"] == 512)
    return int(re.search(r"max batch (\d+)", reason).group(1))


def test_search_and_estimate_agree_on_the_max_batch():
    est = api.estimate(GLM, "hgx-b300", tp=4, batch=16, prompt=4096, output=1024)
    res = _search()
    assert est.precision.kv == "fp8" and {r["kv_dtype"] for r in res.rows()} == {"fp8"}
    assert _max_batch(res) == est.max_batch == 506
    assert _max_batch(_search(kv_dtypes=["bf16"])) == 279   # asked for: 16-bit KV, as before


def test_both_outputs_name_the_kv_dtype_and_its_source(capsys):
    assert main(["search", "--model", GLM, "--hardware", "hgx-b300", "--gpus", "4", "--tp", "4", "--batches", "16",
                 "--prompt", "4096", "--output", "1024", "--modes", "aggregated", "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "KV fp8: the checkpoint's (from nvidia/GLM-5-NVFP4 hf_quant_config.json" in out and "kvfp8]" in out
    assert main(["estimate", "--model", GLM, "--hardware", "hgx-b300", "--tp", "4", "--no-ops"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "KV fp8" in head and "hf_quant_config.json" in head


def test_an_engine_that_does_not_read_it_says_so(capsys):
    assert main(["search", "--model", GLM, "--hardware", "hgx-b300", "--gpus", "4", "--tp", "4", "--batches", "16",
                 "--prompt", "4096", "--output", "1024", "--modes", "aggregated", "--jobs", "1", "--no-progress",
                 "--engine", "vllm-0.6"]) == 0
    out = capsys.readouterr().out
    assert "KV bf16: the checkpoint declares fp8" in out and "does not read" in out and "kvbf16]" in out
