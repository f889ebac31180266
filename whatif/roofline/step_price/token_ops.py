"""The ops of one pipeline stage that depend on a token count, timed for any count without building
the pass again.

PassParts prices a stage's body (embedding, projections, MLP, norms, collectives) once per token
count and its tail (final norm, LM head, sampling) once per logit-row count. Building those ops
(graph.pass_ops) and timing each (timing.time_op) costs ~0.15 ms, and a run meets a new token count
at most iterations that carry a prefill chunk. Without techniques, every number of such an op is
affine in the count n: its FLOPs, HBM bytes, a GEMM's rows and a collective's bytes are n times the
model's dimensions and byte sizes plus a constant (weights, norm scales), all whole numbers that
floats hold exactly. Where the ops themselves change with the count (TensorRT-LLM fuses an all-reduce
with the residual and norm only while its message fits the custom kernel's workspace), the range is
split at each count where their kinds change, found by bisection between the built counts
(TokenPieces). Per piece, `TokenOps.affine` reads off each number's slope and intercept between two
counts and keeps them only when they reproduce the ops built at the piece's CHECK_AT counts and ends
exactly (same names, classes, dtypes, counts and every number); otherwise (MoE routing, an op it does
not price) the caller builds that piece's ops per count as before. `seconds(n)` then times each op
from its numbers by the formulas time_op applies: the fitted GEMM model (PassParts.gemm_seconds), the
fitted collectives (collective_timing.collective_seconds, with a fused epilogue's HBM pass) and the per-class
model (restated in `_per_class`). The times are time_op's to the bit (tests/test_sim_token_ops.py,
every count up to the token budget)."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import fields

from .. import kernel_timing
from ..config import ForwardBatch
from ..context import pass_context
from ..engine_kernels import fused_ops
from ..graph import pass_ops
from ..moe_kernels import fused_layer_ops
from ...specs.op_kinds import LOGIT_ROLES, OpRole
from ..ops import OpClass
from ..ridge import ridge_floats
from ..tiers import host_path

SLOPE_AT = (1000, 2001)   # token counts each number's slope is read between
CHECK_AT = (1, 2, 3, 16, 17, 64, 511, 513, 4097, 8192, 65536, 1 << 20)   # counts the slopes must reproduce


AFTER = "after"   # `tail` of stage_ops: the ops a technique appends after the tail (TechniqueSet.ops: extra_ops)


def stage_ops(setup, stage: int, n: int, tail: bool | str, whole: dict | None = None) -> list:
    """The body ops of pipeline stage `stage` for `n` tokens, or its tail ops for `n` logit rows (a batch
    of one sequence of n new tokens with n logit rows has both; its attention op is priced apart), or (AFTER)
    the ops for `n` tokens a technique appends after the tail (the body then ends where the tail starts).
    `whole`: the stage's whole passes built so far, by (stage, n), read and added to (a stage's body and tail
    pieces are found at the same counts: each pass is built once for both; its ops are frozen)."""
    s = setup
    techs = s.techniques   # (parts.splittable admits only techniques whose ops split so: Technique.splits)
    ops = whole.get((stage, n)) if whole is not None else None
    if ops is None:
        ctx = pass_context(s.model, ForwardBatch(((n, 0, 1),), n), s.parallel, s.precision, stage,
                           transform_kv=techs.kv, host=host_path(s.system, s.parallel.gpus) if techs else None,
                           sm_count=int(s.system.gpu.sm_count.value))   # as forward_pass.time_pass builds it
        ops = fused_layer_ops(fused_ops(pass_ops(ctx, techs), s.engine_spec, ctx.model), s.efficiency, s.system.gpu)
        if whole is not None:
            whole[(stage, n)] = ops
    if tail is True:
        return [op for op in ops if op.role in LOGIT_ROLES]
    first = next((i for i, op in enumerate(ops) if op.role in LOGIT_ROLES), len(ops)) if techs else len(ops)
    return [op for op in (ops[first:] if tail == AFTER else ops[:first]) if op.role not in LOGIT_ROLES]


def numbers(op) -> dict[str, float]:
    """Every number of `op` that may depend on the token count (its class, dtype, count and names aside)."""
    out = {"flops": op.flops, "alu_ops": op.alu_ops, "bandwidth_share": op.bandwidth_share}
    out.update({f"bytes:{k}": v for k, v in op.bytes.items()})
    out.update({f"shape:{f.name}": float(getattr(op.shape, f.name)) for f in fields(op.shape)
                if f.name != "collective"})
    return out


def _kind(op) -> tuple:
    """What must not change with the token count (an attention op's class does: decode below 17 queries)."""
    collective = getattr(op.shape, "collective", None)
    attention = op.role == OpRole.ATTENTION
    return (op.name, None if attention else op.op_class, op.dtype, op.count, op.role, op.part_of,
            type(op.shape), None if attention else tuple(op.bytes), collective, op.collective_kernel)


class TokenOps:
    """One stage's body or tail ops over a range of counts, each priced from its numbers as slope * n + intercept."""

    def __init__(self, template: list, pricers: list):
        self.template = template      # the ops at one count: counts, classes and attention ops for the caller
        self.pricers = pricers        # per op: a function of n giving one instance's seconds, None for attention

    @staticmethod
    def of(parts, stage: int, tail: bool) -> TokenPieces | None:
        """The stage's ops as affine numbers piece by piece (see TokenPieces), or None where no piece is affine."""
        pieces = TokenPieces.of(parts, stage, tail)
        return None if all(p is None for p in pieces.pieces) else pieces

    @staticmethod
    def affine(parts, built: dict, slope_at: tuple[int, int]) -> TokenOps | None:
        """The ops built at each count of `built` (one kind throughout) as affine numbers read between the
        counts `slope_at`, or None where some op is not affine in n (or not priced here)."""
        (n1, n2), pricers = slope_at, []
        template = built[n1]
        for i, op in enumerate(template):
            if op.role == OpRole.ATTENTION:
                pricers.append(None)
                continue
            v1, v2 = numbers(op), numbers(built[n2][i])
            lines = {}
            for name, y1 in v1.items():
                slope = (v2[name] - y1) / (n2 - n1)
                lines[name] = (slope, y1 - slope * n1)
            if any(numbers(ops[i]) != {k: a * n + b for k, (a, b) in lines.items()} for n, ops in built.items()):
                return None
            pricer = _pricer(parts, op, lines)
            if pricer is None:
                return None
            pricers.append(pricer)
        return TokenOps(template, pricers)

    def seconds(self, n: int) -> list:
        """Seconds of one instance of each op at `n` tokens (None for attention), as time_op gives them."""
        return [None if p is None else p(n) for p in self.pricers]


class TokenPieces:
    """A stage's ops over the token range split where the ops' kinds change (a TensorRT-LLM all-reduce fuses
    the residual and norm only while its message fits the custom kernel's workspace: small counts lack two
    ops large ones keep), one affine TokenOps per piece (None: that piece's ops are built per count)."""

    def __init__(self, starts: list[int], pieces: list):
        self.starts = starts   # ascending, starts[0] == 1: piece i holds counts [starts[i], starts[i + 1])
        self.pieces = pieces

    def piece(self, n: int) -> int:
        return bisect_right(self.starts, n) - 1

    def seconds(self, n: int) -> list:
        """As TokenOps.seconds, by the piece holding `n` (an affine one)."""
        return self.pieces[self.piece(n)].seconds(n)

    @staticmethod
    def of(parts, stage: int, tail: bool) -> TokenPieces:
        setup = parts.setup
        built, kinds_at = {}, {}

        def kinds(n: int) -> list:   # (memoized: the bisection asks for a count's kinds up to 3 times)
            if n not in built:
                built[n] = stage_ops(setup, stage, n, tail, parts.whole_passes)
                kinds_at[n] = list(map(_kind, built[n]))
            return kinds_at[n]

        counts = sorted(set(SLOPE_AT + CHECK_AT))
        starts = [counts[0]]
        for lo, hi in zip(counts, counts[1:]):
            _bounds(kinds, lo, hi, starts)
        pieces = []
        for i, start in enumerate(starts):
            stop = starts[i + 1] if i + 1 < len(starts) else None   # (None: no end)
            last = stop - 1 if stop is not None else max(start + SLOPE_AT[1] - SLOPE_AT[0], counts[-1])
            if last == start:
                pieces.append(None)   # one count: no slope to read
                continue
            slope_at = SLOPE_AT if start <= SLOPE_AT[0] and SLOPE_AT[1] <= last else (start, last)
            within = {n for n in counts if start <= n <= last} | {start, last, *slope_at}
            for n in within:
                kinds(n)
            pieces.append(TokenOps.affine(parts, {n: built[n] for n in sorted(within)}, slope_at))
        return TokenPieces(starts, pieces)


def _bounds(kinds, lo: int, hi: int, starts: list) -> None:
    """Append to `starts` each count in (lo, hi] where the ops' kinds differ from the count before it, by
    bisection (a kind met on neither side splits the range in two)."""
    a, b = kinds(lo), kinds(hi)
    if a == b:
        return   # (as before: a change and its reversal between two built counts would go unseen)
    if hi == lo + 1:
        starts.append(hi)
        return
    mid = (lo + hi) // 2
    m = kinds(mid)
    if m == a:
        _bounds(kinds, mid, hi, starts)
    elif m == b:
        _bounds(kinds, lo, mid, starts)
    else:
        _bounds(kinds, lo, mid, starts)
        _bounds(kinds, mid, hi, starts)


def _pricer(parts, op, lines: dict):
    """A function of n giving time_op(op at n).time_s, or None where this module does not price `op`."""
    setup = parts.setup
    gpu, eff = setup.system.gpu, setup.efficiency
    varying = {name for name, (a, _) in lines.items() if a != 0}
    if op.op_class == OpClass.COMM:   # (time_op reads only its shape)
        return _collective(op, lines, varying, setup.system.gpu_link, eff, gpu)
    if op.alu_ops or set(op.bytes) - {"hbm"} or "alu_ops" in varying or "bandwidth_share" in varying:
        return None   # CUDA-core work beside the kernel, bytes in a slower tier: not restated here
    hbm_a, hbm_b = lines.get("bytes:hbm", (0.0, 0.0))
    if op.op_class == OpClass.GEMM:
        if not parts.fitted_gemm(op) or varying - {"flops", "bytes:hbm", "shape:m"}:
            return None
        m_a, m_b = lines["shape:m"]
        sh, dtype, share, quantized = op.shape, op.dtype, op.bandwidth_share, op.input_quantized
        static = op.static_input_scale
        return lambda n: parts.gemm_seconds(m_a * n + m_b, sh.n, sh.k, dtype, hbm_a * n + hbm_b, share, quantized,
                                            static)[0]
    if op.op_class in (OpClass.TRANSFER, OpClass.ATTENTION_PREFILL, OpClass.ATTENTION_DECODE) or (
            eff.engine and kernel_timing.covers(op, gpu, kernel_timing.fit_engine(op, eff))):
        return None
    return _per_class(op, lines, gpu, eff)


def _collective(op, lines: dict, varying: set, link, eff, gpu):
    """time_op's collective branch on one node: none over one GPU, else the fitted collectives."""
    gpus = int(op.shape.gpus)
    if gpus <= 1 or link is None:
        return lambda n: 0.0
    if link.scale_out is not None or not eff.engine or varying - {"bytes:link", "shape:bytes", "bytes:hbm"}:
        return None   # (a multi-node group, the per-class collective model: not restated here)
    from ..collective_timing import collective_seconds   # (here: one GPU's steps, the issue-42 run's, need none)
    b_a, b_b = lines["shape:bytes"]
    collective, engine, cap = op.shape.collective, eff.engine, eff.custom_allreduce_max_bytes
    if op.collective_kernel:   # a fused all-reduce run by another engine's kernel (timing._per_class alike)
        engine, cap = op.collective_kernel, None
    if "bytes:hbm" not in lines:
        return lambda n: collective_seconds(collective, b_a * n + b_b, gpus, link, engine, custom_max=cap)
    # a fused epilogue's HBM pass (engine_kernels.allreduce_fused), as time_op adds it to a non-zero collective
    h_a, h_b = lines["bytes:hbm"]
    bw = gpu.hbm_bandwidth.value * eff.params(OpClass.NORM).memory_eff

    def fused(n):
        t = collective_seconds(collective, b_a * n + b_b, gpus, link, engine, custom_max=cap)
        hbm = h_a * n + h_b
        return t + hbm / bw if hbm and t else t
    return fused


def _per_class(op, lines: dict, gpu, eff):
    """time_op's per-class model of an elementwise-like op (CUDA cores, no modifiers, HBM only):
    combine(flops / (peak * compute_eff), hbm / (bandwidth * memory_eff * share)) + overhead."""
    p = eff.params(op.op_class)
    peak_c = gpu.peak_flops("fp32") * p.compute_eff   # (elementwise work runs on the CUDA cores)
    bw_m = gpu.hbm_bandwidth.value * p.memory_eff * op.bandwidth_share
    f_a, f_b = lines["flops"]
    h_a, h_b = lines.get("bytes:hbm", (0.0, 0.0))
    smooth, overhead = p.smooth, p.overhead_s
    return lambda n: ridge_floats((f_a * n + f_b) / peak_c, max((h_a * n + h_b) / bw_m, 0.0), smooth) + overhead
