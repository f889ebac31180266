"""Typed access to one Hugging Face config.json mapping (HFConfig) and the fields every RoPE decoder shares.

A config may hold values a strict JSON reader refuses (Nemotron-H's `time_step_limit: [0.0, Infinity]`): the file
is parsed with non-finite numbers allowed, and a non-finite or odd value is refused only in a field whatif reads,
with the file and the field named."""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import WhatifError, shown


class HFConfig:
    """One config.json mapping (or its nested text config); every error names the file and the field."""

    def __init__(self, raw: dict, path: Path, model_type: str, prefix: str = ""):
        self.raw = raw
        self.path = path
        self.model_type = model_type
        self.prefix = prefix            # "text_config." for a nested text config

    def _name(self, key: str) -> str:
        return self.prefix + key

    def _check_int(self, key: str, value, minimum: int) -> int:
        if isinstance(value, float) and not math.isfinite(value):
            said = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            raise WhatifError(f"{self.path}: field '{self._name(key)}': {said} is not a finite number; expected an "
                              f"integer")
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            want = "a positive integer" if minimum >= 1 else "an integer >= 0"
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected {want}")
        return value

    def req(self, key: str) -> int:
        """A required positive integer field."""
        if self.raw.get(key) is None:
            raise WhatifError(f"{self.path}: missing field '{self._name(key)}' (required for model_type "
                              f"'{self.model_type}'; expected a positive integer)")
        return self._check_int(key, self.raw[key], 1)

    def opt_int(self, key: str, default: int, minimum: int = 1) -> int:
        """An optional integer field; absent or null -> default."""
        value = self.raw.get(key)
        return default if value is None else self._check_int(key, value, minimum)

    def opt_float(self, key: str, default: float = 0.0) -> float:
        """An optional finite number >= 0; absent or null -> default."""
        value = self.raw.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected a finite "
                              f"number >= 0")
        return float(value)

    def flag(self, key: str, default: bool) -> bool:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected true or false")
        return value

    def int_list(self, key: str, minimum: int = 0) -> list[int]:
        """An optional list of integers (absent or null: empty)."""
        value = self.raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected a list of integers")
        return [self._check_int(key, v, minimum) for v in value]

    def str_list(self, key: str, valid: dict) -> list[str] | None:
        """An optional list of names from `valid` (name -> what it means here); None when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v in valid for v in value):
            bad = value if not isinstance(value, list) else next(
                (v for v in value if not isinstance(v, str) or v not in valid), value)
            raise WhatifError(f"{self.path}: field '{self._name(key)}' holds {shown(bad)}; valid entries: "
                              f"{', '.join(valid)}")
        return [valid[v] for v in value]

    def text(self, key: str, default: str = "") -> str:
        value = self.raw.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected a string")
        return value

    def sub(self, key: str) -> HFConfig | None:
        """A nested config mapping (text_config, vision_config) or None when absent."""
        value = self.raw.get(key)
        if value is None:
            return None
        if not isinstance(value, dict):
            raise WhatifError(f"{self.path}: field '{self._name(key)}' is {shown(value)}; expected a mapping")
        return HFConfig(value, self.path, self.model_type, f"{self.prefix}{key}.")

    def unsupported(self, key: str, why: str):
        return WhatifError(f"{self.path}: field '{self._name(key)}' = {shown(self.raw.get(key))} is not supported: "
                           f"{why}")


def decoder(c: HFConfig, *, tie_default: bool = False, head_dim: int | None = None) -> dict:
    """The fields every RoPE decoder shares (llama-style names)."""
    hidden, heads = c.req("hidden_size"), c.req("num_attention_heads")
    return dict(
        hidden_size=hidden,
        num_layers=c.req("num_hidden_layers"),
        num_heads=heads,
        num_kv_heads=c.opt_int("num_key_value_heads", heads),
        head_dim=head_dim if head_dim is not None else c.opt_int("head_dim", hidden // heads),
        intermediate_size=c.req("intermediate_size"),
        vocab_size=c.req("vocab_size"),
        max_position_embeddings=c.req("max_position_embeddings"),
        mlp="gated", norm="rmsnorm", position="rope",
        tie_word_embeddings=c.flag("tie_word_embeddings", tie_default),
    )


def vision_tower_params(depth: int, hidden: int, intermediate: int, patch_elements: int, positions: int,
                        merged: int, out_hidden: int) -> int:
    """A ViT encoder (SigLIP, MoonViT, Qwen's): per block q/k/v/o with biases, a two-matrix MLP with biases and two
    LayerNorms; a patch embedding (with bias), a position table, a final LayerNorm, and a projector merging
    `merged` patches into the decoder's width (norm, two linears)."""
    block = 4 * hidden * hidden + 4 * hidden + 2 * hidden * intermediate + intermediate + hidden + 4 * hidden
    merge_in = hidden * merged
    projector = 2 * hidden + merge_in * merge_in + merge_in + merge_in * out_hidden + out_hidden
    return depth * block + patch_elements * hidden + hidden + positions * hidden + 2 * hidden + projector
