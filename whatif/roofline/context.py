"""The vocabulary a forward pass is priced in: how KV is stored (KVFormat), the path to a slower
tier (HostPath), a prefill unit, and what a technique or a placement sees of one pass on one GPU
(PassContext, built by `pass_context` only).

The roofline core and the techniques both speak it, so it lives below both: nothing here imports
from graph.py, placement.py or techniques/.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..specs.model_layers import LayerSpec
from ..specs.models import ModelSpec
from .config import ForwardBatch, Parallelism, Precision

# A prefill unit: (tokens computed, tokens already cached that they attend to, sequences).
PrefillUnit = tuple[int, int, int]


@dataclass(frozen=True)
class KVFormat:
    """How one cached token of one layer is stored (per GPU). The baseline is `element_bytes`
    = `full_bytes` = the KV dtype's size, nothing else."""

    element_bytes: float              # bytes per cached K/V element of compressed tokens (scales included)
    full_bytes: float                 # bytes per element of tokens kept uncompressed
    residual_tokens: int = 0          # most recent tokens kept uncompressed (KIVI, GEAR streaming buffer)
    token_overhead_bytes: float = 0.0  # per token beyond the elements (low-rank factors, outlier indices)
    key_share: float = 1.0            # share of key channels kept (ThinK prunes key channels)
    layer_share: float = 1.0          # share of layers that store their own KV (MiniCache merges layers)

    def width(self, kv_width: float) -> float:
        """Elements per token after channel pruning: keys are half of K+V."""
        return kv_width * (1.0 + self.key_share) / 2.0

    def token_bytes(self, tokens: float, kv_width: float) -> float:
        """Bytes of `tokens` cached tokens of one layer with `kv_width` K+V elements per token."""
        full = min(tokens, self.residual_tokens)
        elements = self.width(kv_width)
        return (elements * ((tokens - full) * self.element_bytes + full * self.full_bytes)
                + tokens * self.token_overhead_bytes)


def base_kv_format(prec: Precision) -> KVFormat:
    """The cache as the KV dtype stores it, before any technique."""
    return KVFormat(prec.kv_bytes, prec.kv_bytes)


@dataclass(frozen=True)
class HostPath:
    """The path from one GPU to a slower memory tier (host DRAM, Grace LPDDR5X, CXL, NVMe) or a network.

    Bandwidths are what one GPU gets: the slowest link of the path, the tier's devices shared by the
    GPUs that use them. `link` names the GPU-side link, which concurrent streams share."""

    name: str
    bandwidth: float                 # B/s, tier to GPU (h2d)
    latency: float                   # s per transfer (per block of a scattered transfer)
    bandwidth_d2h: float = 0.0       # B/s, GPU to tier; 0: same as h2d
    link: str = ""                   # GPU-side link (streams over the same link share it); "" = name
    tier: str = ""                   # the memory profile at the end of the path ("" for a network)
    capacity: float = float("inf")   # bytes of the tier one GPU may use

    def rate(self, direction: str = "h2d") -> float:
        return self.bandwidth_d2h if direction == "d2h" and self.bandwidth_d2h else self.bandwidth

    @property
    def link_key(self) -> str:
        return self.link or self.name


def kv_heads_per_gpu(model: ModelSpec, tp: int) -> int:
    """KV heads stored per GPU: split by TP, replicated once TP exceeds the KV heads."""
    return max(1, model.num_kv_heads // tp)


def kv_width_per_gpu(model: ModelSpec, tp: int) -> float:
    """Cached elements per token per layer on one GPU (MLA's latent is replicated, not split)."""
    if model.mla is not None:
        return model.mla.kv_lora_rank + model.mla.qk_rope_head_dim
    return 2 * kv_heads_per_gpu(model, tp) * model.head_dim


def stage_layers(model: ModelSpec, pp: int, stage: int) -> range:
    """Layers of pipeline stage `stage` (the first stages take the remainder)."""
    base, extra = divmod(model.num_layers, pp)
    start = stage * base + min(stage, extra)
    return range(start, start + base + (1 if stage < extra else 0))


def layer_groups(model: ModelSpec, layers: range) -> list[tuple[LayerSpec, int]]:
    """The kinds of layer in `layers` with their counts, in order of first appearance (each kind's ops are built once
    and repeated). Remembered by the model's layer tuple (held, compared by identity) and the range: every pass of
    every stage asks it, and a scan of the layers cost a tenth of a search's pass."""
    key = (id(model.layers), layers.start, layers.stop, layers.step)
    got = _GROUPS.get(key)
    if got is not None and got[0] is model.layers:
        return list(got[1])
    counts: dict[LayerSpec, int] = {}
    for i in layers:
        spec = model.layers[i]
        counts[spec] = counts.get(spec, 0) + 1
    if len(_GROUPS) >= GROUPS_KEPT:
        _GROUPS.clear()
    _GROUPS[key] = (model.layers, tuple(counts.items()))
    return list(counts.items())


GROUPS_KEPT = 4096   # (models x stage ranges; a search meets a few dozen)
_GROUPS: dict[tuple[int, int, int, int], tuple[tuple, tuple]] = {}


@dataclass(frozen=True)
class PassContext:
    """What a technique sees when it rewrites the ops of one forward pass on one GPU."""

    model: ModelSpec           # after model transforms
    batch: ForwardBatch        # the pass as scheduled (cached counts before eviction)
    par: Parallelism
    prec: Precision            # after precision transforms
    kv: KVFormat
    kv_width: float            # K+V elements per token per layer on this GPU, before channel pruning
                               # (DP attention: the whole width, for this GPU's own sequences)
    layers: int                # layers of this pipeline stage
    shared_prefix: int         # tokens every sequence of the batch shares (0: none)
    host: HostPath | None      # the path to host memory, when the system has one
    sm_count: int = 0          # streaming multiprocessors of the GPU (0: unknown)
    stage: int = 0             # pipeline stage these layers belong to
    kv_layers: int = 0         # of them, the attention layers that keep a KV cache (recurrent ones keep a state,
                               # which KV techniques leave alone)

    @property
    def decode(self) -> bool:
        return self.batch.is_decode


def pass_context(model: ModelSpec, batch: ForwardBatch, par: Parallelism, prec: Precision, stage: int = 0, *,
                 transform_kv: Callable[[KVFormat], KVFormat] | None = None, shared_prefix: int = 0,
                 host: HostPath | None = None, sm_count: int = 0) -> PassContext:
    """The one way to build a PassContext: pipeline stage `stage` of a pass, the KV format the
    techniques make of the baseline (`transform_kv`, e.g. TechniqueSet.kv)."""
    kv = base_kv_format(prec)
    layers = stage_layers(model, par.pp, stage)
    return PassContext(model=model, batch=batch, par=par, prec=prec,
                       kv=transform_kv(kv) if transform_kv else kv,
                       kv_width=kv_width_per_gpu(model, par.attention_tp),
                       layers=len(layers), kv_layers=sum(spec.attention * n for spec, n in layer_groups(model, layers)),
                       shared_prefix=shared_prefix, host=host, sm_count=sm_count, stage=stage)
