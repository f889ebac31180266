"""One paper claim: a baseline scenario, a variant with the technique, the metric, the paper's figure."""
from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..specs import units
from ..roofline.estimate import Estimate
from ..roofline.ops import ATTENTION_CLASSES
from .serving import SERVING_METRICS, deep_merged, scenario_of

FAMILY_MODULES = ("family_a", "family_b", "family_c", "family_c_merging", "family_d", "family_e", "family_f",
                  "family_f_variants", "family_g", "family_h",
                  "family_k", "family_j", "family_j_panels",
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


FACTOR = 1.3           # a band's width: the paper's figure (or its range's ends) divided and multiplied by it
BOUNDS = ("about", "at_least", "at_most")
# Words that document an input as set from the claim's own result, or a setup of assumed numbers only: a claim
# whose text says so is never scored (tests/test_claims.py).
NOT_SCORED_WORDS = ("by construction", "taken from the paper's", "follows from the paper's", "set from",
                    "derived from this", "/ the speed-up", "from that sentence", "is the claimed", "from the result",
                    "every number of the setup is assumed")


@dataclass(frozen=True)
class Assumption:
    """An input no source gives, varied over its plausible range: `name` is a technique parameter (every
    `name=` in the setup's and variant's technique specs is rewritten) unless `apply` rewrites the claim."""

    name: str
    values: tuple[float, ...]         # the plausible range, swept in order
    assumed: float                    # the value the claim runs at
    source: str                       # why this range is plausible
    apply: Callable | None = None     # (claim, value) -> claim; default: rewrite the technique parameter

    def at(self, claim: Claim, value: float) -> Claim:
        if self.apply is not None:
            return self.apply(claim, value)
        pattern = re.compile(rf"(?<=[:,]){re.escape(self.name)}=[^,]*")

        def rewrite(mapping: dict) -> dict:
            if "techniques" not in mapping:
                return mapping
            return {**mapping, "techniques": [pattern.sub(f"{self.name}={value:g}", str(t))
                                              for t in mapping["techniques"]]}
        return replace(claim, setup=rewrite(claim.setup), variant=rewrite(claim.variant))


@dataclass(frozen=True)
class Claim:
    """`setup` is a scenario as a mapping (model, hardware, gpus, workload/precision/parallel
    sections, techniques); `variant` overrides parts of it (usually `techniques`).

    The kind follows from the fields alone: `no figure` without one; `illustrative` when an input was set
    from the claim's own result (`derived`), the figure is an identity of the inputs (`identity`), or whatif's
    metric is not the paper's / every number is assumed (`illustrative`); `conditional` when an input no
    source gives (`assumed`) flips the verdict within its plausible range (the sweep shows where it
    passes); else `scored`. A scored claim's band comes from the paper alone: [figure / 1.3, figure x 1.3]
    (a range keeps its ends, "over X" is [X / 1.3, inf), a stated percentage change is banded on the change
    itself)."""

    technique: str                    # registry name(s) the claim tests, e.g. "kivi"
    paper: str                        # the paper's wording of the claim
    claimed: float | None             # the headline ratio (e.g. 3.47 for "3.47x"), None if not a speed/memory ratio
    metric: str                       # a key of METRICS (or of serving.SERVING_METRICS)
    setup: dict
    variant: dict
    why: str                          # why whatif's number differs from the paper's, or why it agrees
    band: tuple[float, float] | None = None   # an explicit band: the check the tests hold an illustrative or
                                      # figure-less claim to; on a scored claim only with band_why
    setup_note: str = ""              # what of the paper's setup could not be expressed
    illustrative: str = ""            # whatif's metric is not the paper's, or every number of the setup is assumed
    derived: str = ""                 # the input set from the claim's own result, and how
    identity: str = ""                # why the figure follows from the inputs by arithmetic alone
    assumed: Assumption | None = None  # an input no source gives, whose plausible range flips the verdict
    miss: str = ""                    # a scored claim outside its band: the mechanism the paper measured that
                                      # whatif does not model (the tests require it to stay outside)
    paper_range: tuple[float, float] | None = None   # the range the paper states ("2.35x ~ 3.47x")
    bound: str = "about"              # "at_least" ("over 85%", "more than 3x") or "at_most": the figure is a bound
    percent: bool = False             # the paper states a percentage change ("7.2% improvement", "11% of"):
                                      # the band is on the change itself, not on a near-1 ratio
    band_why: str = ""                # why an explicit band replaces the paper's on a scored claim
    baseline_engine: str = ""         # the engine the paper's baseline ran on (an --engine name; "": whatif's
                                      # default, vLLM), set from the paper's stated setup, never from the result
    system_engine: str = ""           # the engine the paper's own system ran on ("": the baseline's)
    engine_why: str = ""              # where the paper says so (required with either engine)

    def __post_init__(self):
        assert self.metric in METRICS or self.metric in SERVING_METRICS, self.metric
        assert self.bound in BOUNDS, self.bound
        assert self.engine_why or not (self.baseline_engine or self.system_engine), \
            f"a claim's engine comes from the paper's setup, with the reason: {self.paper}"
        if self.scored:
            assert self.band is None or self.band_why, f"a scored claim's band comes from the paper: {self.paper}"
        else:
            assert not self.miss, f"only a scored claim can miss: {self.paper}"

    @property
    def kind(self) -> str:
        if self.claimed is None:
            return "no figure"
        if self.derived or self.identity or self.illustrative:
            return "illustrative"
        return "conditional" if self.assumed is not None else "scored"

    @property
    def scored(self) -> bool:
        return self.kind == "scored"

    @property
    def not_scored_because(self) -> str:
        """Why an illustrative claim is not counted, as the table says it."""
        if self.derived:
            return f"input from the result: {self.derived}"
        if self.identity:
            return f"identity: {self.identity}"
        return self.illustrative

    @property
    def effective_band(self) -> tuple[float, float] | None:
        """The band the claim is judged by: from the paper's figure when scored or conditional, else the check."""
        if self.kind not in ("scored", "conditional") or self.band_why:
            return self.band
        lo, hi = self.paper_range or (self.claimed, self.claimed)
        if self.percent:
            return _percent_band(lo, self.bound), _percent_band(hi, self.bound, up=True)
        return ((0.0 if self.bound == "at_most" else lo / FACTOR),
                (math.inf if self.bound == "at_least" else hi * FACTOR))

    @property
    def band_reason(self) -> str:
        if self.kind not in ("scored", "conditional"):
            return "a check of direction, not a score" if self.band else ""
        if self.band_why:
            return self.band_why
        what = {"about": "the paper's figure", "at_least": "the paper's lower bound",
                "at_most": "the paper's upper bound"}[self.bound]
        what = (f"the paper's stated range {self.paper_range[0]:g}-{self.paper_range[1]:g}" if self.paper_range
                else what) + ("'s change" if self.percent else "")
        return what + f" /x {FACTOR:g}" + (", open-ended" if self.bound != "about" else "")


def _percent_band(ratio: float, bound: str, up: bool = False) -> float:
    """One end of a percentage claim's band: the change (ratio - 1, or 1/ratio - 1 below 1) scaled by FACTOR."""
    if (bound == "at_least" and up) or (bound == "at_most" and not up and ratio >= 1):
        return math.inf if up else 0.0
    change = ratio - 1 if ratio >= 1 else 1 / ratio - 1
    scaled = change * FACTOR if up == (ratio >= 1) else change / FACTOR
    return 1 + scaled if ratio >= 1 else 1 / (1 + scaled)


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


def metric_unit(metric: str) -> str:
    return (METRICS.get(metric) or SERVING_METRICS[metric])[1]


def evaluate(claim: Claim) -> Outcome:
    base_setup, new_setup = claim_scenarios(claim)
    if claim.metric in SERVING_METRICS:    # family J: a simulation per side (its `sim` sections merged deep)
        value, _unit, higher = SERVING_METRICS[claim.metric]
        new_sim = deep_merged(base_setup, claim.variant)
        if claim.system_engine:    # the paper's own system on its engine, as claim_scenarios sets it
            new_sim["kernel_engine"] = claim.system_engine
        base, new = value(base_setup), value(new_sim)
    else:
        value, _unit, higher = METRICS[claim.metric]
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
