"""How a model is run: parallelism, precisions and the batch of one forward pass."""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache

from ..specs.dtypes import ACTIVATION_DTYPES, BYTES, KV_DTYPES, WEIGHT_DTYPES, check_dtype, stored_bytes
from ..specs.quantization import MODULE_CLASSES, UNQUANTIZED, Scheme, module_table, scheme
from ..errors import WhatifError, positive_int


@dataclass(frozen=True)
class Parallelism:
    tp: int = 1   # tensor parallel: heads and MLP columns split over tp GPUs
    pp: int = 1   # pipeline parallel: layers split into pp stages
    ep: int = 1   # expert parallel: MoE experts split over ep GPUs of the TP group (1 or tp)
    # attention data parallel (SGLang --enable-dp-attention): each GPU of the TP group runs attention
    # with all heads on its own 1/tp of the sequences; only the routed experts are split (over ep = tp)
    dp_attention: bool = False

    def __post_init__(self):
        for key in ("tp", "pp", "ep"):
            positive_int(getattr(self, key), f"--{key}")
        if not isinstance(self.dp_attention, bool):
            raise WhatifError(f"--dp-attention: {self.dp_attention!r}; valid: true or false")
        if self.dp_attention and not self.ep == self.tp > 1:
            raise WhatifError(f"--dp-attention: needs --ep equal to --tp and above 1 (got tp={self.tp}, "
                              f"ep={self.ep}); valid: a MoE model with --tp N --ep N, N > 1")

    @property
    def attention_tp(self) -> int:
        """GPUs each attention layer (and every other non-expert weight) is split over: 1 under DP attention."""
        return 1 if self.dp_attention else self.tp

    @property
    def attention_dp(self) -> int:
        """Groups the sequences are split into: tp under DP attention, else 1."""
        return self.tp if self.dp_attention else 1

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def dense(self) -> Parallelism:
        """How everything but the routed experts is split: over tp, or under DP attention not at all
        (each GPU holds attention, dense MLPs, shared experts, embedding and LM head whole)."""
        return Parallelism(tp=1, pp=self.pp) if self.dp_attention else self


@dataclass(frozen=True)
class Precision:
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

    def label(self) -> str:
        """Weights / activations / KV as a header says them, with the scheme's name and format when named,
        then each module class that differs and where the precision came from."""
        dtypes = f"weights {self.weight}, activations {self.gemm_activation}, KV {self.kv}"
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
