"""How a model is run: parallelism, precisions and the batch of one forward pass."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cache

from ..specs.dtypes import ACTIVATION_DTYPES, BYTES, KV_DTYPES, WEIGHT_DTYPES, check_dtype, stored_bytes
from ..specs.quantization import MODULE_CLASSES, UNQUANTIZED, Scheme, module_table, scheme
from ..errors import WhatifError, positive_int

MOE_A2A = ("nccl", "deepep", "gather")   # Parallelism.moe_a2a: what carries attention-DP MoE dispatch / combine


@dataclass(frozen=True)
class Parallelism:
    """A replica's layout as the engines configure it (TensorRT-LLM's Mapping, SGLang, vLLM).

    `tp` GPUs form one pipeline stage. The routed experts are split `ep` x `moe_tp` ways over them
    (ep x moe_tp = tp: each GPU holds num_experts/ep experts with 1/moe_tp of each one's columns;
    TensorRT-LLM's moe_ep_size x moe_tp_size, vLLM's --enable-expert-parallel is ep = tp). Attention
    runs on `attention_dp` data-parallel ranks of tp/attention_dp GPUs each (SGLang --enable-dp-attention
    --dp N, TensorRT-LLM enable_attention_dp); `dp_attention` is the shorthand attention_dp = tp. Every
    non-expert weight (attention, dense MLPs, shared experts, embedding, LM head) is split over one
    rank's attention_tp GPUs.
    """

    tp: int = 1   # GPUs of one pipeline stage: the engines' TP group
    pp: int = 1   # pipeline parallel: layers split into pp stages
    ep: int = 1   # expert parallel: the routed experts split over ep GPUs of the TP group
    dp_attention: bool = False   # attention data parallel on (the shorthand: attention_dp = tp)
    moe_tp: int = 0          # each expert's columns split over moe_tp GPUs; 0: tp / ep
    attention_dp: int = 1    # attention data-parallel ranks; 1: off (tp under the dp_attention shorthand)
    redundant_experts: int = 0   # EPLB's extra expert replicas over the EP group (expert_load.py)
    expert_skew: float = 0.0     # routing skew: Zipf exponent of the experts' popularity (0: uniform, assumed)
    # under attention DP, whole experts (moe_tp 1) still reached by an all-gather / reduce-scatter, not an all-to-all:
    # the engine's choice (forward_pass.moe_comm_parallel), set only on the layout the graph is built from
    moe_gather: bool = field(default=False, compare=False, repr=False)
    # that gather and its combine run as all-reduces in a step with a prefill (the engine's dp_prefill_gather:
    # SGLang), set with moe_gather on the graph's layout only
    prefill_gather_all_reduce: bool = field(default=False, compare=False, repr=False)
    # how attention-DP MoE tokens reach whole experts: "nccl" (an NCCL all-to-all, the default), "deepep" (DeepEP's
    # kernels, SGLang --moe-a2a-backend deepep --deepep-mode auto: normal in prefill, low-latency in decode) or
    # "gather" (SGLang --moe-a2a-backend none: communicator.py's MLP ScatterMode.FULL all-gathers every rank's tokens
    # and reduce-scatters the outputs, as gathers_experts)
    moe_a2a: str = "nccl"
    # the values filled in from a default, so that dataclasses.replace(par, tp=...) fills them again
    _defaulted: tuple = field(default=(), compare=False, repr=False)

    def __post_init__(self):
        for key in ("tp", "pp", "ep"):
            positive_int(getattr(self, key), f"--{key}")
        r, skew = self.redundant_experts, self.expert_skew
        if self.moe_a2a not in MOE_A2A:
            raise WhatifError(f"--moe-a2a: {self.moe_a2a!r}; valid: {', '.join(MOE_A2A)}")
        if isinstance(r, bool) or not isinstance(r, int) or not 0 <= r <= 1_000_000:
            raise WhatifError(f"--redundant-experts: {r!r}; valid: a whole number of extra expert replicas >= 0")
        if isinstance(skew, bool) or not isinstance(skew, (int, float)) or not 0 <= skew <= 4:
            raise WhatifError(f"--expert-skew: {skew!r}; valid: a Zipf exponent from 0 (uniform routing) to 4")
        moe_tp, adp, dp_attention = self.moe_tp, self.attention_dp, self.dp_attention
        if isinstance(dp_attention, int) and not isinstance(dp_attention, bool) and dp_attention >= 1 and adp == 1:
            adp, dp_attention = dp_attention, dp_attention > 1   # dp_attention: N (a file or API) gives the ranks
        if not isinstance(dp_attention, bool):
            raise WhatifError(f"--dp-attention: {dp_attention!r}; valid: true or false, or a count of ranks")
        defaulted = dict(self._defaulted)
        if moe_tp == 0 or defaulted.get("moe_tp") == moe_tp:
            # 0 while ep does not divide tp: --gpus may still fill tp in (Scenario.parallelism); graph.py checks
            moe_tp = self.tp // self.ep if self.tp % self.ep == 0 else 0
            defaulted["moe_tp"] = moe_tp
        else:
            defaulted.pop("moe_tp", None)
            positive_int(moe_tp, "--moe-tp")
            if self.ep * moe_tp != self.tp:
                valid = ", ".join(f"{d}" for d in range(1, self.tp + 1) if self.tp % d == 0 and d <= 64)
                raise WhatifError(f"--moe-tp: {moe_tp} with --ep {self.ep} splits experts over {self.ep * moe_tp} "
                                  f"GPUs, not the --tp {self.tp} of the TP group; valid: ep x moe-tp = {self.tp} "
                                  f"(moe-tp one of {valid})")
        if adp == 1 and dp_attention or defaulted.get("attention_dp") == adp:
            adp = self.tp if dp_attention else 1
            defaulted["attention_dp"] = adp
        else:
            defaulted.pop("attention_dp", None)
            positive_int(adp, "--dp-attention")
            if self.tp % adp:
                valid = ", ".join(str(d) for d in range(1, self.tp + 1) if self.tp % d == 0 and d <= 64)
                raise WhatifError(f"--dp-attention: {adp} ranks do not divide --tp {self.tp}; valid: {valid} "
                                  f"(attention TP per rank = tp / ranks)")
        object.__setattr__(self, "moe_tp", moe_tp)
        object.__setattr__(self, "attention_dp", adp)
        object.__setattr__(self, "dp_attention", dp_attention or adp > 1)
        object.__setattr__(self, "_defaulted", tuple(sorted(defaulted.items())))

    @property
    def attention_tp(self) -> int:
        """GPUs each attention layer (and every other non-expert weight) is split over: tp / attention_dp."""
        return self.tp // self.attention_dp

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def dense(self) -> Parallelism:
        """How everything but the routed experts is split: over one attention rank's attention_tp GPUs
        (tp without attention DP; under full DP attention not at all: each GPU holds attention, dense MLPs,
        shared experts, embedding and LM head whole)."""
        return Parallelism(tp=self.attention_tp, pp=self.pp) if self.dp_attention else self

    @property
    def gathers_experts(self) -> bool:
        """Under attention DP with each expert split (moe_tp > 1), the ranks' tokens are all-gathered before
        the MoE and its partial outputs reduce-scattered back (TensorRT-LLM, SGLang without DeepEP); with
        whole experts (moe_tp = 1) tokens go to their experts by an all-to-all (DeepEP dispatch / combine),
        unless the engine gathers them there too (`moe_gather`: TensorRT-LLM without MNNVL; moe_a2a "gather": SGLang
        without an all-to-all backend)."""
        return self.dp_attention and (self.moe_tp > 1 or self.moe_gather or self.moe_a2a == "gather")

    def expert_load(self, num_experts: int) -> float:
        """The busiest EP rank's token-expert assignments over the mean rank's (1: uniform, no EPLB)."""
        from .expert_load import busiest_rank_factor   # (numpy, which building the CLI parser avoids)
        return busiest_rank_factor(num_experts, self.ep, float(self.expert_skew), self.redundant_experts)

    def label(self) -> str:
        """tp=.. pp=.. ep=.. as a header says it, with moe_tp and attention DP where they say more."""
        text = f"tp={self.tp} pp={self.pp} ep={self.ep}"
        if self.ep > 1 and self.moe_tp > 1:
            text += f" moe_tp={self.moe_tp}"
        if self.dp_attention:
            text += ", DP attention" if self.attention_tp == 1 else \
                f", DP attention: {self.attention_dp} ranks of attention TP {self.attention_tp}"
        return text


@dataclass(frozen=True)
class Precision:
    """The dtypes a scenario runs: weights, activations, KV cache (and the scheme that set them)."""

    weight: str = "bf16"
    activation: str = "bf16"
    kv: str = "bf16"
    weight_group_size: int = 128   # quantization group of int8/int4 weights (one fp16 scale each)
    quantization: str = ""         # a named scheme (specs/quantization.py: fp8, nvfp4, awq, ...); '' : the dtypes
    # Per module class (specs/quantization.MODULE_CLASSES): the routed experts' scheme (--expert-quantization;
    # 'none': 16-bit) and a table of other classes' schemes (a checkpoint's ignore list: {attention: none}).
    # The fields above are every other linear layer's; the LM head stays 16-bit as the engines load it.
    expert_quantization: str = ""
    modules: tuple = ()            # ((module class, scheme or 'none'), ...); a mapping is accepted
    source: str = ""               # where the precision came from when not the flags (a checkpoint's config)

    def __post_init__(self):
        check_dtype(self.weight, "--weight-dtype", WEIGHT_DTYPES)
        check_dtype(self.activation, "--dtype", ACTIVATION_DTYPES)
        check_dtype(self.kv, "--kv-dtype", KV_DTYPES)
        positive_int(self.weight_group_size, "--weight-group-size")
        if self.expert_quantization and self.expert_quantization != UNQUANTIZED:
            scheme(self.expert_quantization, "--expert-quantization")
        object.__setattr__(self, "modules", module_table(self.modules))
        if self.quantization:
            s = scheme(self.quantization)
            if (self.weight, self.activation) != (s.weight, s.activation):
                raise WhatifError(f"--quantization {s.name}: stores weights {s.weight} with activations "
                                  f"{s.activation}, not weights {self.weight} with activations {self.activation}; "
                                  "give --quantization or --weight-dtype/--dtype (or a weight-format technique), "
                                  "not both")

    @staticmethod
    def of_scheme(name: str, kv: str = "bf16", weight_group_size: int = 128) -> Precision:
        """The precision a named quantization scheme runs (its weights and activations), with this KV dtype."""
        s = scheme(name)
        return Precision(s.weight, s.activation, kv, weight_group_size, s.name)

    @property
    def scheme(self) -> Scheme | None:
        return scheme(self.quantization) if self.quantization else None

    @property
    def per_module(self) -> bool:
        """Some module class runs another precision than the linear layers' (experts, an ignore list)."""
        return bool(self.expert_quantization or self.modules)

    def module(self, cls: str) -> Precision:
        """The plain precision the weight GEMMs of module class `cls` run (this one when nothing differs)."""
        return _module_precision(self, cls) if self.per_module else self

    def module_weight_bytes(self, cls: str) -> float:
        return self.module(cls).weight_bytes

    def schemes(self) -> list[tuple[Scheme, str]]:
        """(scheme, ' (module classes)' or '') for each named scheme the weight GEMMs run, for the provenance line."""
        if not self.per_module:
            return [(self.scheme, "")] if self.scheme is not None else []
        by: dict[str, list[str]] = {}
        for cls in MODULE_CLASSES:
            if self.module(cls).quantization:
                by.setdefault(self.module(cls).quantization, []).append(cls.replace("_", " "))
        return [(scheme(name), f" ({', '.join(classes)})") for name, classes in by.items()]

    def module_dict(self) -> dict:
        """{module class: its scheme, else its weight dtype} (JSON output)."""
        return {cls: self.module(cls).quantization or self.module(cls).weight for cls in MODULE_CLASSES}

    @property
    def gemm_activation(self) -> str:
        """The dtype a weight GEMM's input is quantized to (a W8A8 technique's, else the activations')."""
        return self.activation

    def label(self, kv: str | None = None) -> str:
        """Weights / activations / KV as a header says them, with the scheme's name and format when named,
        then each module class that differs and where the precision came from. `kv`: the KV format a technique
        stores (TechniqueSet.kv_label), else the KV dtype."""
        dtypes = f"weights {self.weight}, activations {self.gemm_activation}, KV {kv or self.kv}"
        text = f"quantization {self.quantization} ({self.scheme.label}): {dtypes}" if self.quantization else dtypes
        if self.per_module:
            text += "; " + "; ".join(f"{cls.replace('_', ' ')} {_module_label(self.module(cls))}"
                                     for cls in MODULE_CLASSES if self.module(cls) != self.module("_rest"))
            text += "; LM head 16-bit"
        return text + (f" (from {self.source})" if self.source else "")

    @property
    def weight_bytes(self) -> float:
        """Bytes per weight including group scales (one 2-byte scale per group for int formats; NVFP4's
        own block scales; a named scheme's own scales and zero points)."""
        if self.quantization:
            return BYTES[self.weight] + self.scheme.scale_bytes_per_weight(self.weight_group_size)
        scale = 2.0 / self.weight_group_size if self.weight in ("int8", "int4") else 0.0
        return stored_bytes(self.weight) + scale

    @property
    def embedding_bytes(self) -> float:
        """Embeddings and LM head stay 16-bit when the linear layers are quantized (AWQ, GPTQ, FP8)."""
        return 2.0 if self.weight in ("fp8", "int8", "int4", "fp4") else BYTES[self.weight]

    @property
    def lm_head_dtype(self) -> str:
        """Tensor-core dtype of the LM head GEMM: 16-bit whenever its weights are kept 16-bit."""
        if self.embedding_bytes == 2.0:
            return self.activation if self.activation in ("bf16", "fp16") else "bf16"
        return self.weight

    @property
    def act_bytes(self) -> float:
        """Bytes of a GEMM's activation operand (fp8/int8 activations are quantized only there)."""
        return BYTES[self.activation]

    @property
    def attention_dtype(self) -> str:
        """The dtype attention kernels run: the activations', except under fp4 activations (NVFP4 quantizes only
        the GEMMs' inputs), where attention runs fp8 over an fp8 KV cache and 16-bit otherwise (TensorRT-LLM's
        attention op: mFP8ContextMLA on SM90/100/103/120 and mFP8GenerationMLA whenever the cache is fp8,
        mFP8ContextFMHA for an fp4-output or fp8-cache context; no engine's attention reads fp4 Q/K/V)."""
        if self.activation != "fp4":
            return self.activation
        return "fp8" if self.kv == "fp8" else "bf16"

    @property
    def hidden_bytes(self) -> float:
        """Bytes per element of the hidden states between GEMMs (residual stream, norms, TP all-reduces,
        embeddings): 16-bit when the GEMM activations are 8-bit or narrower. FP8 serving quantizes each
        GEMM's input from the 16-bit stream (vLLM's fp8 W8A8: scaled_fp8_quant per linear layer; TensorRT-LLM:
        the all-reduce sums bf16 hidden states and a fused RMSNorm+quant feeds the next GEMM)."""
        return 2.0 if BYTES[self.activation] < 2.0 else BYTES[self.activation]

    @property
    def kv_bytes(self) -> float:
        return stored_bytes(self.kv)


def _module_label(p: Precision) -> str:
    return (f"{p.quantization} (weights {p.weight}, activations {p.activation})" if p.quantization
            else f"weights {p.weight}, activations {p.activation}")


@cache
def _module_precision(prec: Precision, cls: str) -> Precision:
    """A module class's own precision: the table's scheme, the experts' scheme, else the linear layers'."""
    name = dict(prec.modules).get(cls) or (prec.expert_quantization if cls == "experts" else "")
    if not name:
        return replace(prec, expert_quantization="", modules=(), source="")
    if name == UNQUANTIZED:
        sixteen = prec.activation if prec.activation in ("bf16", "fp16") else "bf16"
        return Precision(sixteen, sixteen, prec.kv, prec.weight_group_size)
    return Precision.of_scheme(name, prec.kv, prec.weight_group_size)


@dataclass(frozen=True)
class ForwardBatch:
    """The sequences of one forward pass: groups of (new tokens, cached tokens, sequences).

    Prefill of P tokens: (P, 0, B). Decode step: (1, n, B). A prefill chunk after c tokens: (chunk, c, 1).
    A verify pass (speculative decoding, multi-token steps) of q tokens after n: (q, n, B) with
    logits at every new token (`logits` rows), not only at each sequence's last.
    """

    groups: tuple[tuple[int, int, int], ...]
    logits: int = 0    # rows the LM head computes; 0: one per sequence (its last token)
    # Attention-DP: the priced rank's own batch when the ranks' batches are known (the simulator's per-rank
    # schedulers); None: the group's sequences split evenly (`split`). The routed experts see all `groups`.
    local: ForwardBatch | None = None

    @staticmethod
    def prefill(batch: int, prompt: int, cached: int = 0) -> ForwardBatch:
        return ForwardBatch(((prompt, cached, batch),))

    @staticmethod
    def decode(batch: int, context: int) -> ForwardBatch:
        return ForwardBatch(((1, context, batch),))

    @staticmethod
    def verify_pass(batch: int, tokens: int, context: int) -> ForwardBatch:
        """`tokens` new tokens per sequence after `context` cached ones, each needing logits."""
        return ForwardBatch(((tokens, context, batch),), logits=tokens * batch)

    def split(self, parts: int) -> ForwardBatch:
        """The share of the busiest of `parts` GPUs that each take whole sequences (DP attention):
        ceil(n / parts) sequences of every group; with one sequence, one GPU does all of it. A batch that
        names its rank's own (`local`) is that."""
        if self.local is not None:
            return self.local
        if parts == 1:
            return self
        local = ForwardBatch(tuple((q, c, -(-n // parts)) for q, c, n in self.groups))
        if self.verify:
            return ForwardBatch(local.groups, logits=local.tokens)
        return ForwardBatch(local.groups, logits=-(-self.logits // parts))

    def times(self, parts: int) -> ForwardBatch:
        """The pass of `parts` GPUs that each run this batch on their own sequences (inverse of split)."""
        if parts == 1:
            return self
        return ForwardBatch(tuple((q, c, n * parts) for q, c, n in self.groups), logits=self.logits * parts)

    @property
    def tokens(self) -> int:
        return sum(q * n for q, _, n in self.groups)

    @property
    def sequences(self) -> int:
        return sum(n for _, _, n in self.groups)

    @property
    def verify(self) -> bool:
        """Every new token needs logits: a verify pass (or a diffusion step)."""
        return self.logits == self.tokens > 0 and any(q > 1 for q, _, _ in self.groups)

    @property
    def is_decode(self) -> bool:
        """A decode step: one new token per sequence, or a verify pass of a few."""
        return self.verify or all(q == 1 for q, _, _ in self.groups)

    @property
    def logit_rows(self) -> int:
        return self.logits or self.sequences
