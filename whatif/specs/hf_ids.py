"""Models by Hugging Face id (`--model org/name`), offline: a shipped profile, else a config.json in the local
Hugging Face cache, else a one-line error naming where it looked.

A shipped profile answers to the id of the config.json it was written from (its `source`) and to the ids in
ALIASES: releases of the same architecture (instruct, chat, base) whose config.json differs in nothing whatif
reads. The cache is the hub's layout, HF_HUB_CACHE or HF_HOME/hub or ~/.cache/huggingface/hub:
models--{org}--{name}/snapshots/{revision}/config.json (the revision refs/main names, else the newest)."""
from __future__ import annotations

import difflib
import os
import re
from functools import cache
from pathlib import Path

from ..errors import WhatifError
from .profiles import MODEL_DIR, profile_index, read_yaml

HF_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
SOURCE_ID = re.compile(r"huggingface\.co/([^/]+/[^/]+)/")

# Releases with the same architecture as a shipped profile's source (their config.json files agree on every
# field whatif reads: sizes, heads, layers, vocabulary, context); the id -> the profile name.
ALIASES = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Meta-Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "meta-llama/Meta-Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "meta-llama/Llama-3.3-70B-Instruct": "llama-3.1-70b",
    "meta-llama/Llama-3.1-405B-Instruct": "llama-3.1-405b",
    "meta-llama/Meta-Llama-3.1-8B": "llama-3.1-8b",           # the repos' names before the July 2024 rename
    "meta-llama/Meta-Llama-3.1-70B": "llama-3.1-70b",
    "meta-llama/Meta-Llama-3.1-405B": "llama-3.1-405b",
    "meta-llama/Meta-Llama-3-8B-Instruct": "llama-3-8b",
    "meta-llama/Meta-Llama-3-70B-Instruct": "llama-3-70b",
    "meta-llama/Llama-3.2-1B-Instruct": "llama-3.2-1b",
    "meta-llama/Llama-3.2-3B-Instruct": "llama-3.2-3b",
    "meta-llama/Llama-2-7b-chat-hf": "llama-2-7b",
    "meta-llama/Llama-2-13b-chat-hf": "llama-2-13b",
    "meta-llama/Llama-2-70b-chat-hf": "llama-2-70b",
    "mistralai/Mistral-7B-Instruct-v0.1": "mistral-7b",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral-8x7b",
    # the base of the v0.3 Instruct profile: keras-hub mistral_presets.py @0e1444fd counts "Mistral 7B base version
    # 0.3" at 7,248,023,552 parameters, exactly what the Instruct config.json gives
    "mistralai/Mistral-7B-v0.3": "mistral-7b-v0.3",
    "deepseek-ai/DeepSeek-V3-0324": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1": "deepseek-v3",
    "deepseek-ai/DeepSeek-R1-0528": "deepseek-v3",
    "deepseek-ai/DeepSeek-V3.1": "deepseek-v3",
    "deepseek-ai/DeepSeek-V3.1-Terminus": "deepseek-v3",
    "deepseek-ai/DeepSeek-V3.2-Exp": "deepseek-v3.2",
    "meta-llama/Llama-4-Scout-17B-16E": "llama-4-scout",
    "meta-llama/Llama-4-Maverick-17B-128E": "llama-4-maverick",
    "Qwen/Qwen3-32B-FP8": "qwen3-32b",
    "Qwen/Qwen3-30B-A3B-FP8": "qwen3-30b-a3b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "zhipuai/GLM-5": "glm-5",                  # the serving set's spelling of zai-org/GLM-5
    "zai-org/GLM-5-FP8": "glm-5",
    "moonshotai/Kimi-K2-Base": "kimi-k2",
    "moonshotai/Kimi-K2-Instruct-0905": "kimi-k2",
    "google/gemma-3-27b-pt": "gemma-3-27b",
    # keras-hub gemma_presets.py counts gemma2_27b_en and gemma2_instruct_27b_en alike (27,227,128,320)
    "google/gemma-2-27b-it": "gemma-2-27b",
    # the Thinking post-train of the same 80B-A3B base, 262,144 context as the Instruct (transformers
    # docs/source/en/model_doc/qwen3_next.md: "Two post-trained versions, ...-Instruct and ...-Thinking")
    "Qwen/Qwen3-Next-80B-A3B-Thinking": "qwen3-next-80b-a3b",
    # NVIDIA's ModelOpt checkpoints: the same architecture, quantized (their hf_quant_config.json says how)
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-v3",
    "nvidia/DeepSeek-R1-0528-NVFP4": "deepseek-v3",
    "nvidia/DeepSeek-R1-0528-FP4-V2": "deepseek-v3",   # InferenceX nvidia-master.yaml dsr1-fp4-b200-* configs
    "nvidia/DeepSeek-V3-0324-NVFP4": "deepseek-v3",
    "nvidia/DeepSeek-V3.1-NVFP4": "deepseek-v3",
    "nvidia/Llama-3.1-70B-Instruct-FP8": "llama-3.1-70b",
    "nvidia/Llama-3.3-70B-Instruct-FP8": "llama-3.1-70b",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "llama-3.1-8b",
    # session 71 D: its hf_quant_config.json read whole (checkpoint_quant/nvidia--Llama-3.1-405B-Instruct-FP8.json)
    "nvidia/Llama-3.1-405B-Instruct-FP8": "llama-3.1-405b",
    "nvidia/Qwen3-32B-NVFP4": "qwen3-32b",
    "nvidia/Qwen3-32B-FP8": "qwen3-32b",
    "nvidia/Qwen3-235B-A22B-NVFP4": "qwen3-235b-a22b",
    "nvidia/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "nvidia/Qwen3.5-397B-A17B-NVFP4": "qwen3.5-397b-a17b",
    "nvidia/MiniMax-M2.5-NVFP4": "minimax-m2.5",
    "nvidia/Kimi-K2.5-NVFP4": "kimi-k2.5",
    "nvidia/GLM-5-NVFP4": "glm-5",
    # session 70 H: hf_quant_config.json copies cited in checkpoint_quant/ (aiconfigurator's model_configs/; OME's
    # test fixture of the Llama FP4 export): the same architectures, NVFP4 with an FP8 KV cache
    "nvidia/Qwen3-30B-A3B-NVFP4": "qwen3-30b-a3b",
    "nvidia/Llama-3.1-8B-Instruct-FP4": "llama-3.1-8b",
    # printed copies of the releases' config.json (gogongxt/python scripts/models/*.md @cbff706d, reports of the
    # downloaded releases): every field whatif reads equals the profile's; the FP8 ones' sections in checkpoint_quant/
    "Qwen/Qwen3-235B-A22B-Instruct-2507": "qwen3-235b-a22b-thinking-2507",
    "Qwen/Qwen3-235B-A22B-Instruct-2507-FP8": "qwen3-235b-a22b-thinking-2507",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "qwen3-30b-a3b-thinking-2507",
    "Qwen/Qwen3-30B-A3B-Thinking-2507-FP8": "qwen3-30b-a3b-thinking-2507",
    "Qwen/Qwen3-8B-FP8": "qwen3-8b",
    "moonshotai/Kimi-K2.6": "kimi-k2.5",           # its config.json quoted whole: K2.5's shape, INT4 experts
    "zai-org/GLM-5.1": "glm-5",
    "Qwen/Qwen3.6-35B-A3B": "qwen3.5-35b-a3b",      # text and vision configs: every field whatif reads equal
    "Qwen/Qwen3.6-27B": "qwen3.5-27b",
    # session 70 M: the same reports' FP8 releases, their quantization sections parsed from the printed config
    # (benchmarks/quant_record_from_report.py) into checkpoint_quant/; every field whatif reads equals the profile's
    "zai-org/GLM-5.1-FP8": "glm-5",                 # glm_5.1_fp8.md @b5211991 (raw config.json)
    "zai-org/GLM-4.5-FP8": "glm-4.5",               # glm_4.5_fp8.md @cbff706d (compressed-tensors FP8 channel)
    "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8": "qwen3-next-80b-a3b",   # qwen3_next_80b_a3b_instruct_fp8.md @d881ab73
    "zai-org/GLM-5.2-FP8": "glm-5.2",               # session 70 Z: glm_5.2_fp8.md @b5211991 (raw config.json)
    # Profiles written from trimmed copies of the release's config.json (ai-dynamo/aiconfigurator
    # src/aiconfigurator/model_configs/, cited in each profile): the id is an alias, not the profile's source, so
    # an absent quantization_config reads "16-bit assumed" (checkpoint_quant.alias_note), not silently bf16.
    "moonshotai/Kimi-K2-Thinking": "kimi-k2-thinking",
    "zai-org/GLM-4.7-FP8": "glm-4.7",
}


def is_hf_id(name: str) -> bool:
    """`org/name` that is not a file path of whatif's (no .yaml/.json ending)."""
    return bool(HF_ID.match(name)) and not name.endswith((".yaml", ".yml", ".json"))


@cache
def shipped_spellings() -> dict[str, str]:
    """Hugging Face id as its hub spells it -> shipped profile name: each profile's source, then the aliases."""
    out = {}
    for name, path in profile_index(MODEL_DIR).items():
        match = SOURCE_ID.search(str(read_yaml(path).get("source", "")))
        if match:
            out[match.group(1)] = name
    out.update(ALIASES)
    return out


@cache
def shipped_ids() -> dict[str, str]:
    """Hugging Face id (lower case) -> shipped profile name."""
    return {k.lower(): v for k, v in shipped_spellings().items()}


def nearest_ids(hf_id: str, count: int = 3) -> list[str]:
    """Shipped ids spelled most like `hf_id` (a hint for a release whatif does not ship, e.g. a sibling size)."""
    spelled = {k.lower(): k for k in shipped_spellings()}
    return [spelled[k] for k in difflib.get_close_matches(hf_id.lower(), list(spelled), n=count, cutoff=0.6)]


def profile_id(profile: str) -> str | None:
    """The Hugging Face id a shipped profile was written from (None: no source on the hub)."""
    path = profile_index(MODEL_DIR).get(profile)
    match = SOURCE_ID.search(str(read_yaml(path).get("source", ""))) if path else None
    return match.group(1) if match else None


def hub_cache() -> Path:
    """The hub cache folder as huggingface_hub finds it: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/..."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def cached_config(hf_id: str) -> tuple[Path | None, Path]:
    """(config.json of `hf_id` in the hub cache or None, the folder looked in)."""
    folder = hub_cache() / ("models--" + hf_id.replace("/", "--"))
    snapshots = folder / "snapshots"
    try:
        ref = (folder / "refs" / "main").read_text(encoding="utf-8").strip()
    except OSError:
        ref = ""
    candidates = [snapshots / ref / "config.json"] if ref else []
    try:
        candidates += sorted(snapshots.glob("*/config.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        pass
    return next((p for p in candidates if p.is_file()), None), folder


def resolve_hf_id(hf_id: str) -> tuple[str, str]:
    """('profile', name) or ('config', path) for a Hugging Face id; an error naming where it looked."""
    name = shipped_ids().get(hf_id.lower())
    if name:
        return "profile", name
    path, folder = cached_config(hf_id)
    if path is not None:
        return "config", str(path)
    raise WhatifError(f"--model: {hf_id!r} is no shipped profile's Hugging Face id and has no config.json in the "
                      f"local cache ({folder}/snapshots/*/config.json; HF_HUB_CACHE or HF_HOME move it); download "
                      f"it (huggingface-cli download {hf_id} config.json) or pass a config.json path"
                      + (f"; shipped ids nearby: {', '.join(near)}" if (near := nearest_ids(hf_id)) else ""))


def model_heading(name: str, asked=None) -> str:
    """The model as a header names it: the id the user asked for first where it runs another profile."""
    if isinstance(asked, str) and is_hf_id(asked) and asked.lower() != name.lower():
        return f"{asked} (profile {name})"
    return name
