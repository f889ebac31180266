"""Family I, KV side: the KV cache (and with it decode attention) leaves the GPU.

- sentencekv: the KV lives in CPU memory; the GPU keeps one semantic vector per sentence and fetches
  the KV of the best-matching sentences each step (a sparse fetch in sentence-sized blocks).
- fastswitch: a preempted sequence's KV is swapped out to the CPU and back; the cost is the swap
  time per step, set by the swap granularity (block latency) and whether it overlaps compute.
- instinfer: the KV lives on computational storage drives, which run decode attention themselves at
  their internal flash bandwidth; only queries, new K/V and outputs cross the PCIe link.
- lamina: the KV lives on memory-optimized attention devices across a network, which run decode
  attention; the GPU sends queries and new K/V and receives outputs every layer.

instinfer and lamina keep the KV in a memory tier of the system (a placement of the whole KV with
direct access: the memory plan checks that tier's capacity and HBM holds no KV), so the system must
have that tier: rtx-a6000-csd (or any system with one NVMe tier) for instinfer, h100-lamina (or a
tier added with --add-tier h20-hbm3-96gb:N) for lamina. Their timing comes from their own
parameters: the framework gives a technique no handle on a tier's devices, so the attention ops,
which are replaced, never touch the tier's path.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...specs.op_kinds import LAYER_ATTENTION_ROLES
from ..ops import Op, OpClass, OpRole, kv_read_bytes, kv_write_bytes, streaming, transfer
from ..placement import Placement
from ..context import HostPath, KVFormat, PassContext
from .base import Technique, param, register
from .kit import (cached, heads, kv_heads, key_dim, rebuilt_attention, replace_attention,
                               require_host, require_separate_keys, score_op, stepping)

ATTENTION_PLACEMENT = "attention placement"
KV_PLACEMENT = "kv placement"


# ---------------------------------------------------------------- shared pieces
def _queries(ctx: PassContext) -> float:
    return sum(n * q for q, _, n in ctx.batch.groups)


def _cached_kv_bytes(ctx: PassContext) -> float:
    """Cache-format bytes of the tokens cached before this pass, one layer, all sequences."""
    return sum(n * ctx.kv.token_bytes(c, ctx.kv_width) for _, c, n in ctx.batch.groups)


def offloaded_attention(ops: list[Op], ctx: PassContext, link: HostPath, engine: HostPath, read_share: float,
                        label: str) -> list[Op]:
    """The pass's ops with attention moved to devices that hold the KV.

    Decode (steps of <= DECODE_MAX_QUERIES tokens per sequence): per layer the GPU sends q and the new
    K/V over `link` (d2h), the devices read read_share of the KV at `engine`'s bandwidth, and the
    attention output comes back over `link` (h2d); all in line (the next layer needs the output). The
    GPU's attention kernel and its KV append disappear.
    Prefill: the GPU computes attention on the chunk (its KV is in HBM), fetches earlier chunks' KV
    from the devices (h2d) and sends the chunk's new KV to them (d2h), both overlapped. The KV bytes
    are then stripped from the ops' shapes, so a direct placement of the KV moves nothing more."""
    a = ctx.prec.act_bytes
    out: list[Op] = []
    if stepping(ctx):
        for op in ops:
            if op.role == OpRole.KV_WRITE:
                continue   # the new K/V travel with the query
            if op.role in LAYER_ATTENTION_ROLES and op.op_class == OpClass.ATTENTION_DECODE:
                s = op.shape
                q_bytes = _queries(ctx) * s.heads * s.d_qk * a
                o_bytes = _queries(ctx) * s.heads * s.d_v * a
                new_kv = _queries(ctx) * ctx.kv_width * ctx.kv.full_bytes
                out += [transfer(f"{label}_send_q_kv", q_bytes + new_kv, link, op.count, direction="d2h"),
                        transfer(f"{label}_attention", read_share * s.kv_bytes, engine, op.count),
                        transfer(f"{label}_recv_output", o_bytes, link, op.count)]
                continue
            out.append(op)
        return out
    earlier = _cached_kv_bytes(ctx)
    for op in ops:
        if kv_read_bytes(op):
            out.append(replace(op, shape=replace(op.shape, kv_bytes=0.0)))
            if earlier > 0:
                out.append(transfer(f"{label}_fetch_earlier_kv", earlier, link, op.count, overlap=True))
        elif op.role == OpRole.KV_WRITE and kv_write_bytes(op):
            out.append(replace(op, shape=replace(op.shape, kv_write_bytes=0.0)))
            out.append(transfer(f"{label}_store_kv", kv_write_bytes(op), link, op.count, overlap=True,
                                direction="d2h"))
        else:
            out.append(op)
    return out


# ---------------------------------------------------------------- SentenceKV
@register
@dataclass(frozen=True)
class SentenceKV(Technique):
    """Sentence-level KV offload with semantic retrieval. Prefill groups the prompt into sentences (at
    punctuation, `sentence_tokens` long on average), averages each sentence's keys into one semantic
    vector per KV head and layer (a pass over the keys) and copies every token's K and V to CPU memory
    (an overlapped transfer). The GPU keeps only the sentence vectors (one key-sized vector per
    sentence: 1/(2 x sentence_tokens) of the K+V bytes), the first `sink` and newest `local` tokens and
    a buffer for the fetched sentences. Each decode step and layer scores the current sentence's mean
    query against every sentence vector (a read of all vectors plus a top-k), fetches the K and V of the
    `sentence_budget` best sentences from CPU memory over the host link, in line (the selection needs
    this layer's query), as one block per sentence (each block pays the link's latency), and attends
    sink + local + fetched tokens at full precision; the step's new K/V are copied back (overlapped).
    Fetched bytes scale with the sentence budget, not the context. Not modelled: the released code's
    per-head selection (blocks would multiply by KV heads) and its SnapKV-style pruning of the prompt
    to a multiple of the budget (it only shrinks the CPU copy, which is not capacity-checked)."""

    name = "sentencekv"
    family = "I"
    paper = "SentenceKV: Efficient LLM Inference via Sentence-Level Semantic KV Caching"
    slots = ("decode selection", "kv format", KV_PLACEMENT)
    budget_param = "sentence_budget"
    sentence_budget: int = param(40, "sentences whose KV is fetched per decode step and layer (assumed: about 1K "
                                     "tokens at 24 tokens per sentence)", "sentences")
    sentence_tokens: float = param(24.0, "average tokens per sentence (assumed; set by the text's punctuation)",
                                   "tokens")
    sink: int = param(32, "first tokens kept on the GPU and always attended (the released code's start_budget)",
                      "tokens")
    local: int = param(32, "newest tokens kept on the GPU and always attended (the released code's recent_budget)",
                       "tokens")

    def check_params(self) -> None:
        self.require(self.sentence_budget >= 1, "sentence_budget", "a positive integer")
        self.require(self.sentence_tokens >= 1, "sentence_tokens", "an average of at least 1 token")
        self.require(self.sink >= 0, "sink", "a non-negative integer")
        self.require(self.local >= 0, "local", "a non-negative integer")

    def check(self, model, shared_prefix: int) -> None:
        require_separate_keys(self.name, model)

    @property
    def fetched(self) -> int:
        """Tokens fetched per step and layer at most (whole sentences)."""
        return math.ceil(self.sentence_budget * self.sentence_tokens)

    @property
    def resident(self) -> int:
        return self.sink + self.local

    def transform_kv(self, kv: KVFormat) -> KVFormat:
        # Per layer and sequence the GPU holds sink + local + the fetch buffer at full precision, and per
        # token 1/sentence_tokens of a key vector (the sentence vectors): half of K+V, over sentence_tokens.
        return replace(kv, element_bytes=kv.full_bytes / (2 * self.sentence_tokens),
                       residual_tokens=self.resident + self.fetched)

    def _fetched(self, c: float) -> float:
        return min(max(0.0, c - self.resident), self.fetched)

    def read_tokens(self, stored: float) -> float:
        return min(stored, self.resident + self._fetched(stored))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not stepping(ctx):
            return ops
        return replace_attention(ops, lambda op: rebuilt_attention(op, ctx, self.read_tokens, ctx.kv.full_bytes))

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        host = require_host(self.name, ctx)
        kvh, h, d = kv_heads(ctx), heads(ctx), key_dim(ctx)
        full = ctx.kv.full_bytes
        new = ctx.batch.tokens * ctx.kv_width * full
        offload = transfer("sentencekv_kv_offload", new, host, ctx.kv_layers, overlap=True, direction="d2h")
        if not stepping(ctx):
            keys = ctx.batch.tokens * kvh * d
            vectors = streaming("sentencekv_sentence_vectors", OpClass.ELEMENTWISE, keys, 1, 0, 1, full,
                                ctx.prec.activation, ctx.kv_layers, extra_bytes=keys / self.sentence_tokens * full)
            return [vectors, offload]
        sentences = cached(ctx) / self.sentence_tokens
        scores = score_op("sentencekv_sentence_scores", ctx, sentences * kvh * d, full, sentences * h, ctx.kv_layers,
                          2.0 * h / kvh, note=f"one mean key per {self.sentence_tokens:g}-token sentence")
        tokens = sum(n * self._fetched(c) for _, c, n in ctx.batch.groups)
        blocks = sum(n * math.ceil(self._fetched(c) / self.sentence_tokens) for _, c, n in ctx.batch.groups)
        fetch = transfer("sentencekv_kv_fetch", tokens * ctx.kv_width * full, host, ctx.kv_layers,
                         blocks=max(blocks, 1))
        return [scores, fetch, offload]


# ---------------------------------------------------------------- FastSwitch
VLLM_BLOCK_TOKENS = 16   # vLLM's default KV block size (FastSwitch's baseline, vLLM 0.3.3)


@register
@dataclass(frozen=True)
class FastSwitch(Technique):
    """KV swapping on preemption, as a mean cost per decode step. A fairness-aware scheduler preempts
    `preemptions_per_step` of the batch each step: each preempted sequence's KV (its cached tokens, in
    the cache format) is swapped out to CPU memory and, when it is scheduled again, back in, over the
    host link: a d2h and an h2d transfer per layer. The KV is copied in units of `block_tokens`
    contiguous tokens, K and V apart (one copy per unit, K and V, per layer), and each copy pays the
    link's latency, so small units waste the link: vLLM copies its 16-token blocks one by one
    (fastswitch:block_tokens=16,overlap=false is that baseline); FastSwitch's block groups make the
    units larger. With `overlap` the swaps run on copy streams beside compute (FastSwitch's async
    swapping; the step costs the larger of compute and swap); without it the step waits for them (vLLM).
    What whatif cannot say: queueing, priority changes and the tail latencies they cause (no
    scheduler simulator yet); KV reuse across turns of a conversation (which FastSwitch also exploits)."""

    name = "fastswitch"
    family = "I"
    paper = "FastSwitch: Optimizing Context Switching Efficiency in Fairness-aware Large Language Model Serving"
    slots = ("kv swapping",)
    block_tokens: int = param(256, "tokens per contiguous swap unit: FastSwitch's block groups (assumed: its group "
                                   "sizes were not found); 16 = vLLM's blocks", "tokens")
    preemptions_per_step: float = param(0.04, "share of the batch swapped out and back in per decode step (assumed: "
                                              "the paper's priority-update frequency 0.04 for the 8B model taken "
                                              "as the preemption rate)")
    overlap: bool = param(True, "swaps run beside compute on copy streams (FastSwitch); false: the step waits "
                                "(vLLM 0.3.3)")

    def check_params(self) -> None:
        self.require(self.block_tokens >= 1, "block_tokens", "a positive integer")
        self.require(0 <= self.preemptions_per_step <= 1, "preemptions_per_step", "a share from 0 to 1")
        self.require(isinstance(self.overlap, bool), "overlap", "true or false")

    def extra_ops(self, ctx: PassContext) -> list[Op]:
        if not stepping(ctx) or self.preemptions_per_step <= 0:
            return []
        host = require_host(self.name, ctx)
        share = self.preemptions_per_step
        nbytes = sum(n * share * ctx.kv.token_bytes(c, ctx.kv_width) for _, c, n in ctx.batch.groups)
        blocks = sum(n * share * 2 * math.ceil(c / self.block_tokens) for _, c, n in ctx.batch.groups)
        if nbytes <= 0:
            return []
        blocks = max(blocks, 1.0)
        return [transfer("fastswitch_swap_out", nbytes, host, ctx.kv_layers, self.overlap, "d2h", blocks),
                transfer("fastswitch_swap_in", nbytes, host, ctx.kv_layers, self.overlap, "h2d", blocks)]


# ---------------------------------------------------------------- InstInfer
@register
@dataclass(frozen=True)
class InstInfer(Technique):
    """In-storage decode attention. The whole KV cache lives on `drives` computational storage drives
    (a placement of the KV on memory tier `tier`, read in place: the drives' capacity is checked and
    HBM holds no KV). Each decode step and layer the GPU sends q and the new K/V to the drives
    peer-to-peer over their PCIe links (`link_bandwidth` each, `latency` per command), the drives'
    attention engines read `read_share` of that layer's KV at `internal_bandwidth` each (1: dense
    InstA; 1/8: SparF, whose selection cost is not modelled), and the attention output comes back; the
    GPU's attention kernel is gone and only q, new K/V and the output cross PCIe, whatever the context.
    The engines' compute is taken to keep up with their flash (not modelled). Prefill runs on the GPU,
    which sends each chunk's KV to the drives (overlapped). With in_storage=false the same placement is
    streamed instead: each layer's KV crosses the drive's link into HBM every step (FlexGen with the KV
    on the SSD, as --place kv=nvme:1 would give)."""

    name = "instinfer"
    family = "I"
    paper = "InstInfer: In-Storage Attention Offloading for Cost-Effective Long-Context LLM Inference"
    slots = (KV_PLACEMENT, ATTENTION_PLACEMENT)
    in_storage: bool = param(True, "decode attention runs inside the drives; false: the KV is streamed from the "
                                   "drive to the GPU every step (FlexGen-style baseline)")
    drives: int = param(1, "computational storage drives sharing the KV (should match the tier's device count)")
    internal_bandwidth: float = param(11.2, "flash bandwidth of one drive's attention engine (the paper's emulated "
                                            "CSD: 8 channels x 1.4 GB/s)", "GB/s")
    link_bandwidth: float = param(7.0, "each drive's external PCIe 4.0 x4 link, which q, new K/V and outputs cross "
                                       "peer-to-peer (the paper's 7 GB/s)", "GB/s")
    latency: float = param(80.0, "per peer-to-peer command to a drive (assumed: an NVMe 4 KiB read latency, as "
                                 "nvme-gen4-ssd)", "us")
    read_share: float = param(1.0, "share of the KV the in-storage attention reads per step (1: dense InstA; 0.125: "
                                   "the paper's SparF)")
    tier: str = param("nvme", "memory tier holding the KV (capacity checked): a tier name, a technology such as "
                              "nvme, or host")

    def check_params(self) -> None:
        self.require(isinstance(self.in_storage, bool), "in_storage", "true or false")
        self.require(self.drives >= 1, "drives", "a positive integer")
        self.require(self.internal_bandwidth > 0, "internal_bandwidth", "a positive bandwidth in GB/s")
        self.require(self.link_bandwidth > 0, "link_bandwidth", "a positive bandwidth in GB/s")
        self.require(self.latency >= 0, "latency", "a non-negative latency in microseconds")
        self.require(0 < self.read_share <= 1, "read_share", "a share above 0 and at most 1")
        self.require(self.in_storage or self.read_share == 1, "read_share",
                     "1 with in_storage=false (the streamed baseline reads the whole KV)")
        self.require(bool(str(self.tier).strip()), "tier", "a memory tier name, e.g. nvme")

    def transform_placement(self, placement):
        access = "direct" if self.in_storage else "stream"
        return placement.merged(Placement((("kv", self.tier, 1.0),), access, placement.overlap))

    def p2p(self) -> HostPath:
        return HostPath(f"P2P to {self.drives} CSD(s) over PCIe", self.drives * self.link_bandwidth * 1e9,
                        self.latency * 1e-6, link="instinfer-p2p")

    def engine(self) -> HostPath:
        return HostPath(f"in-storage attention, {self.drives} x {self.internal_bandwidth:g} GB/s flash",
                        self.drives * self.internal_bandwidth * 1e9, 0.0, link="instinfer-flash")

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        if not self.in_storage:
            return ops
        return offloaded_attention(ops, ctx, self.p2p(), self.engine(), self.read_share, "instinfer")


# ---------------------------------------------------------------- Lamina
@register
@dataclass(frozen=True)
class Lamina(Technique):
    """Attention offloading to memory-optimized devices. The whole KV cache lives on
    `attention_devices` devices across a network (a placement of the KV on memory tier `tier`, read in
    place: the devices' capacity, from that tier, bounds the batch, and HBM holds no KV, so the GPU's
    batch grows). Each decode step and layer the GPU sends q and the new K/V to the devices and
    receives the attention output (network transfers both ways, `network_bandwidth` and
    `network_latency` per message, in line); the devices read the layer's KV at their aggregate memory
    bandwidth (attention_devices x device_bandwidth), which replaces the GPU's attention kernel. The
    devices' compute is taken to keep up with their memory, and the GPU and the devices are not
    pipelined against each other (each layer waits for its attention). Prefill runs on the GPU, which
    sends each chunk's KV to the devices (overlapped). The devices cost attention_devices x
    device_price per hour on top of the GPUs, so cost per token includes them."""

    name = "lamina"
    family = "I"
    paper = "Efficient and Economic Large Language Model Inference with Attention Offloading"
    slots = (KV_PLACEMENT, ATTENTION_PLACEMENT)
    attention_devices: int = param(2, "memory-optimized devices holding the KV and running decode attention "
                                      "(assumed; should match the tier's device count)")
    device_bandwidth: float = param(4000.0, "memory bandwidth of one device (assumed: an H20-class 4.0 TB/s device; "
                                            "the paper's device was not found)", "GB/s")
    device_price: float = param(1.0, "price of one device (assumed: the paper's prices were not found)", "USD/h")
    network_bandwidth: float = param(400.0, "GPU-to-devices network, one 400 Gbit/s RDMA NIC (assumed)", "Gbit/s")
    network_latency: float = param(5.0, "one-way latency per message (assumed, RDMA through a switch)", "us")
    tier: str = param("hbm", "memory tier standing for the devices' memory, whose capacity bounds the KV "
                             "(h100-lamina's pool, or one added with --add-tier h20-hbm3-96gb:2)")

    def check_params(self) -> None:
        self.require(self.attention_devices >= 1, "attention_devices", "a positive integer")
        self.require(self.device_bandwidth > 0, "device_bandwidth", "a positive bandwidth in GB/s")
        self.require(self.device_price >= 0, "device_price", "a non-negative price in USD per hour")
        self.require(self.network_bandwidth > 0, "network_bandwidth", "a positive bandwidth in Gbit/s")
        self.require(self.network_latency >= 0, "network_latency", "a non-negative latency in microseconds")
        self.require(bool(str(self.tier).strip()), "tier", "a memory tier name, e.g. hbm")

    def transform_placement(self, placement):
        return placement.merged(Placement((("kv", self.tier, 1.0),), "direct", placement.overlap))

    def extra_price_per_hour(self) -> float:
        return self.attention_devices * self.device_price

    def network(self) -> HostPath:
        return HostPath(f"network to {self.attention_devices} attention device(s)", self.network_bandwidth / 8 * 1e9,
                        self.network_latency * 1e-6, link="lamina-network")

    def devices(self) -> HostPath:
        return HostPath(f"{self.attention_devices} attention device(s) x {self.device_bandwidth:g} GB/s",
                        self.attention_devices * self.device_bandwidth * 1e9, 0.0, link="lamina-devices")

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        return offloaded_attention(ops, ctx, self.network(), self.devices(), 1.0, "lamina")

