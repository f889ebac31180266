"""--model org/name: a shipped profile by its Hugging Face id, else the local hub cache's config.json (offline,
HF_HUB_CACHE / HF_HOME honoured), else one line naming where it looked."""
import json

import pytest

from tests.test_cli import run_error
from whatif.errors import WhatifError
from whatif.specs.hf_ids import ALIASES, profile_id, shipped_ids
from whatif.specs.models import load_model
from whatif.specs.profiles import MODEL_DIR, profile_index

CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024, "num_hidden_layers": 4,
          "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 2816, "vocab_size": 32000,
          "max_position_embeddings": 4096, "hidden_act": "silu", "rms_norm_eps": 1e-5, "tie_word_embeddings": False}


def test_shipped_profiles_answer_to_their_source_id_and_aliases():
    assert load_model("meta-llama/Llama-3.1-8B").name == "llama-3.1-8b"
    assert load_model("meta-llama/Llama-3.1-8B-Instruct").name == "llama-3.1-8b"
    assert load_model("META-LLAMA/llama-3.1-8b-instruct").name == "llama-3.1-8b"   # ids match case-insensitively
    assert load_model("deepseek-ai/DeepSeek-R1").name == "deepseek-v3"
    assert profile_id("llama-3.1-8b") == "meta-llama/Llama-3.1-8B"
    assert set(ALIASES.values()) <= set(profile_index(MODEL_DIR))
    assert len(shipped_ids()) >= len(profile_index(MODEL_DIR))


def _cache(root, hf_id, revision="abc123", config=CONFIG):
    folder = root / ("models--" + hf_id.replace("/", "--"))
    snap = folder / "snapshots" / revision
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(config))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text(revision)


@pytest.mark.parametrize("env", ["HF_HUB_CACHE", "HF_HOME"])
def test_other_ids_come_from_the_local_hub_cache(tmp_path, monkeypatch, env):
    hub = tmp_path / "hub" if env == "HF_HOME" else tmp_path
    _cache(hub, "acme/tiny-llama")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv(env, str(tmp_path))
    spec = load_model("acme/tiny-llama")
    assert (spec.hidden_size, spec.num_layers, spec.num_kv_heads) == (1024, 4, 2)


def test_a_checkpoint_folder_is_read_as_the_engines_take_it(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    assert load_model(str(tmp_path)).hidden_size == 1024


def test_an_unknown_id_says_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(WhatifError, match="models--acme--missing/snapshots"):
        load_model("acme/missing")
    err = run_error(capsys, "estimate", "--model", "acme/missing", "--hardware", "h100-sxm")
    assert str(tmp_path) in err and "HF_HOME" in err
    assert "no such file" in run_error(capsys, "estimate", "--model", "./nothing/here.yaml")


def test_an_unshipped_sibling_release_names_the_shipped_ids_nearby(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    err = run_error(capsys, "estimate", "--model", "MiniMaxAI/MiniMax-M2.1", "--hardware", "h100-sxm")
    nearby = err.split("shipped ids nearby: ")[1]      # (M2.7 and M2.5 ship since session 70 H)
    assert err.count("\n") <= 1 and "MiniMaxAI/MiniMax-M2.5" in nearby and "MiniMaxAI/MiniMax-M2.7" in nearby
    assert "nearby" not in run_error(capsys, "estimate", "--model", "acme/missing", "--hardware", "h100-sxm")


def test_a_bare_release_name_points_to_its_hugging_face_id(capsys):
    # `--model deepseek-r1` is no profile; the release is deepseek-ai/DeepSeek-R1 (the deepseek-v3 profile, FP8)
    err = run_error(capsys, "estimate", "--model", "deepseek-r1", "--hardware", "hgx-h200", "--tp", "8")
    assert "did you mean 'deepseek-ai/DeepSeek-R1': the deepseek-v3 profile" in err and err.count("\n") <= 1
    assert "'nvidia/DeepSeek-R1-NVFP4'" in run_error(capsys, "estimate", "--model", "DeepSeek-R1-NVFP4")
    assert "did you mean 'llama-3-8b'?" in run_error(capsys, "estimate", "--model", "llama-3-80b")   # (unchanged)
