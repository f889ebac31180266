"""Family I, weight side: the weights (and, for FlexGen, the KV cache and activations) live in a
slower, larger tier and cross a link every pass.

- flexgen and zero_inference express what lives where as a placement (placement.py), so capacity,
  HBM staging buffers and the per-layer transfers come from the shared tier model; FlexGen adds what
  is its own: attention on the CPU and its micro-batched (zig-zag) block schedule.
- llm_in_a_flash reads only the FFN rows and columns a token needs from an SSD into host DRAM and on
  to the GPU; its sparse, windowed, bundled reads are its own transfer ops.
- expert_offload (M2R2) keeps the MoE experts in host memory and loads the touched ones each pass.

What the framework cannot yet express is said in each docstring: a technique sees only the system's
first tier (ctx.host), and a placement's weights share is spread over every layer GEMM, so the
weights that llm_in_a_flash reads from its own tier are still counted in HBM (expert_offload takes its
experts out of HBM through extra_weight_bytes, negative).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ...errors import WhatifError
from ...specs.hardware import load_component
from ...specs.models import ModelSpec
from ..mlp import weight_gemm
from ...specs.op_kinds import FFN_ROLES
from ..ops import Op, OpClass, OpRole, graph_role, is_weight_gemm, kv_read_bytes, transfer, weights_of
from ..placement import Placement
from ..context import HostPath, PassContext
from .base import Technique, param, register
from .kit import require_host, stepping

HOST, NVME = "host", "nvme"
CPU_DRAM_LINK = "host DRAM (CPU attention)"   # link key of CPU-side work: concurrent with the GPU's links
# FlexGen's cost model, fitted on its GCP T4 host (family_i_facts.md, item 1): CPU attention at 0.0123 TFLOP/s
# (cost model "cpu_flops", measured there) beside the host's 60 GB/s of DRAM (gcp-n1-dram-208gb, assumed).
# Elsewhere the CPU's rate is taken from the system's host memory: assumed to scale with the socket's DRAM
# bandwidth (cores and memory channels grow together across server generations), at FlexGen's ratio.
FLEXGEN_CPU_FLOP_PER_BYTE = 0.0123e12 / 60e9   # FLOP/s per B/s of host DRAM bandwidth, FlexGen's host


def host_dram_bandwidth(host: HostPath) -> float:
    """B/s of the host tier's DRAM one GPU's share gets (its devices' bandwidth, not the GPU's link)."""
    if not host.tier or not math.isfinite(host.capacity):
        raise WhatifError("--technique flexgen: CPU attention needs a system whose host memory is a profiled tier "
                          "(e.g. h100-pcie-host, gcp-t4-flexgen), or cpu_bandwidth= and cpu_tflops= given")
    memory = load_component(host.tier, "memory", "--technique flexgen")
    return memory.bandwidth.value * host.capacity / memory.capacity.value


def _share(cls: str, tier: str, percent: float) -> tuple:
    return ((cls, tier, percent / 100.0),) if percent > 0 else ()


# ---------------------------------------------------------------- FlexGen
@register
@dataclass(frozen=True)
class FlexGen(Technique):
    """Offloading by a placement policy plus a block schedule. The weights, the KV cache and the
    activations are split over GPU, CPU memory and disk by FlexGen's `--percent wg wc cg cc hg hc`
    (the rest of each on disk: the system's nvme tier), expressed as a placement: the CPU and disk
    shares cost capacity in those tiers and stream over the link each pass (overlapped with compute
    when `overlap`), with HBM staging for the weights. Zig-zag block schedule: the workload's batch
    is FlexGen's block (gpu_batch x num-gpu-batches); each layer's weights are fetched once per block
    and reused by every micro-batch of `gpu_batch` sequences, so weight bytes per generated token fall
    as the block grows; each further micro-batch re-reads the staged weights from HBM. Set the
    workload's prefill chunk to the block's tokens to prefill the block in one pass as FlexGen does.
    With `cpu_attention` (FlexGen's --cpu-cache-compute; needs the whole KV in CPU memory) decode
    attention runs on the CPU where the KV lives: the new q, k, v cross the link to the CPU, the CPU
    reads the KV at the slower of its DRAM bandwidth and its FLOP rate (both parameters), and the
    attention output comes back; no KV crosses the link and the KV needs no HBM staging. The CPU
    attention and its two copies run in line with the GPU's kernels (the micro-batch's GEMMs wait for
    them), not beside them: `overlap` hides the weight and cache loads only."""

    name = "flexgen"
    family = "I"
    paper = "FlexGen: High-Throughput Generative Inference of Large Language Models with a Single GPU"
    slots = ("weight placement", "kv placement", "attention placement")
    wg: float = param(20.0, "percent of the weights on the GPU (--percent, 1st; OPT-30B policy at prompt 512)", "%")
    wc: float = param(80.0, "percent of the weights in CPU memory (2nd); 100 - wg - wc go to disk", "%")
    cg: float = param(0.0, "percent of the KV cache on the GPU (3rd)", "%")
    cc: float = param(100.0, "percent of the KV cache in CPU memory (4th); 100 - cg - cc go to disk", "%")
    hg: float = param(0.0, "percent of the activations on the GPU (5th)", "%")
    hc: float = param(100.0, "percent of the activations in CPU memory (6th); 100 - hg - hc go to disk", "%")
    gpu_batch: int = param(48, "sequences per GPU micro-batch (--gpu-batch-size; OPT-30B policy at prompt 512); "
                               "the workload's batch is the block (x --num-gpu-batches)", "sequences")
    cpu_attention: bool = param(True, "decode attention on the CPU over the KV in CPU memory (--cpu; OPT-30B policy)")
    overlap: bool = param(True, "overlap the next layer's transfers with compute (--overlap, FlexGen's default)")
    cpu_tflops: float = param(0.0, "CPU FLOP rate of CPU attention; 0: from the system's host memory (its DRAM "
                                   "bandwidth x FlexGen's measured 0.0123 TFLOP/s per 60 GB/s; assumed)", "TFLOP/s")
    cpu_bandwidth: float = param(0.0, "DRAM bandwidth CPU attention reads the KV at; 0: the system's host memory "
                                      "tier (its devices' bandwidth, this GPU's share)", "GB/s")

    def check_params(self) -> None:
        for g, c in (("wg", "wc"), ("cg", "cc"), ("hg", "hc")):
            for key in (g, c):
                self.require(0 <= getattr(self, key) <= 100, key, "a percentage from 0 to 100")
            room = 100 - getattr(self, g)
            self.require(getattr(self, g) + getattr(self, c) <= 100, c, f"at most 100 - {g} ({room:g})")
        self.require(self.gpu_batch >= 1, "gpu_batch", "a positive number of sequences")
        self.require(self.cpu_tflops >= 0, "cpu_tflops", "a FLOP rate in TFLOP/s (0: from the host)")
        self.require(self.cpu_bandwidth >= 0, "cpu_bandwidth", "a bandwidth in GB/s (0: from the host)")
        self.require(not self.cpu_attention or (self.cg == 0 and self.cc == 100), "cpu_attention",
                     f"false unless the whole KV cache is in CPU memory (cg=0, cc=100; got cg={self.cg:g}, "
                     f"cc={self.cc:g}): the CPU attends where the cache is, and whatif does not model the CPU "
                     f"reading a KV share from disk")

    def transform_placement(self, placement):
        shares = (_share("weights", HOST, self.wc) + _share("weights", NVME, 100 - self.wg - self.wc)
                  + _share("kv", HOST, self.cc) + _share("kv", NVME, 100 - self.cg - self.cc)
                  + _share("activations", HOST, self.hc)
                  + _share("activations", NVME, 100 - self.hg - self.hc))
        if not shares:
            return placement
        # CPU attention reads the cache where it lies: in place, no HBM staging for it.
        access = "direct" if self.cpu_attention else "stream"
        return placement.merged(Placement(shares, access, self.overlap))

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        micro = math.ceil(ctx.batch.sequences / self.gpu_batch)
        if micro > 1:   # each micro-batch of the block re-reads the layer's (staged) weights from HBM
            ops = [self._micro_batched(op, ctx, micro) if is_weight_gemm(op) else op for op in ops]
        if not (self.cpu_attention and stepping(ctx)):
            return ops
        out: list[Op] = []
        for op in ops:
            if op.op_class == OpClass.ATTENTION_DECODE:
                out += self._cpu_attention(op, ctx)
            elif op.role != OpRole.KV_WRITE:   # the CPU appends the new K/V to its own cache
                out.append(op)
        return out

    def cpu_rates(self, host: HostPath) -> tuple[float, float]:
        """(B/s of DRAM, FLOP/s) CPU attention gets: the parameters, else the host memory tier's."""
        dram = self.cpu_bandwidth * 1e9 or host_dram_bandwidth(host)
        return dram, self.cpu_tflops * 1e12 or dram * FLEXGEN_CPU_FLOP_PER_BYTE

    @staticmethod
    def _micro_batched(op: Op, ctx: PassContext, micro: int) -> Op:
        extra = (micro - 1) * weights_of(op) * ctx.prec.weight_bytes
        return replace(op, bytes={**op.bytes, "hbm": op.hbm_bytes + extra},
                       formula=op.formula + f"; weights re-read by {micro} micro-batches (+{extra:g} B)")

    def _cpu_attention(self, op: Op, ctx: PassContext) -> list[Op]:
        host = require_host(self.name, ctx)
        a = ctx.prec.act_bytes
        queries = sum(n * q for q, _, n in ctx.batch.groups)
        q_width = ctx.model.num_heads // ctx.par.tp * ctx.model.head_dim
        kv = kv_read_bytes(op)
        dram, flops = self.cpu_rates(host)
        # The CPU streams the KV at the slower of its DRAM bandwidth and what its FLOP rate allows.
        seconds = max(kv / dram, op.flops / flops)
        rate = kv / seconds if seconds > 0 else dram
        cpu = HostPath(CPU_DRAM_LINK, rate, host.latency, link=CPU_DRAM_LINK)
        # In line with the kernels, whatever `overlap`: the release's mha_gen runs it inside compute_layer on the
        # main thread (q.float().cpu(), the CPU bmm/softmax, value.cuda().half(): blocking copies), so the
        # micro-batch's GEMMs wait for it; only weight/cache loads run on side streams (flex_opt.py
        # load_weight_stream, load_cache_stream). FlexGen's cost model agrees: comp_g = gpu_comp_g + cpu_comp_g.
        return [
            transfer("flexgen_qkv_to_cpu", queries * (q_width + ctx.kv_width) * a, host, op.count, False, "d2h"),
            transfer("flexgen_cpu_attention", kv, cpu, op.count, False),
            transfer("flexgen_attention_out", queries * q_width * a, host, op.count, False),
        ]


# ---------------------------------------------------------------- DeepSpeed ZeRO-Inference
@register
@dataclass(frozen=True)
class ZeroInference(Technique):
    """Full weight offload: every layer's weights live in CPU memory or on NVMe (`tier`), none stay
    in HBM beyond a staging buffer, and each pass streams them in layer by layer from pinned host
    buffers (the link's DMA rate); with `prefetch` the next layer's copy overlaps the current layer's
    compute, so a pass costs max(compute, transfer) plus one layer's fill, else their sum. The KV
    cache and the activations stay on the GPU, so HBM left free holds a larger batch. Expressed as a
    placement of all layer weights in `tier`; the embeddings and the LM head stay in HBM.

    `gather_copies`: on one GPU, DeepSpeed releases before the one-rank shortcut still run ZeRO-3's gather
    (partition_parameters.py all_gather_coalesced, as in the torch.cuda-era copy neevaco/DeepSpeed@35d82a61
    and the accelerator-era copy Yard1/DeepSpeed@27dab1d6; current master returns _no_gather_coalesced when
    num_partitions == 1): each fetched group's partitions are copied to the GPU (ds_tensor.to(device)) and
    torch.cat into a flat buffer (copy 1), all-gathered over one rank in place (NCCL's one-rank path copies
    only when send != recv buffer: enqueue.cc ncclSaveKernel) and torch.cat again per parameter in
    AllGatherCoalescedHandle.wait (copy 2). All of it runs on the all-gather stream
    (partitioned_param_coordinator.py __all_gather_params and fetch_sub_module: torch.cuda.stream(
    self.__allgather_stream), a stream of its own since stage 3 defaults overlap_comm to true), so the two
    copies are in line with the host-to-GPU copy and beside the compute stream. Not priced: the flat buffer's
    HBM (one fetch group); a single-parameter group's gather (one NCCL copy, not two)."""

    name = "zero_inference"
    family = "I"
    paper = ("DeepSpeed-Inference: Enabling Efficient Inference of Transformer Models at Unprecedented Scale "
             "(ZeRO-Inference)")
    slots = ("weight placement",)
    tier: str = param(HOST, "where the weights live: host (the system's first tier, CPU memory), nvme, or any "
                            "tier name or technology of the system")
    prefetch: bool = param(True, "prefetch the next layer's weights while this one computes (overlap)")
    gather_copies: int = param(2, "copies within HBM of every fetched weight byte, in line with the link copy: 2 "
                                  "in DeepSpeed releases that gather over one rank (v0.7.x, FlexGen's pinned "
                                  "v0.7.7; the class docstring), 0 in releases with the one-rank shortcut", "copies")

    def check_params(self) -> None:
        self.require(bool(self.tier.strip()), "tier", "a tier name: host, nvme, or a technology or memory profile")
        self.require(self.gather_copies >= 0, "gather_copies", "a non-negative number of copies")

    def transform_placement(self, placement):
        return placement.merged(Placement((("weights", self.tier.strip(), 1.0),),
                                          placement.access, self.prefetch, self.gather_copies))


# ---------------------------------------------------------------- LLM in a flash
FFN_GEMMS = frozenset({OpRole.MLP_UP, OpRole.MLP_DOWN})


@register
@dataclass(frozen=True)
class LLMInAFlash(Technique):
    """Weights read from an SSD on demand, as little and in as large blocks as possible. The
    attention and embedding weights stay in memory (`resident_attention`, the paper's selective
    persistence); of the FFN, a low-rank predictor (`sparsity`) marks the `ffn_active` share of
    neurons a token needs and only their up/gate columns and down rows are read; windowing keeps the
    neurons of the last `window` tokens, so only the `1 - reuse` share of a token's active neurons not
    loaded yet is read. A batch reads the union of its sequences' neurons (activations assumed
    independent), so batching erodes the sparsity; a prefill pass has an empty window. Reads run on
    `threads` concurrent requests, each paying the SSD's latency, so a read costs latency / threads
    plus its bytes at the SSD's bandwidth: row-column bundling stores a neuron's column and row
    together, one read instead of two (three for gated MLPs) for the same bytes. The read lands in
    host DRAM and is copied to the GPU over its link. The FFN GEMMs compute only the neurons held
    (the window's union). `flash` names the SSD's memory profile: its reads end in DRAM, off the GPU's
    tier paths. With all four features off (sparsity, window=0, bundling, resident_attention) every
    layer weight is read each pass: the paper's naive baseline. The memory plan still counts all
    weights in HBM (a technique cannot yet place a share of the weights without streaming it)."""

    name = "llm_in_a_flash"
    family = "I"
    paper = "LLM in a flash: Efficient Large Language Model Inference with Limited Memory"
    slots = ("weight placement", "ffn sparsity")
    flash: str = param("nvme-gen4-ssd", "memory profile of the SSD the weights are read from (the paper's Linux "
                                        "SSD is not stated; a PCIe 4.0 NVMe assumed)")
    sparsity: bool = param(True, "read only the neurons the predictor marks active")
    ffn_active: float = param(0.10, "share of FFN neurons the predictor marks active per token (OPT-6.7B: about 10%, "
                                    "appendix C.1)")
    window: int = param(4, "tokens whose active neurons stay loaded (k = 4 for OPT-6.7B); 0: no windowing", "tokens")
    reuse: float = param(0.76, "share of a token's active neurons already loaded by the window (OPT-6.7B, k = 4: "
                               "2.4% of neurons read of ~10% active, appendix C.1)")
    bundling: bool = param(True, "store a neuron's up column and down row together: one read each")
    threads: int = param(32, "concurrent read requests (the paper reads with 32 threads)")
    resident_attention: bool = param(True, "keep attention weights in memory; read only FFN weights from flash")

    def check_params(self) -> None:
        self.require(bool(self.flash.strip()), "flash", "a memory profile name (e.g. nvme-gen4-ssd)")
        self.require(0 < self.ffn_active <= 1, "ffn_active", "a share above 0 and at most 1")
        self.require(self.window >= 0, "window", "a non-negative number of tokens")
        self.require(0 <= self.reuse < 1, "reuse", "a share from 0 up to (not including) 1")
        self.require(self.threads >= 1, "threads", "a positive number of concurrent reads")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.moe is not None:
            raise WhatifError(f"--technique {self.name}: {model.name} is a mixture of experts; the FFN neuron "
                              f"predictor applies to dense FFNs; valid: dense models")
        memory = load_component(self.flash, "memory", f"--technique {self.name}:flash")
        if memory.technology != "nvme":
            raise WhatifError(f"--technique {self.name}:flash={self.flash!r}: is {memory.technology} memory, not "
                              f"an SSD; valid: a memory profile of technology nvme (e.g. nvme-gen4-ssd)")

    def _flash_path(self) -> HostPath:
        ssd = load_component(self.flash, "memory", f"--technique {self.name}:flash")
        bw = ssd.bandwidth.value
        if ssd.device_link is not None:
            bw = min(bw, ssd.device_link.bandwidth_for("h2d"))
        return HostPath(f"{ssd.name} -> host DRAM", bw, ssd.latency.value, link=f"ssd:{ssd.name}", tier=ssd.name)

    def _shares(self, ctx: PassContext) -> tuple[float, float]:
        """(share of FFN neurons read this pass, share held and computed), over the pass's sequences."""
        if not self.sparsity:
            return 1.0, 1.0
        seqs = ctx.batch.sequences if stepping(ctx) else ctx.batch.tokens   # a prompt's tokens each pick neurons
        windowed = self.window > 0 and stepping(ctx)
        new = self.ffn_active * (1 - self.reuse) if windowed else self.ffn_active
        held = min(1.0, self.ffn_active + self.window * new) if windowed else self.ffn_active
        return 1 - (1 - new) ** seqs, 1 - (1 - held) ** seqs

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        read, held = self._shares(ctx)
        out = []
        for op in ops:
            if held < 1 and op.role in FFN_GEMMS:
                s = op.shape
                n, k = (s.n * held, s.k) if op.role != OpRole.MLP_DOWN else (s.n, s.k * held)
                op = weight_gemm(op.name, s.m, n, k, ctx.prec, op.count, op.role)
            elif held < 1 and op.role == OpRole.MLP_ACT:
                op = replace(op, flops=op.flops * held, bytes={"hbm": op.hbm_bytes * held})
            out.append(op)
        return out + self._reads(ops, ctx, read)

    def _reads(self, ops: list[Op], ctx: PassContext, read: float) -> list[Op]:
        """The pass's reads from the SSD into host DRAM and the copy on to the GPU, per layer."""
        host = require_host(self.name, ctx)
        layers = max(1, ctx.layers)
        d, w = ctx.model.hidden_size, ctx.prec.weight_bytes
        vectors = 3 if ctx.model.mlp == "gated" else 2     # gate and up columns and a down row per neuron
        neurons = ctx.model.intermediate_size / ctx.par.tp * read
        nbytes = neurons * vectors * d * w
        # Sparse reads: a block per neuron (bundled) or per vector; dense: one contiguous read per matrix.
        blocks = neurons * (1 if self.bundling else vectors) if self.sparsity else 2.0
        if not self.resident_attention:
            attention = [op for op in ops if is_weight_gemm(op) and graph_role(op) not in FFN_ROLES]
            nbytes += sum(weights_of(op) * ctx.prec.weight_bytes * op.count for op in attention) / layers
            blocks += len(attention)
        if nbytes <= 0:
            return []
        return [transfer("llm_in_a_flash_read", nbytes, self._flash_path(), layers,
                         blocks=max(1.0, blocks / self.threads)),
                transfer("llm_in_a_flash_to_gpu", nbytes, host, layers)]


# ---------------------------------------------------------------- M2R2 expert offload
EXPERT_GEMMS = frozenset({OpRole.EXPERT_UP, OpRole.EXPERT_DOWN})


@register
@dataclass(frozen=True)
class ExpertOffload(Technique):
    """MoE expert weights live in host memory; each pass loads the experts its tokens touch (their
    gate/up and down matrices) over the host link. The routed experts are not resident in HBM (the
    point of offloading: a model whose experts do not fit still runs); an LRU cache of `cached`
    experts per MoE layer stays in HBM, and a touched expert is found there with probability
    cached / experts (routing assumed uniform and independent across steps; real routing has
    locality, so this is a floor on the hit rate). With `ahead_of_time` (M2R2's ahead-of-time expert
    loading) a layer's missed experts are predicted early and the `predicted` share of them loads on a
    copy engine while earlier layers compute (an overlapped transfer); the rest, and every expert
    without it, loads on demand in line before the expert GEMMs (a serial transfer). Attention,
    shared experts and the router stay in HBM. The experts placed here are the technique's own:
    with --place weights=... as well, every weight GEMM would be streamed a second time, so that
    combination is refused. Not expressed: the host tier's capacity for the experts."""

    name = "expert_offload"
    family = "I"
    paper = "M2R2: Mixture of Multi-Rate Residuals for Efficient Transformer Inference"
    slots = ("weight placement", "expert placement")
    ahead_of_time: bool = param(True, "predict each layer's experts early and load them while earlier layers compute")
    predicted: float = param(1.0, "share of touched experts predicted ahead (assumed: M2R2's accuracy not found)")
    cached: int = param(0, "experts per MoE layer an LRU cache keeps in HBM (0: none; M2R2 states none)",
                        "experts")

    def check_params(self) -> None:
        self.require(0 <= self.predicted <= 1, "predicted", "a share from 0 to 1")
        self.require(self.cached >= 0, "cached", "a non-negative number of experts")

    def check(self, model: ModelSpec, shared_prefix: int) -> None:
        if model.moe is None:
            raise WhatifError(f"--technique {self.name}: {model.name} has no experts to offload; valid: "
                              f"mixture-of-experts models (e.g. mixtral-8x7b, deepseek-v3)")
        if self.cached >= model.moe.num_experts:
            raise WhatifError(f"--technique {self.name}:cached={self.cached}: must be below {model.name}'s "
                              f"{model.moe.num_experts} experts per layer (all cached is no offloading)")

    def transform_placement(self, placement):
        if placement.offloaded("weights") > 0:
            raise WhatifError(f"--technique {self.name}: places the experts in host memory itself; with --place "
                              f"weights=... every expert would cross the link twice; valid: --place kv=... or "
                              f"activations=... only, or drop {self.name}")
        return placement

    def hit_rate(self, model: ModelSpec) -> float:
        return self.cached / model.moe.num_experts if model.moe else 0.0

    def extra_weight_bytes(self, model, par, prec) -> float:
        """Negative: the routed experts leave HBM, all but the cached ones."""
        m = model.moe
        if m is None:
            return 0.0
        split = par.tp     # experts split ep x moe_tp = tp ways (over EP ranks, each sharded over moe_tp)
        per_expert = model.dense_mlp_params(m.expert_intermediate_size) * prec.module_weight_bytes("experts") / split
        return -(m.num_experts - self.cached) * per_expert * model.num_moe_layers / par.pp

    def rewrite_ops(self, ops: list[Op], ctx: PassContext) -> list[Op]:
        host = require_host(self.name, ctx)
        ahead = self.predicted if self.ahead_of_time else 0.0
        miss = 1.0 - self.hit_rate(ctx.model)
        out: list[Op] = []
        for op in ops:
            if op.role in EXPERT_GEMMS and op.op_class == OpClass.GEMM and miss > 0:
                nbytes = miss * weights_of(op) * ctx.prec.module_weight_bytes("experts")
                experts = max(1.0, miss * op.shape.groups)
                if ahead > 0:
                    out.append(replace(transfer(f"{op.name}_prefetch", ahead * nbytes, host, op.count, True,
                                                blocks=experts), part_of=graph_role(op)))
                if ahead < 1:
                    out.append(replace(transfer(f"{op.name}_load", (1 - ahead) * nbytes, host, op.count, False,
                                                blocks=experts), part_of=graph_role(op)))
            out.append(op)
        return out
