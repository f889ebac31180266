"""Scheduling policies by name, and the one a SchedulerConfig picks. A new policy: its file and one line here."""
from __future__ import annotations

from ...errors import WhatifError
from .beside_decodes import WholePromptsBesideDecodes
from .chunked_prefill import ChunkedPrefill
from .decode_first import DecodeFirst
from .policy import Policy
from .prefill_first import PrefillFirst
from .static_batching import StaticBatching

POLICIES: dict[str, type[Policy]] = {
    "chunked-prefill": ChunkedPrefill,                          # vLLM V1, Sarathi-Serve
    "prefill-first": PrefillFirst,                              # vLLM V0
    "sglang-prefill-first": PrefillFirst,                       # SGLang: the same steps as vLLM V0's
    "whole-prompts-beside-decodes": WholePromptsBesideDecodes,  # TensorRT-LLM inflight batching
    "static": StaticBatching,                                   # FasterTransformer, HF generate()
    "decode-first": DecodeFirst,
}


def policy_name(cfg) -> str:
    """The policy a SchedulerConfig names: its `policy` field, else the one its batching, priority and
    chunked-prefill fields describe."""
    if cfg.policy is not None:
        return cfg.policy
    if cfg.batching == "static":
        return "static"
    if cfg.priority == "decode" and not cfg.chunked_prefill:
        return "decode-first"
    if cfg.chunked_prefill:
        return "chunked-prefill"
    return "whole-prompts-beside-decodes" if cfg.whole_prompts_beside_decodes else "prefill-first"


def make_policy(cfg) -> Policy:
    """A new policy object for one engine of `cfg`."""
    name = policy_name(cfg)
    if name not in POLICIES:
        raise WhatifError(f"engine.policy: {name!r} is not a scheduling policy; valid: {', '.join(POLICIES)}")
    return POLICIES[name]()
