"""Issue 38's acceptance as a new user meets it: a quantized checkpoint searched as it is stored, a real hub cache
(config.json a link into blobs/, hf_quant_config.json beside it), `--modes both`, and an experts-only scheme on a
dense model refused rather than ignored."""
import json
import shutil
from pathlib import Path

import pytest

from tests.test_cli import run_error, run_text
from whatif import api
from whatif.config_search.checkpoint_scheme import CHECKPOINT, default_quantizations
from whatif.specs.models import load_model

REF = Path("/work/shared/reference/model_configs")
needs_ref = pytest.mark.skipif(not REF.is_dir(), reason="the shared reference model configs are not here")


def _search(model, **kw):
    return api.search(model, "h200-sxm", gpus=8, tp=[8], batches=[8], modes=["aggregated"], **kw)


def test_a_quantized_checkpoint_is_searched_as_stored_not_as_bf16():
    assert default_quantizations("deepseek-ai/DeepSeek-R1", None, ()) == (CHECKPOINT,)
    assert default_quantizations("deepseek-v3", None, ()) is None        # a profile name is no checkpoint
    assert default_quantizations("deepseek-ai/DeepSeek-R1", ["bf16"], ()) is None   # the user's dtypes win
    stored = _search("deepseek-ai/DeepSeek-R1")
    assert stored.best is not None and "qcheckpoint" in stored.best.replica.label()
    assert "fp8-block" in stored.text()                                 # the header says what it ran
    assert _search("deepseek-ai/DeepSeek-R1", weight_dtypes=["bf16"]).best is None   # 1.3 TB: does not fit


def test_an_experts_only_checkpoint_is_searched_with_its_expert_scheme(capsys):
    out = run_text(capsys, "search", "--model", "openai/gpt-oss-120b", "--hardware", "h100-sxm", "--gpus", "1",
                   "--batches", "8", "--modes", "both", "--no-progress", "--serve-command")
    assert "expert quantization mxfp4" in out and "0 meet the SLOs" not in out
    assert "vllm serve openai/gpt-oss-120b" in out and "--quantization" not in out.split("vllm serve")[1]


def _hub(tmp_path, hf_id, files):
    """The layout huggingface-cli download leaves: snapshots/REV/<name> links into blobs/."""
    folder = tmp_path / "hub" / ("models--" + hf_id.replace("/", "--"))
    (folder / "blobs").mkdir(parents=True)
    (folder / "snapshots" / "abc").mkdir(parents=True)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("abc")
    for i, (name, src) in enumerate(files.items()):
        shutil.copy(src, folder / "blobs" / f"{i}deadbeef")
        (folder / "snapshots" / "abc" / name).symlink_to(f"../../blobs/{i}deadbeef")


@needs_ref
def test_a_real_hub_cache_with_links_reads_the_config_and_the_quant_file_beside_it(tmp_path, monkeypatch, capsys):
    src = "nvidia--Qwen3-235B-A22B-NVFP4"
    _hub(tmp_path, "acme/q235-fp4", {"config.json": REF / f"{src}_config.json",
                                     "hf_quant_config.json": REF / f"{src}_hf_quant_config.json"})
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert load_model("acme/q235-fp4").name == "acme/q235-fp4"   # not the snapshot's or the blob's name
    head = run_text(capsys, "estimate", "--model", "acme/q235-fp4", "--hardware", "b200", "--tp", "8",
                    "--no-ops").splitlines()[0]
    assert head.startswith("acme/q235-fp4 on 8x b200") and "nvfp4" in head and "hf_quant_config.json" in head


def test_an_experts_only_scheme_on_a_dense_model_is_refused(capsys):
    err = run_error(capsys, "estimate", "--model", "llama-3.1-8b", "--quantization", "nvfp4",
                    "--quantize-experts-only")
    assert "no routed experts" in err and "--quantization nvfp4" in err
    err = run_error(capsys, "estimate", "--model", "llama-3.1-8b", "--expert-quantization", "mxfp4")
    assert "no routed experts" in err
    out = run_text(capsys, "estimate", "--model", "qwen3-235b-a22b", "--hardware", "b200", "--tp", "8", "--no-ops",
                   "--quantization", "nvfp4", "--quantize-experts-only")
    assert "experts nvfp4" in out.splitlines()[0]


def test_search_modes_both_is_what_its_help_says(capsys, tmp_path):
    run_text(capsys, "search", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "2",
             "--batches", "8", "--modes", "both", "--no-progress", "--csv", str(tmp_path / "c.csv"))
    rows = (tmp_path / "c.csv").read_text()
    assert "\naggregated," in rows and "\ndisaggregated," in rows
    assert "--modes" in run_error(capsys, "search", "--model", "llama-3.1-8b", "--hardware", "h100-sxm",
                                  "--gpus", "1", "--modes", "all")


@pytest.mark.parametrize("model", ["Qwen/Qwen3.5-35B-A3B", "nvidia/Nemotron-H-56B-Base-8K"])
def test_kv_techniques_on_a_hybrid_model_say_they_skip_the_recurrent_layers(capsys, model):
    out = run_text(capsys, "estimate", "--model", model, "--hardware", "h200-sxm", "--tp", "2", "--no-ops",
                   "--technique", "kivi")
    assert "recurrent layers keep their state as is (no KV cache to act on)" in out


def test_a_search_yaml_may_say_modes_both(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(json.dumps({"model": "llama-3.1-8b", "hardware": "h100-sxm", "gpus": 2, "batches": [8],
                                "modes": "both"}))
    run_text(capsys, "search", "--scenario", str(path), "--no-progress", "--csv", str(tmp_path / "c.csv"))
    assert "\ndisaggregated," in (tmp_path / "c.csv").read_text()


def test_a_tp_that_cannot_split_the_experts_names_the_flag_given(capsys):
    err = run_error(capsys, "estimate", "--model", "deepseek-ai/DeepSeek-R1", "--hardware", "h200-sxm", "--tp", "3")
    assert err.startswith("whatif: error: --tp: 3 does not divide the expert intermediate size")


def test_every_split_a_tp_cannot_make_lists_the_valid_sizes(capsys):
    # session 70 DD: the expert, KV-head, intermediate and recurrent-head refusals named no valid size
    from dataclasses import replace

    from whatif.errors import WhatifError
    from whatif.roofline.graph import check_parallelism
    from whatif.roofline.config import Parallelism
    err = run_error(capsys, "estimate", "--model", "kimi-linear-48b-a3b", "--hardware", "h100-sxm", "--tp", "3")
    assert err.endswith("does not divide the expert intermediate size 1024 of kimi-linear-48b-a3b; valid: "
                        "1, 2, 4, 8, 16, 32, 64")
    gemma = load_model("gemma-4-31b")   # 4 global KV heads; a TP above 4 must be a multiple of them
    with pytest.raises(WhatifError, match=r"neither divides nor is a multiple of the 3 full-attention layers' KV "
                                          r"heads of gemma-4-31b; valid: 1, 3, 6, 9, 12, "):
        check_parallelism(replace(gemma, global_kv_heads=3), Parallelism(tp=4))
    with pytest.raises(WhatifError, match=r"does not divide intermediate_size 21000; valid: 1, 2, 3, 4, 5, 6, 7, 8,"):
        check_parallelism(replace(gemma, intermediate_size=21000), Parallelism(tp=16))


# Issue 38's models as a user names them (session 69 J's audit): (Hugging Face id, the profile it resolves to,
# hardware, tp). Each estimates by id with the checkpoint's own precision and fits; the architectures: qwen3_moe,
# gpt_oss, minimax_m2, glm4_moe, glm_moe_dsa (GLM-5), kimi_k2, kimi_k25, llama4, deepseek_v3, deepseek_v32, qwen3_next,
# qwen3_5 / qwen3_5_moe, nemotron_h, gemma3, llama, qwen3, mistral, mixtral.
ISSUE_IDS = [
    ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b", "h100-sxm", 2),
    ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b", "h200-sxm", 8),
    ("openai/gpt-oss-20b", "gpt-oss-20b", "h100-sxm", 1), ("openai/gpt-oss-120b", "gpt-oss-120b", "h100-sxm", 2),
    ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5", "h200-sxm", 8), ("zai-org/GLM-4.5", "glm-4.5", "h200-sxm", 8),
    ("zai-org/GLM-5-FP8", "glm-5", "b200", 8),
    ("moonshotai/Kimi-K2-Instruct", "kimi-k2", "b200", 8), ("moonshotai/Kimi-K2.5", "kimi-k2.5", "b200", 8),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout", "h100-sxm", 4),
    ("meta-llama/Llama-4-Maverick-17B-128E-Instruct", "llama-4-maverick", "b200", 8),
    ("deepseek-ai/DeepSeek-R1", "deepseek-v3", "h200-sxm", 8),
    ("deepseek-ai/DeepSeek-V3.2", "deepseek-v3.2", "b200", 8),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b", "h100-sxm", 4),
    ("Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b", "b200", 8), ("Qwen/Qwen3.5-27B", "qwen3.5-27b", "h100-sxm", 2),
    ("nvidia/Nemotron-H-56B-Base-8K", "nemotron-h-56b", "h100-sxm", 4),
    ("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "nemotron-3-nano-30b-a3b", "h100-sxm", 2),
    ("google/gemma-3-27b-it", "gemma-3-27b", "h100-sxm", 2),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.1-70b", "h100-sxm", 4),
    ("Qwen/Qwen3-32B", "qwen3-32b", "h100-sxm", 2),
    ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b", "h100-sxm", 1),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b", "h100-sxm", 2),
    ("mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b", "h200-sxm", 4),
]


@pytest.mark.parametrize("hf_id, profile, hardware, tp", ISSUE_IDS, ids=[i[0] for i in ISSUE_IDS])
def test_each_model_the_issue_names_estimates_by_its_hugging_face_id(capsys, monkeypatch, tmp_path, hf_id, profile,
                                                                       hardware, tp):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))     # an empty cache: the shipped profile answers
    out = run_text(capsys, "estimate", "--model", hf_id, "--hardware", hardware, "--tp", str(tp), "--batch", "8",
                   "--prompt", "1024", "--output", "64", "--no-ops")
    assert out.startswith(f"{hf_id} (profile {profile}) on ")   # the id asked for, then the profile it ran
    assert "\nfits" in out and out.split("\nfits")[1].split()[0] == "yes"


# Session 69 M: sibling releases shipped from copies of their config.json (each profile cites its copy). Where the
# copy is trimmed (no quantization_config) the id is an alias and says 16-bit is assumed, unless its quantization
# section ships (session 69 Q: Kimi-K2-Thinking's INT4 experts, so its 1T parameters fit 8x B200 with no flag).
# (id, profile, hardware, tp, extra flags, assumed)
SIBLING_IDS = [
    ("moonshotai/Kimi-K2-Thinking", "kimi-k2-thinking", "b200", 8, (), False),
    ("zai-org/GLM-4.7-FP8", "glm-4.7", "h200-sxm", 8, (), True),
    ("Qwen/Qwen3-14B", "qwen3-14b", "h100-sxm", 1, (), False),
    ("google/gemma-2-9b-it", "gemma-2-9b", "h100-sxm", 1, (), False),
    ("google/gemma-3-12b-it", "gemma-3-12b", "h100-sxm", 1, (), False),
    ("Qwen/Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b-thinking-2507", "h200-sxm", 8, (), False),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-30b-a3b-thinking-2507", "h100-sxm", 2, (), False),
    ("mistralai/Mixtral-8x22B-Instruct-v0.1", "mixtral-8x22b-instruct", "h200-sxm", 4, (), False),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3", "h100-sxm", 1, (), False),
    ("mistralai/Mistral-7B-v0.3", "mistral-7b-v0.3", "h100-sxm", 1, (), True),   # an alias: its config.json unread
    ("nvidia/Nemotron-H-8B-Base-8K", "nemotron-h-8b", "h100-sxm", 1, (), False),
    ("google/gemma-2-2b-it", "gemma-2-2b", "h100-sxm", 1, (), False),      # session 70 H: OME's fixture copies
    ("google/gemma-3-1b-it", "gemma-3-1b", "h100-sxm", 1, (), False),
    ("google/gemma-2-27b", "gemma-2-27b", "h100-sxm", 2, (), False),      # mlc-llm's preset copy
    ("google/gemma-2-27b-it", "gemma-2-27b", "h100-sxm", 2, (), True),    # an alias: its config.json unread
    # printed copies of the 2507 Instruct releases' configs (gogongxt/python): bf16, no section shipped
    ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b-thinking-2507", "h200-sxm", 8, (), True),
    ("Qwen/Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-thinking-2507", "h100-sxm", 2, (), True),
    ("MiniMaxAI/MiniMax-M2.7", "minimax-m2.7", "h200-sxm", 4, (), False),   # its FP8 section shipped
    ("zai-org/GLM-5.1", "glm-5", "b200", 8, ("--quantization", "fp8-block"), False),   # bf16 744B: a flag
    ("Qwen/Qwen3.6-35B-A3B", "qwen3.5-35b-a3b", "h100-sxm", 2, (), True),
    ("Qwen/Qwen3.6-27B", "qwen3.5-27b", "h100-sxm", 2, (), True),
    ("zai-org/GLM-4.7-Flash", "glm-4.7-flash", "h100-sxm", 1, (), False),   # session 70 M: glm4_moe_lite
    ("google/gemma-4-31B-it", "gemma-4-31b", "h100-sxm", 2, (), False),   # session 70 S: gemma4, printed config
    ("zai-org/GLM-5.2", "glm-5.2", "b200", 8, ("--quantization", "fp8-block"), False),   # IndexShare; bf16: a flag
    ("moonshotai/Kimi-Linear-48B-A3B-Instruct", "kimi-linear-48b-a3b", "h100-sxm", 2, (), False),   # session 70 Z
]


@pytest.mark.parametrize("hf_id, profile, hardware, tp, extra, assumed", SIBLING_IDS,
                         ids=[i[0] for i in SIBLING_IDS])
def test_each_sibling_release_estimates_by_its_hugging_face_id(capsys, monkeypatch, tmp_path, hf_id, profile,
                                                                hardware, tp, extra, assumed):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))     # an empty cache: the shipped profile answers
    out = run_text(capsys, "estimate", "--model", hf_id, "--hardware", hardware, "--tp", str(tp), "--batch", "8",
                   "--prompt", "1024", "--output", "64", "--no-ops", *extra)
    assert out.startswith(f"{hf_id} (profile {profile}) on ")   # the id asked for, then the profile it ran
    assert "\nfits" in out and out.split("\nfits")[1].split()[0] == "yes"
    assert ("16-bit assumed" in out.splitlines()[0]) == assumed   # an alias without its quantization_config


# Session 69 Q: aliased quantized releases whose quantization section ships (checkpoint_quant/, each record citing the
# copy it was taken from): estimate by id, empty hub cache, runs the release's own precision and fits.
# (id, hardware, tp, what the header says)
SHIPPED_ALIAS_QUANT = [
    ("moonshotai/Kimi-K2-Thinking", "b200", 8, "experts w4a16"),
    ("nvidia/Qwen3-32B-NVFP4", "b200", 1, "quantization nvfp4"),
    ("nvidia/DeepSeek-V3-0324-NVFP4", "b200", 8, "quantization nvfp4"),
    ("nvidia/Qwen3-30B-A3B-NVFP4", "b200", 1, "quantization nvfp4"),       # session 70 H
    ("nvidia/Llama-3.1-8B-Instruct-FP4", "b200", 1, "quantization nvfp4"),
    ("deepseek-ai/DeepSeek-V3.1", "h200-sxm", 8, "quantization fp8-block"),   # printed copy, DeepSeek's config
    ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "h200-sxm", 8, "quantization fp8-block"),
    ("Qwen/Qwen3-30B-A3B-Thinking-2507-FP8", "h100-sxm", 1, "quantization fp8-block"),
    ("Qwen/Qwen3-8B-FP8", "h100-sxm", 1, "quantization fp8-block"),
    ("moonshotai/Kimi-K2.6", "b200", 8, "experts w4a16"),
    ("MiniMaxAI/MiniMax-M2.7", "h200-sxm", 4, "quantization fp8-block"),
    ("zai-org/GLM-5.1-FP8", "h200-sxm", 8, "quantization fp8-block"),       # session 70 M
    ("zai-org/GLM-4.5-FP8", "h200-sxm", 8, "quantization fp8 "),
    ("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8", "h100-sxm", 2, "quantization fp8-block"),
    ("zai-org/GLM-5.2-FP8", "h200-sxm", 8, "quantization fp8-block"),       # session 70 Z
    ("nvidia/Llama-3.1-405B-Instruct-FP8", "h100-sxm", 8, "quantization fp8 "),   # session 71 D
]


@pytest.mark.parametrize("hf_id, hardware, tp, scheme", SHIPPED_ALIAS_QUANT, ids=[i[0] for i in SHIPPED_ALIAS_QUANT])
def test_an_aliased_quantized_release_runs_its_shipped_precision(capsys, monkeypatch, tmp_path, hf_id, hardware, tp,
                                                                  scheme):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))     # an empty cache: the shipped record answers
    out = run_text(capsys, "estimate", "--model", hf_id, "--hardware", hardware, "--tp", str(tp), "--batch", "8",
                   "--prompt", "1024", "--output", "64", "--no-ops")
    head = out.splitlines()[0]
    assert scheme in head and f"from {hf_id} " in head and "assumed" not in head
    assert "\nfits" in out and out.split("\nfits")[1].split()[0] == "yes"


@needs_ref
def test_an_alias_of_a_quantized_release_reads_its_config_in_the_hub_cache(tmp_path, monkeypatch, capsys):
    """deepseek-ai/DeepSeek-V3.1-Terminus resolves to the deepseek-v3 profile by alias, with no shipped copy of its
    FP8 quantization_config (session 70 H shipped V3.1's, so the example moved to Terminus): the hub cache's
    config.json supplies it; without one the header says 16-bit is assumed."""
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    terminus = "deepseek-ai/DeepSeek-V3.1-Terminus"
    # b300: the bf16 weights (169 GB a GPU at tp 8) no longer fit a B200 at the CUDA runtime total (session 70 P)
    args = ("estimate", "--model", terminus, "--hardware", "b300", "--tp", "8", "--no-ops")
    head = run_text(capsys, *args).splitlines()[0]
    assert "weights bf16" in head and "DeepSeek-V3.1-Terminus's quantization_config is neither shipped" in head
    assert "--quantization sets it" in head
    out = run_text(capsys, "search", "--model", terminus, "--hardware", "h200-sxm", "--gpus", "8",
                   "--tp", "8", "--batches", "8", "--modes", "aggregated", "--no-progress")
    assert "DeepSeek-V3.1-Terminus's quantization_config is neither shipped" in out and "--quantizations sets" in out
    _hub(tmp_path, terminus, {"config.json": REF / "deepseek-ai--DeepSeek-V3_config.json"})
    head = run_text(capsys, *args).splitlines()[0]
    assert "quantization fp8-block" in head and "assumed" not in head
    assert "16-bit assumed" not in run_text(capsys, "estimate", "--model", "Qwen/Qwen3.5-397B-A17B", "--hardware",
                                            "b200", "--tp", "8", "--no-ops").splitlines()[0]   # the profile's own id
    flagged = run_text(capsys, *args, "--quantization", "fp8-block").splitlines()[0]
    assert "quantization fp8-block" in flagged and "assumed" not in flagged


@needs_ref
def test_an_alias_whose_hub_cache_config_is_16_bit_says_nothing_is_assumed(tmp_path, monkeypatch, capsys):
    """A hub-cache config.json without a quantization_config is the release's own answer (16-bit): neither the
    estimate nor the search header says its quantization is missing from the hub cache."""
    import json
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    config = json.loads((REF / "deepseek-ai--DeepSeek-V3_config.json").read_text())
    config.pop("quantization_config")
    plain = tmp_path / "plain_config.json"
    plain.write_text(json.dumps(config))
    terminus = "deepseek-ai/DeepSeek-V3.1-Terminus"
    _hub(tmp_path, terminus, {"config.json": plain})
    head = run_text(capsys, "estimate", "--model", terminus, "--hardware", "b300", "--tp", "8",
                    "--no-ops").splitlines()[0]
    assert "weights bf16" in head and "assumed" not in head and "neither shipped" not in head
    out = run_text(capsys, "search", "--model", terminus, "--hardware", "h200-sxm", "--gpus", "8",
                   "--tp", "8", "--batches", "8", "--modes", "aggregated", "--no-progress")
    assert "neither shipped" not in out
