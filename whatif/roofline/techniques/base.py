"""A technique: a named change to what a forward pass stores, reads and computes.

A technique is a frozen dataclass whose fields are its typed parameters (defaults from its paper).
It never returns a speedup. It changes costs through hooks, each an identity by default:

- transform_model / transform_precision: a different model (pruned, fewer KV heads, MLA) or dtypes;
- transform_kv: the KV cache's format (bits per element, full-precision residual, channels, layers);
- stored_tokens: tokens of a sequence kept in the cache (eviction); read_tokens: tokens a decode
  step reads of those (sparse selection); pair_fraction: share of causal pairs prefill computes;
- prefill_units: which prompt tokens are computed and which are attended from a cache;
- rewrite_ops / extra_ops: ops replaced or added (quantize, score, select, gather, transfer, merge);
- transform_placement: shares of weights, KV, activations kept in slower tiers (offloading);
- extra_price_per_hour: devices it adds beside the GPUs (cost per token);
- extra_weight_bytes / extra_kv_bytes: memory it adds per GPU (a draft model, its KV, draft heads), or
  takes out of HBM when negative (offloaded experts);
- for_workload: defaults that come from the workload (the prompt length), filled in by the scenario;
- notes: the assumed inputs behind the result, shown beside it (compose.py adds the warnings of a
  technique that cannot act in the scenario);
- decoders (techniques/decoding.py) also replace the decode step by a round: drafting, a verify
  pass, and the tokens it yields (speculative, multi-token and diffusion decoding).

The roofline then times the transformed graph like any other, so a technique's gain (or loss)
comes out of the same ceilings as the baseline's.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import ClassVar

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..attention import DECODE_MAX_QUERIES
from ..config import Parallelism, Precision
from ..context import KVFormat, PassContext, PrefillUnit
from ..ops import Op

FAMILIES = {
    "A": "weight quantization, compression, pruning",
    "B": "KV cache quantization and compression",
    "C": "KV eviction, selection, merging",
    "D": "sparse attention",
    "E": "prefix and shared-context reuse",
    "F": "speculative decoding",
    "G": "multi-token, parallel and diffusion-LLM decoding",
    "H": "early exit and layer skipping",
    "I": "offloading and memory tiers",
    "J": "serving and scheduling",
    "K": "attention kernels and IO",
}

# Technique names -> classes. Families fill it with @register when imported; registry.py imports
# every family (so the registry depends on the families, never the other way round).
REGISTRY: dict[str, type[Technique]] = {}


def register(cls: type[Technique]) -> type[Technique]:
    """Class decorator: make a technique available by its `name`."""
    assert cls.name and cls.name not in REGISTRY, cls.name
    REGISTRY[cls.name] = cls
    return cls


def param(default, help: str, unit: str = ""):
    """A technique parameter: its default (from the paper unless `help` says otherwise) and meaning."""
    return field(default=default, metadata={"help": help, "unit": unit})


@dataclass(frozen=True)
class Technique:
    """An optimization technique: how it rewrites the model, precision, ops or memory plan."""

    name: ClassVar[str] = ""
    family: ClassVar[str] = ""                 # a key of FAMILIES
    paper: ClassVar[str] = ""                  # title of the source paper
    slots: ClassVar[tuple[str, ...]] = ()      # mechanisms it owns: two techniques with a common slot conflict
    evicts: ClassVar[bool] = False             # keeps a per-sequence subset of tokens (breaks prefix sharing)
    shares_prefix: ClassVar[bool] = False      # stores the batch's shared prefix once
    gathers: ClassVar[tuple[str, ...]] = ()    # phases ("prefill", "decode") whose sparse attention reads tokens
                                               # selected one by one by content, gathered by index
                                               # (priced at gathered_attention.py's efficiencies)
    budget_param: ClassVar[str] = ""           # the parameter that sets how many tokens are kept or read
    needs_peak: ClassVar[str] = ""             # a tensor-core dtype the GPU must have (fp8, int8, int4)
    decodes: ClassVar[bool] = False            # a Decoder: changes the tokens a decode round yields
    per_rank: ClassVar[bool] = False           # prices its ops on one attention-DP rank's share (--dp-attention)
    # Its pass still splits into token ops and attention ops (step_price/parts.py prices it from parts): it places
    # nothing, keeps and reads every cached token and computes every causal pair; its rewrite_ops changes the
    # cache-reading attention ops as a function of the batch's groups only and every other op as a function of the
    # token count only; its extra_ops depend on the token count only. tests/test_sim_pass_parts.py checks each.
    splits: ClassVar[bool] = False

    def __post_init__(self):
        self.check_params()

    # ---- parameter checks (a bad value names the technique, the key and what is valid)
    def check_params(self) -> None:
        """Override to range-check parameters with `self.require`."""

    def require(self, ok: bool, key: str, valid: str) -> None:
        if not ok:
            raise WhatifError(f"--technique {self.name}:{key}={getattr(self, key)!r}: must be {valid}")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        """Raise a WhatifError when the technique cannot apply to this model or workload."""

    def for_workload(self, workload) -> Technique:
        """The technique with defaults that come from the workload filled in (e.g. a schedule that starts at
        the prompt's end); a scenario binds every technique to its workload before running."""
        return self

    def for_engine(self, engine: str) -> Technique:
        """The technique with defaults the serving engine chooses filled in (--engine: vllm, sglang, trtllm or a
        version profile of one); a scenario binds every technique to its engine before running."""
        return self

    # ---- cost hooks (identity unless overridden)
    def transform_model(self, model: ModelSpec) -> ModelSpec:
        return model

    def transform_precision(self, prec: Precision) -> Precision:
        return prec

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        return kv

    def kv_format_label(self, kv: str) -> str | None:
        """The cache's stored format as a header names it, when this technique quantizes its elements (`kv`: the
        dtype the rest keeps); None when it leaves them in `kv`."""
        return None

    def stored_tokens(self, n: float) -> float:
        """Tokens of a sequence of `n` kept in the cache, averaged over layers and heads."""
        return n

    def read_tokens(self, stored: float) -> float:
        """Tokens whose K/V one decode step reads, of `stored` cached ones."""
        return stored

    def pair_fraction(self, q: int, c: int) -> float:
        """Share of the causal (query, key) pairs a prefill pass of q new after c cached computes."""
        return 1.0

    def gathers_tokens(self, q: int, c: int) -> bool:
        """Whether its attention in a pass of q new tokens after c cached reads tokens gathered by index."""
        return ("decode" if q <= DECODE_MAX_QUERIES else "prefill") in self.gathers

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return units

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        return ops

    def transform_placement(self, placement):
        """Shares of weights, KV and activations the technique puts in slower tiers (placement.py)."""
        return placement

    def extra_price_per_hour(self) -> float:
        """USD per hour of devices the technique adds beside the GPUs (0: none)."""
        return 0.0

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        return []

    def extra_weight_bytes(self, model: ModelSpec, par: Parallelism, prec: Precision) -> float:
        """Bytes per GPU of weights the technique adds (draft model, draft heads), negative for weights it keeps
        out of HBM (offloaded experts); `model` as run."""
        return 0.0

    def extra_kv_bytes(self, model: ModelSpec, par: Parallelism, prec: Precision, tokens: int) -> float:
        """Bytes per GPU a sequence of `tokens` adds beside the target's KV (a draft model's cache)."""
        return 0.0

    # ---- what a user should see beside the result
    def notes(self, model: ModelSpec) -> list[str]:
        """Assumed inputs that drive the result: every parameter left at a default its help calls assumed."""
        return [f"{self.name}:{f.name}={getattr(self, f.name)} is assumed ({f.metadata['help']})"
                for f in dataclasses.fields(self)
                if getattr(self, f.name) == f.default and "assumed" in f.metadata.get("help", "")]

    # ---- description
    @classmethod
    def params(cls) -> list[dataclasses.Field]:
        return list(dataclasses.fields(cls))

    def values(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def label(self) -> str:
        """name:key=value for every parameter that differs from its default."""
        changed = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                   if getattr(self, f.name) != f.default]
        return self.name + (":" + ",".join(changed) if changed else "")

    @classmethod
    def mechanism(cls) -> str:
        return " ".join((cls.__doc__ or "").split())


def replace_ops(ops: list[Op], roles, build) -> list[Op]:
    """`ops` with every op whose role is in `roles` replaced by `build(op)` (an Op or a list)."""
    out: list[Op] = []
    for op in ops:
        if op.role in roles:
            new = build(op)
            out.extend(new if isinstance(new, list) else [new])
        else:
            out.append(op)
    return out
