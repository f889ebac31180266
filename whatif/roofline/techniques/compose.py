"""A set of techniques applied together: checked for conflicts, folded hook by hook in order."""
from __future__ import annotations

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from ...errors import WhatifError
from ...specs.models import ModelSpec
from ..config import Precision
from ..ops import Op
from ..context import KVFormat, PassContext, PrefillUnit

if TYPE_CHECKING:   # (imported by the techniques themselves: an empty set, a plain run's, needs none)
    from .base import Technique


KV_HOOKS = ("transform_kv", "stored_tokens", "read_tokens")


def acts_on_kv(t: Technique) -> bool:
    """A technique that changes the stored cache: its format, the tokens kept, or the tokens a step reads."""
    return not t.decodes and any(overrides(t, hook) for hook in KV_HOOKS)


# slot words of techniques that act on a KV cache or the attention reading it
KV_SLOT_WORDS = ("kv", "attention", "prefill sparsity", "decode selection", "decode kernel", "key channels",
                 "prefix", "cache append")


@dataclass(frozen=True)
class TechniqueSet:
    """The techniques of a scenario, checked for conflicts, applied in order."""

    items: tuple[Technique, ...] = ()

    def __post_init__(self):
        seen: dict[str, Technique] = {}
        for t in self.items:
            for slot in t.slots:
                if slot in seen:
                    other = seen[slot]
                    if other.name == t.name:
                        raise WhatifError(f"--technique {t.name}: given twice; keep one")
                    raise WhatifError(f"--technique {t.name}: cannot be combined with {other.name}: both set "
                                      f"the {slot}; keep one")
                seen[slot] = t
        decoder = self.decoder
        if decoder is not None and not getattr(decoder, "keeps_kv", True):
            kv_user = next((t for t in self.items if acts_on_kv(t)), None)
            if kv_user is not None:
                raise WhatifError(f"--technique {kv_user.name}: acts on the KV cache, but {decoder.label()} keeps "
                                  f"none (every step recomputes K/V inside the pass); valid: a cache, e.g. "
                                  f"{decoder.name}:cache=dual, or drop {kv_user.name}")
        evictor = next((t for t in self.items if t.evicts), None)
        sharer = next((t for t in self.items if t.shares_prefix), None)
        if evictor and sharer:
            raise WhatifError(f"--technique {evictor.name}: cannot be combined with {sharer.name}: per-sequence "
                              f"eviction keeps different tokens in each sequence, so the shared prefix could "
                              f"no longer be stored or read once")

    def __bool__(self) -> bool:
        return bool(self.items)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.items]

    def label(self) -> str:
        return "+".join(t.label() for t in self.items) or "baseline"

    def gathers(self, q: int, c: int) -> bool:
        """Whether a technique's sparse attention in a pass of q new after c cached gathers its tokens by index."""
        return any(t.gathers_tokens(q, c) for t in self.items)

    @property
    def shares_prefix(self) -> bool:
        return any(t.shares_prefix for t in self.items)

    def for_workload(self, workload) -> TechniqueSet:
        """Each technique with its workload-dependent defaults filled in (Technique.for_workload)."""
        return TechniqueSet(tuple(t.for_workload(workload) for t in self.items))

    def for_engine(self, engine: str) -> TechniqueSet:
        """Each technique with its engine-chosen defaults filled in (Technique.for_engine)."""
        return TechniqueSet(tuple(t.for_engine(engine) for t in self.items))

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        """Each technique is checked against the model as the techniques before it left it."""
        for t in self.items:
            t.check(model, shared_prefix)
            model = t.transform_model(model)

    def model(self, model: ModelSpec) -> ModelSpec:
        return reduce(lambda m, t: t.transform_model(m), self.items, model)

    def precision(self, prec: Precision) -> Precision:
        return reduce(lambda p, t: t.transform_precision(p), self.items, prec)

    def kv(self, kv: KVFormat) -> KVFormat:
        return reduce(lambda k, t: t.transform_kv(k), self.items, kv)

    def kv_label(self, kv: str) -> str:
        """The KV format a header names: the last technique that quantizes the cache's elements, else `kv`."""
        return next((label for t in reversed(self.items) if (label := t.kv_format_label(kv))), kv)

    def stored(self, n: float) -> float:
        return reduce(lambda x, t: min(x, t.stored_tokens(x)), self.items, float(n))

    def read(self, stored: float) -> float:
        return reduce(lambda x, t: min(x, t.read_tokens(x)), self.items, float(stored))

    def pair_fraction(self, q: int, c: int) -> float:
        return reduce(lambda f, t: f * t.pair_fraction(q, c), self.items, 1.0)

    def prefill_units(self, units: list[PrefillUnit], shared_prefix: int) -> list[PrefillUnit]:
        return reduce(lambda u, t: t.prefill_units(u, shared_prefix), self.items, units)

    def placement(self, placement):
        return reduce(lambda p, t: t.transform_placement(p), self.items, placement)

    def extra_price_per_hour(self) -> tuple[float, str]:
        priced = [(t.extra_price_per_hour(), t.name) for t in self.items if t.extra_price_per_hour()]
        return sum(p for p, _ in priced), ", ".join(f"{n}'s devices" for _, n in priced)

    @property
    def decoder(self):
        """The technique that changes the decode round (families F, G), or None."""
        return next((t for t in self.items if t.decodes), None)

    def extra_weight_bytes(self, model: ModelSpec, par, prec: Precision) -> float:
        return sum(t.extra_weight_bytes(model, par, prec) for t in self.items)

    def extra_kv_bytes(self, model: ModelSpec, par, prec: Precision, tokens: int) -> float:
        return sum(t.extra_kv_bytes(model, par, prec, tokens) for t in self.items)

    def ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        for t in self.items:
            ops = t.rewrite_ops(ops, ctx)
        for t in self.items:
            ops = ops + t.extra_ops(ctx)
        return ops


    def notes(self, model: ModelSpec) -> list[str]:
        """The assumed inputs behind the result (an acceptance rate, an automatically chosen draft), and what a
        KV technique skips: the recurrent layers of a hybrid model, which keep a state instead of a cache."""
        out = [n for t in self.items for n in t.notes(model)]
        recurrent = sum(s.recurrent for s in model.layers)
        if recurrent:
            for t in self.items:
                if any(any(w in slot for w in KV_SLOT_WORDS) for slot in t.slots):
                    attention = sum(s.attention for s in model.layers)
                    out.append(f"{t.name} acts on the {attention} attention layers of {model.name}; "
                               f"its {recurrent} recurrent layers keep their state as is (no KV cache to act on)")
        return out

    def warnings(self, model: ModelSpec, prompt: int, output: int) -> list[str]:
        """Techniques that cannot act in this scenario: a budget at or above what the cache holds at the
        final context, so nothing is evicted or skipped."""
        context = prompt + output
        out = []
        for t in self.items:
            if t.decodes:
                continue
            if overrides(t, "stored_tokens") and t.stored_tokens(float(context)) >= context:
                out.append(f"{t.label()} changes nothing here: it keeps every token of the {context}-token context "
                           f"(its budget is at or above it); try a longer context or a smaller budget")
            if overrides(t, "read_tokens"):
                stored = self.stored(context)
                if t.read_tokens(stored) >= stored:
                    by = [o.label() for o in self.items if o is not t and overrides(o, "stored_tokens")
                          and o.stored_tokens(float(context)) < context]
                    held = (f"the {stored:,.0f} tokens {' + '.join(by)} keeps" if by
                            else f"all {stored:,.0f} cached tokens")
                    out.append(f"{t.label()} changes nothing here: its budget reads {held} at the final context; "
                               f"give it a smaller budget")
        return out


def overrides(t: Technique, hook: str) -> bool:
    from .base import Technique
    return getattr(type(t), hook) is not getattr(Technique, hook)


NONE = TechniqueSet()
