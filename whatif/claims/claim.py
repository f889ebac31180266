"""One paper claim: a baseline scenario, a variant with the technique, the metric, the paper's figure."""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field

from ..specs import units
from ..roofline.estimate import Estimate
from ..roofline.ops import ATTENTION_CLASSES
from ..scenario import Scenario, build_scenario

FAMILY_MODULES = ("family_a", "family_b", "family_c", "family_d", "family_e", "family_f", "family_g", "family_h",
                  "family_k",
                  "family_i_tiers", "family_i_weights", "family_i_kv")


def _attention_s(e: Estimate, phase: str) -> float:
    if phase == "decode":
        passes = [(e.decode, 1)] if e.decode else []
    else:
        passes = list(e.prefill)
    return sum(t.total_s * n for p, n in passes for t in p.op_times if t.op.op_class in ATTENTION_CLASSES)


# metric -> (value of an estimate, unit, True when higher is better). A claim's "gain" is always
# oriented so that > 1 means the technique improved the metric, as papers report "N x".
METRICS = {
    "throughput_at_max_batch": (lambda e: e.max_batch_throughput_tok_s, "tok/s", True),
    "throughput": (lambda e: e.throughput_tok_s, "tok/s", True),
    "decode_throughput": (lambda e: e.decode_throughput_tok_s, "tok/s", True),
    "max_batch": (lambda e: float(e.max_batch), "sequences", True),
    "max_context": (lambda e: float(e.max_context), "tokens", True),
    "tpot": (lambda e: e.tpot_s, "s", False),
    "ttft": (lambda e: e.ttft_s, "s", False),
    "e2e": (lambda e: e.e2e_s, "s", False),
    "kv_cache_bytes": (lambda e: e.memory.kv_cache_bytes, "B", False),
    "kv_bytes_per_token": (lambda e: e.memory.kv_bytes_per_token, "B", False),
    "weights_bytes": (lambda e: e.memory.weights_bytes, "B", False),
    "memory_total": (lambda e: e.memory.total_bytes, "B", False),
    "cost_per_mtok": (lambda e: e.cost_per_mtok or float("nan"), "USD", False),
    "cost_per_mtok_at_max_batch": (lambda e: e.max_batch_cost_per_mtok or float("nan"), "USD", False),
    "hbm_bytes": (lambda e: e.memory.hbm_bytes, "B", False),
    "decode_attention_s": (lambda e: _attention_s(e, "decode"), "s", False),
    "prefill_attention_s": (lambda e: _attention_s(e, "prefill"), "s", False),
}


def metric_text(unit: str, v: float | None) -> str:
    """A metric's value with its unit, as the reproduction table and the report show it."""
    if v is None or not math.isfinite(v):
        return "-"
    if unit == "s":
        return units.seconds(v)
    if unit == "B":
        return units.nbytes(v)
    if unit == "tok/s":
        return f"{v:,.0f} tok/s" if v >= 10 else f"{v:.3g} tok/s"
    if unit == "USD":
        return f"{v:.3g} USD"
    return f"{v:,.0f} {unit}"


TOLERANCE = 0.3        # a scored claim's band: the paper's figure (or the ends of its stated range) +-30%
BOUNDS = ("about", "at_least", "at_most")


@dataclass(frozen=True)
class Claim:
    """`setup` is a scenario as a mapping (model, hardware, gpus, workload/precision/parallel
    sections, techniques); `variant` overrides parts of it (usually `techniques`).

    A claim is *scored* when it has a figure and none of its inputs encodes that figure (physical
    parameters, published model shapes and settings, the baseline the paper names); its band is set
    from the paper alone: the figure (or the ends of the range it states) +-30%, open-ended where
    the paper states a bound. A claim whose input was set from its own result (a budget equal to the
    claimed ratio, steps = output / the speed-up), or whose whatif metric is not the one the paper's
    figure measures, is *illustrative*: shown, never counted."""

    technique: str                    # registry name(s) the claim tests, e.g. "kivi"
    paper: str                        # the paper's wording of the claim
    claimed: float | None             # the headline ratio (e.g. 3.47 for "3.47x"), None if not a speed/memory ratio
    metric: str                       # a key of METRICS
    setup: dict
    variant: dict
    why: str                          # why whatif's number differs from the paper's, or why it agrees
    band: tuple[float, float] | None = None   # an explicit band: the check the tests hold an illustrative or
                                      # figure-less claim to; on a scored claim only with band_why (it replaces
                                      # the +-30% band)
    setup_note: str = ""              # what of the paper's setup could not be expressed
    illustrative: str = ""            # non-empty: which input encodes the result, or why whatif's metric is
                                      # not the paper's (never counted)
    miss: str = ""                    # a scored claim outside its band: the mechanism the paper measured that
                                      # whatif does not model (the tests require it to stay outside, so a fix
                                      # must remove it)
    paper_range: tuple[float, float] | None = None   # the range the paper states ("2.35x ~ 3.47x")
    bound: str = "about"              # "at_least" ("over 85%", "more than 3x") or "at_most": the figure is a bound
    band_why: str = ""                # why an explicit band replaces the +-30% one on a scored claim
    baseline_engine: str = ""         # the engine the paper's baseline ran on (an --engine name; "": whatif's
                                      # default, vLLM), set from the paper's stated setup, never from the result
    system_engine: str = ""           # the engine the paper's own system ran on ("": the baseline's)
    engine_why: str = ""              # where the paper says so (required with either engine)

    def __post_init__(self):
        assert self.metric in METRICS, self.metric
        assert self.bound in BOUNDS, self.bound
        assert self.engine_why or not (self.baseline_engine or self.system_engine), \
            f"a claim's engine comes from the paper's setup, with the reason: {self.paper}"
        if self.scored:
            assert self.band is None or self.band_why, f"a scored claim's band comes from the paper: {self.paper}"
        else:
            assert not self.miss, f"only a scored claim can miss: {self.paper}"

    @property
    def scored(self) -> bool:
        return self.claimed is not None and not self.illustrative

    @property
    def kind(self) -> str:
        return "scored" if self.scored else "illustrative" if self.illustrative else "no figure"

    @property
    def effective_band(self) -> tuple[float, float] | None:
        """The band the claim is judged by: a scored claim's from the paper's figure, else the explicit check."""
        if not self.scored or self.band_why:
            return self.band
        lo, hi = self.paper_range or (self.claimed, self.claimed)
        return ((0.0 if self.bound == "at_most" else lo * (1 - TOLERANCE)),
                (math.inf if self.bound == "at_least" else hi * (1 + TOLERANCE)))

    @property
    def band_reason(self) -> str:
        if not self.scored:
            return "a check of direction, not a score" if self.band else ""
        if self.band_why:
            return self.band_why
        what = {"about": "the paper's figure", "at_least": "the paper's lower bound",
                "at_most": "the paper's upper bound"}[self.bound]
        return (f"the paper's stated range {self.paper_range[0]:g}-{self.paper_range[1]:g}" if self.paper_range
                else what) + f" +-{TOLERANCE:.0%}" + (", open-ended" if self.bound != "about" else "")


@dataclass(frozen=True)
class Outcome:
    claim: Claim
    baseline: float
    predicted: float
    gain: float                       # oriented: > 1 means better with the technique
    extra: dict = field(default_factory=dict)

    @property
    def ratio_to_claim(self) -> float | None:
        return self.gain / self.claim.claimed if self.claim.claimed else None

    @property
    def in_band(self) -> bool | None:
        if self.claim.effective_band is None:
            return None
        lo, hi = self.claim.effective_band
        return lo <= self.gain <= hi


def scenario_of(mapping: dict) -> Scenario:
    sections = {k: dict(mapping[k]) for k in ("workload", "precision", "parallel") if k in mapping}
    top = {k: v for k, v in mapping.items() if k not in sections}
    return build_scenario(top, sections)


def merged(setup: dict, variant: dict) -> dict:
    out = {k: (dict(v) if isinstance(v, dict) else v) for k, v in setup.items()}
    for key, value in variant.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def claim_scenarios(claim: Claim) -> tuple[dict, dict]:
    """The baseline's and the technique's scenario mappings, each on the engine the paper ran it on."""
    base = {**claim.setup, **({"kernel_engine": claim.baseline_engine} if claim.baseline_engine else {})}
    new = merged(base, claim.variant)
    if claim.system_engine:
        new["kernel_engine"] = claim.system_engine
    return base, new


def evaluate(claim: Claim) -> Outcome:
    value, _unit, higher = METRICS[claim.metric]
    base_setup, new_setup = claim_scenarios(claim)
    base = value(scenario_of(base_setup).run())
    new = value(scenario_of(new_setup).run())
    if higher:
        gain = new / base if base else float("inf")
    else:
        gain = base / new if new else float("inf")
    return Outcome(claim, base, new, gain)


def all_claims() -> list[Claim]:
    out: list[Claim] = []
    package = __name__.rpartition(".")[0]
    for name in FAMILY_MODULES:
        out += importlib.import_module(f"{package}.{name}").CLAIMS
    return out
