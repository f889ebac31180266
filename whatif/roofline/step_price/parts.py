"""A forward pass priced from parts that depend on different things, so the cost of timing a step (the
simulator's StepPricer) stops growing with the number of distinct batches it meets.

Without tier placement or MLA, and with no technique but those whose rewrites keep the split (Technique.splits:
a KV format's attention ops per batch, its quantize ops per token count), the ops of a pass depend on three
different things: the body (embedding, projections, MLP, norms, collectives, pipeline sends) on the token count,
the tail
(final norm, LM head, logits gather, sampling) on the logit rows, and attention on the sequence
groups. The body and the tail are timed once per value (tables bounded by the token budget and the
batch size; each op from its numbers as slope * n + intercept where token_ops.py finds them affine,
else from the ops built at n), attention per pass (its groups rarely recur: the caller memoizes whole
steps), and the pass is assembled as forward_pass.time_pass assembles it:
- CUDA graphs: kernels in sequence plus a gap each;
- eager: the launch queue (see queue_lines), in closed form over the attention op's time.
A GEMM's shape terms come from one vectorized gemm_parts call per (n, k) over every row count; an
attention op timed by a kernel model is priced from its groups' sums (attention.py), not a built Op.
A technique's attention ops are built per batch (graph.attention_block's arguments, its rewrite_ops) and the ops
it appends after the tail (extra_ops) are a third part per token count.
Results equal time_pass's and engine_step's up to float summation order
(tests/test_sim_pass_parts.py checks it).
Long because: the pass's assembly (graphs, eager launch queue) and each part's pricing sit beside the queue lines
they share; a split would pass the Part internals between modules.
`splittable` says when the split holds; otherwise the caller times whole passes."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field, replace

import numpy as np

from ..attention import attention_op
from ..config import ForwardBatch
from ..context import kv_width_per_gpu, pass_context
from ..engine_kernels import engine_ops
from ..graphless_step import graphless_step
from ..kernel_models.params import DTYPE_BYTES, ceilings
from ..kernel_models.gemm import gemm_parts
from .. import kernel_timing
from ...specs.op_kinds import OpRole
from ..ops import OpClass, link_bytes
from ..pass_setup import PassSetup
from ..ridge import ridge_floats
from ..tiers import host_path
from ..timing import OpTime, time_op
from .attention import KernelAttention, probes
from .token_ops import AFTER, TokenOps, TokenPieces, stage_ops


# Rows a GEMM table holds at least; one past them rebuilds it at the next power of two (was twice that: 8,192 rows
# for m = 4,096: a table costs ~0.2 us a row; gemm_parts is elementwise, so a row's terms do not depend on the
# table's length)
GEMM_TABLE_ROWS = 4096


def splittable(setup: PassSetup) -> bool:
    """Whether a pass of `setup` is token ops + attention ops: every technique declares that its rewrites keep
    that split (Technique.splits; tests/test_sim_pass_parts.py prices each split and whole)."""
    return (all(t.splits for t in setup.techniques.items) and not setup.placement and setup.model.mla is None
            and setup.model.uniform_attention and not setup.shared_prefix
            and not setup.parallel.dp_attention)   # DP attention splits by sequence


@dataclass(frozen=True)
class Part:
    """Ops of one stage that depend on one thing (the token count, or the logit rows)."""

    totals: tuple[float | None, ...]   # each op's time (all its instances), None for attention
    kernels: int                       # kernel instances, attention included
    lines: tuple[tuple[int, float], ...]   # eager queue: (attention instances m, c_m), see queue_lines
    attention: tuple = ()              # the attention ops (built for some batch; priced per batch)
    pricers: tuple = ()                # each attention op's KernelAttention, None where its model does not apply
    sum_s: float = field(init=False, default=0.0)   # sum(totals) of a part without attention (a tail)

    def __post_init__(self):
        if None not in self.totals:
            object.__setattr__(self, "sum_s", sum(self.totals))


class PassParts:
    """Pass times of one PassSetup from memoized parts (see the module docstring)."""

    def __init__(self, setup: PassSetup, launch_s: float | None = None, tables_of: PassParts | None = None):
        self.setup = setup
        eff, gpu = setup.efficiency, setup.system.gpu
        self.gap = eff.kernel_gap_s
        # `launch_s`: the host's time a kernel where not the GPU profile's (the graphless sibling below)
        self.launch = (gpu.launch_overhead.value if launch_s is None else launch_s) if eff.source != "ideal" else 0.0
        # What depends on the setup alone (not on the launch cost): the GEMM tables and fits, the token ops' affine
        # pieces (token_ops.TokenPieces). `tables_of`: the PassParts whose tables these are (the graphless sibling
        # shares its parent's: building them twice was ~10 ms of a 10,000-request simulate's ~0.5 s)
        if tables_of is None:
            self.gemm_tables: dict[tuple, tuple[list, list]] = {}
            self.gemm_fits: dict[str, tuple] = {}   # per dtype: (the GEMM fit, the GPU's ceilings)
            self.token_pieces: dict[tuple[int, bool | str], TokenPieces | None] = {}   # per (stage, tail)
            self.whole_passes: dict[tuple[int, int], list] = {}   # the passes they were read from (stage_ops)
        else:
            self.gemm_tables, self.gemm_fits = tables_of.gemm_tables, tables_of.gemm_fits
            self.token_pieces, self.whole_passes = tables_of.token_pieces, tables_of.whole_passes
        engine = setup.engine_spec   # vLLM steps above its capture sizes run with no graph (graphless_step.py)
        self.graphless = PassParts(setup, engine.piecewise_call_s, self) if launch_s is None and self.launch \
            and engine is not None and graphless_step(engine, engine.mixed_graph_tokens + 1) else None
        self.kv_width = kv_width_per_gpu(setup.model, setup.parallel.tp)
        self.stages = range(setup.parallel.pp)
        self.bodies: dict[int, tuple[Part, ...]] = {}
        self.tails: dict[int, tuple[Part, ...]] = {}
        # ops a technique appends after the tail (TechniqueSet.ops), per token count; None without techniques
        self.afters: dict[int, tuple[Part, ...]] | None = {} if setup.techniques else None
        self.context = (setup.techniques, host_path(setup.system, setup.parallel.gpus)) if setup.techniques else None
        self.shared: dict[tuple[int, bool], tuple | None] = {}   # per (stage, tail): see _shared
        self.attention_pricers: dict[tuple, KernelAttention | None] = {}   # per attention op kind
        self.context_of = None   # _attention_s's PassContext (of the first batch it met; see there)

    def step_s(self, groups: tuple, logits: int, cuda_graphs: bool, passes: int = 1) -> float:
        """Wall seconds of one serving step of the batch, as forward_pass.engine_step prices it: decode
        batches in CUDA graphs (with `cuda_graphs`; padded to a captured size with an engine spec),
        anything with a prefill eagerly, and the engine's CPU work per step (once for `passes` passes)."""
        engine = self.setup.engine_spec
        tokens = sequences = 0   # ForwardBatch's tokens, sequences, verify and is_decode, in one pass
        ones, multi = True, False
        for q, _, n in groups:
            tokens += q * n
            sequences += n
            ones = ones and q == 1
            multi = multi or q > 1
        decode = (logits == tokens > 0 and multi) or ones
        graphs = cuda_graphs and decode
        if engine is None:
            return passes * self._pass_s(groups, tokens, logits or sequences, graphs)
        real = sequences
        if graphs and logits == 0:   # a plain decode step (verify passes keep their own shape)
            padded = engine.graph_batch(real)
            graphs = padded is not None
            if padded is not None and padded > real:   # ForwardBatch(groups + ((1, 1, padded - real),), real)
                groups, tokens = groups + ((1, 1, padded - real),), tokens + (padded - real)
                logits, sequences = real, padded
        elif not decode:
            graphs = cuda_graphs and engine.graph_prefill
        parts = self.graphless if self.graphless is not None and not graphs and graphless_step(engine, tokens) \
            else self
        return engine.step_seconds(passes * parts._pass_s(groups, tokens, logits or sequences, graphs), real)

    def time_s(self, groups: tuple, logits: int, cuda_graphs: bool) -> float:
        """Seconds of a pass of `groups` ((new, cached, sequences) each) with `logits` LM-head rows
        (0: one per sequence), as time_pass(setup, ForwardBatch(groups, logits), cuda_graphs).time_s."""
        batch = ForwardBatch(groups, logits)
        graphless = self.graphless is not None and not cuda_graphs and graphless_step(self.setup.engine_spec,
                                                                                      batch.tokens)
        return (self.graphless if graphless else self)._pass_s(batch.groups, batch.tokens, batch.logit_rows,
                                                                 cuda_graphs)

    def _pass_s(self, groups: tuple, tokens: int, rows: int, cuda_graphs: bool) -> float:
        """Seconds of a pass of `groups`, `tokens` new tokens in all, with `rows` LM-head rows."""
        bodies = self.bodies.get(tokens) or self._parts(self.bodies, tokens, tail=False)
        tails = self.tails.get(rows) or self._parts(self.tails, rows, tail=True)
        afters = self.afters
        if afters is not None:   # (set with self.context: a technique's attention ops read the pass's batch)
            afters = afters.get(tokens) or self._parts(afters, tokens, tail=AFTER)
            groups = (groups, rows)
        total = 0.0
        for i, (body, tail) in enumerate(zip(bodies, tails)):
            after = afters[i] if afters is not None and afters[i].totals else None
            # (the caller memoizes whole steps) the common case first: one attention kind, priced by its model
            pricers = body.pricers
            each = pricers[0].seconds(groups) if len(pricers) == 1 and pricers[0] is not None else None
            attn_totals = None
            if each is None:
                each, attn_totals = self._attention_s(body, groups)
            if cuda_graphs or not self.launch:   # summed in time_pass's order, so the same float results
                if attn_totals is None:
                    attn_totals = (each * body.attention[0].count,)
                serial, k = 0.0, 0
                for t in body.totals:
                    if t is None:
                        t, k = attn_totals[k], k + 1
                    serial += t
                for t in tail.totals:
                    serial += t
                if after is None:
                    total += serial + (body.kernels + tail.kernels) * self.gap
                    continue
                for t in after.totals:
                    serial += t
                total += serial + (body.kernels + tail.kernels + after.kernels) * self.gap
            else:
                # the body's queue lines, then the tail back to back after it or after its own last wait
                a = each + self.gap
                tail_wait = tail.lines[0][1] if tail.lines else 0.0   # the tail has no attention: one line
                lines = body.lines
                if len(lines) == 1:   # (the common case, without a generator)
                    (m, c), = lines
                    queue = c + m * a
                else:
                    queue = max(c + m * a for m, c in lines)
                end = max(queue + tail.sum_s + tail.kernels * self.gap, body.kernels * self.launch + tail_wait)
                if after is not None:   # its ops back to back after the tail, or after their own last wait
                    end = max(end + after.sum_s + after.kernels * self.gap,
                              (body.kernels + tail.kernels) * self.launch + after.lines[0][1])
                total += end
        return total

    def _parts(self, table: dict, n: int, tail: bool | str) -> tuple[Part, ...]:
        """Each stage's body for `n` tokens, or its tail for `n` logit rows, or (AFTER) the ops a technique appends
        after the tail for `n` tokens."""
        parts = []
        for stage in self.stages:
            key = (stage, tail)
            pieces = self.shared[key] if key in self.shared else self._shared(stage, tail)
            shared = None if pieces is None else pieces[1][bisect_right(pieces[0], n) - 1]
            if shared is None:   # the ops built at n
                ops = stage_ops(self.setup, stage, n, tail)
                attention = [i for i, op in enumerate(ops) if op.role == OpRole.ATTENTION]
                times = [None if i in attention else self._op_time(op) for i, op in enumerate(ops)]
                seconds = [None if t is None else t.time_s for t in times]
                lines = queue_lines(layer_runs(ops), seconds, attention, self.launch, self.gap) if self.launch else ()
                old = tuple(ops[i] for i in attention)
                parts.append(Part(tuple(None if t is None else t.total_s for t in times),
                                  sum(op.count for op in ops if op.op_class != OpClass.TRANSFER), lines, old,
                                  tuple(map(self._pricer, old))))
                continue
            fast, counts, attention, runs, kernels, old, pricers = shared   # each op from its numbers at n
            seconds = fast.seconds(n)
            lines = queue_lines(runs, seconds, attention, self.launch, self.gap) if self.launch else ()
            parts.append(Part(tuple(None if t is None else t * k for t, k in zip(seconds, counts)), kernels, lines,
                              old, pricers))
        table[n] = tuple(parts)
        return table[n]

    def _shared(self, stage: int, tail: bool | str) -> tuple | None:
        """What a stage's body (or tail) priced by TokenOps has at every count of each piece of the token range
        (token_ops.TokenPieces): (the pieces' first counts, per piece (the TokenOps, each op's count, the
        attention ops' indices, layer runs, kernel instances, attention ops, their pricers) or None where
        TokenOps does not apply to it (the ops are built per count)); None where it applies to no piece."""
        key = (stage, tail)
        if key in self.token_pieces:   # (the sibling's: the same ops and prices, its own launch queue below)
            fast = self.token_pieces[key]
        else:
            fast = self.token_pieces[key] = TokenOps.of(self, stage, tail)
            if len(self.token_pieces) == len(self.stages) * (2 if self.afters is None else 3):
                self.whole_passes.clear()   # (every stage's pieces read: not kept for the setup's life)
        shared = None
        if fast is not None:
            shared = (fast.starts, [None if piece is None else self._piece(piece) for piece in fast.pieces])
        self.shared[(stage, tail)] = shared
        return shared

    def _piece(self, fast: TokenOps) -> tuple:
        ops = fast.template
        attention = [i for i, op in enumerate(ops) if op.role == OpRole.ATTENTION]
        old = tuple(ops[i] for i in attention)
        kernels = sum(op.count for op in ops if op.op_class != OpClass.TRANSFER)
        return (fast, [op.count for op in ops], attention, layer_runs(ops) if self.launch else None, kernels,
                old, tuple(map(self._pricer, old)))

    def _attention_s(self, part: Part, groups: tuple) -> tuple[float, tuple[float, ...]]:
        """(seconds of one attention instance, each attention op's total) of a stage for `groups`, the
        ops built as graph.attention_block builds them (dense and MoE layers' attention ops are alike); _pass_s
        tries a single kind's model first."""
        s = self.setup
        prec = s.precision
        each, totals = 0.0, []
        techs = ctx = None
        if self.context is not None:   # groups: (groups, logit rows), see _pass_s
            (groups, rows), (techs, host) = groups, self.context
            batch = ForwardBatch(groups, rows)
            # as graph.attention_block and TechniqueSet.ops build the pass's attention ops; a technique that splits
            # keeps every token and pair (Technique.splits), so its attended groups are the batch's, none gathered
            if self.context_of is None:   # (its other fields are the setup's: built once, the batch swapped in)
                ctx = self.context_of = pass_context(s.model, batch, s.parallel, prec, transform_kv=techs.kv,
                                                     host=host, sm_count=int(s.system.gpu.sm_count.value))
            else:
                ctx = replace(self.context_of, batch=batch)
            kv = ctx.kv
            cost = {"kv_read": lambda n: kv.token_bytes(n, self.kv_width)}
        for old, pricer in zip(part.attention, part.pricers):
            sh = old.shape
            fast = pricer.seconds(groups) if pricer is not None else None
            if fast is not None:
                each = fast
                totals.append(fast * old.count)
                continue
            op = attention_op(groups, heads=int(sh.heads), kv_heads=int(sh.kv_heads), d_qk=int(sh.d_qk),
                              d_v=int(sh.d_v), act_bytes=prec.act_bytes, kv_bytes=prec.kv_bytes,
                              kv_width=self.kv_width, count=old.count, dtype=old.dtype, name=old.name, role=old.role,
                              **(cost if techs else {}))
            ops = [op]
            if techs:
                for t in techs.items:
                    ops = t.rewrite_ops(ops, ctx)
            # as forward_pass.time_pass: an engine version's own kernels (eager attention: two ops)
            run = [time_op(o, s.system.gpu, s.efficiency, s.system.gpu_link, s.paths)
                   for o in engine_ops(ops, s.engine_spec)]
            each = sum(t.time_s for t in run)
            totals.append(sum(t.total_s for t in run))
        return each, tuple(totals)

    def _pricer(self, old) -> KernelAttention | None:
        """The attention op `old`'s pricer by its kernel model straight from a batch's groups (attention.py,
        not a built Op: ~30 us, with a formula string), one per kind of attention op; None where that does
        not hold: no engine fit, an op the fits do not cover, an engine version that reads the GQA cache per
        query head (engine_ops rewrites the op)."""
        if self.context is not None:   # a technique's attention op: built per batch (_attention_s)
            return None
        sh = old.shape
        key = (sh.heads, sh.kv_heads, sh.d_qk, sh.d_v, old.dtype, old.role)
        if key not in self.attention_pricers:
            self.attention_pricers[key] = self._attention_pricer(old)
        return self.attention_pricers[key]

    def _attention_pricer(self, old) -> KernelAttention | None:
        s = self.setup
        sh = old.shape
        if (not s.efficiency.engine or old.role != OpRole.ATTENTION or sh.d_qk != sh.d_v
                or (s.engine_spec is not None and s.engine_spec.eager_attention)
                or (s.engine_spec is not None and sh.heads > sh.kv_heads
                    and not s.engine_spec.shares_gqa_decode(sh.heads / sh.kv_heads))):
            return None
        act, kv = s.precision.act_bytes, s.precision.kv_bytes
        gpu = s.system.gpu
        # as kernel_timing.op_seconds dispatches a covered attention op (not MLA: splittable excludes it)
        kv_dtype = kernel_timing.kv_fit_dtype(probes(old, act, kv, self.kv_width)[0])
        fits = kernel_timing.attention_fits(gpu, s.efficiency.engine, kv_dtype, sh.heads, sh.kv_heads,
                                            s.efficiency.kernel_params)
        return KernelAttention.of(old, gpu, fits, act, kv, self.kv_width, s.efficiency.engine)

    def fitted_gemm(self, op) -> bool:
        """Whether `op` is a dense GEMM time_op prices by its fitted kernel model alone (gemm_seconds)."""
        s = self.setup
        return bool(s.efficiency.engine and op.op_class == OpClass.GEMM and op.shape.groups == 1.0 and not op.alu_ops
                    and not op.bmm_fit   # an absorbed-MLA bmm: its own fit (kernel_timing.absorb_bmm_seconds)
                    and op.dtype != "fp32"   # an SGEMM: kernel_timing.gemm_seconds' own branch (time_op)
                    and kernel_timing.covers(op, s.system.gpu) and not link_bytes(op))

    def _op_time(self, op) -> OpTime:
        s = self.setup
        if self.fitted_gemm(op):
            sh = op.shape
            return OpTime(op, *self.gemm_seconds(sh.m, sh.n, sh.k, op.dtype, op.hbm_bytes, op.bandwidth_share,
                                                 op.input_quantized, op.static_input_scale))
        return time_op(op, s.system.gpu, s.efficiency, s.system.gpu_link, s.paths)

    def gemm_seconds(self, m: float, n: float, k: float, dtype: str, hbm_bytes: float, bandwidth_share: float,
                     input_quantized: bool = False,
                     static_input_scale: bool = False) -> tuple[float, float, float, float, str]:
        """(time, compute, memory, fixed, bound) of kernel_timing.gemm_seconds for a dense GEMM, its shape
        terms from a table over m evaluated in one vectorized gemm_parts call (one scalar call costs ~0.1 ms;
        a pass has a new m at each token count)."""
        fit = self.gemm_fits.get(dtype)
        if fit is None:
            gpu, engine = self.setup.system.gpu, self.setup.efficiency.engine
            fit = self.gemm_fits[dtype] = (kernel_timing.fitted("gemm", gpu, dtype, engine,
                                                                self.setup.efficiency.kernel_params), ceilings(gpu))
        p, c = fit
        rows = int(m)
        if rows != m:   # not a whole row count (an expert's share of the tokens): no table
            t_c, _, t_quant = gemm_parts(m, n, k, DTYPE_BYTES[dtype], c.peak_flops(dtype), c, p)
        else:
            key = (n, k, dtype)
            table = self.gemm_tables.get(key)
            if table is None or rows >= len(table[0]):
                ms = np.arange(max(GEMM_TABLE_ROWS, 1 << rows.bit_length()), dtype=float)
                ms[0] = 1.0
                t_c, _, t_quant = gemm_parts(ms, n, k, DTYPE_BYTES[dtype], c.peak_flops(dtype), c, p)
                table = self.gemm_tables[key] = (np.broadcast_to(t_c, ms.shape).tolist(),
                                                 np.broadcast_to(t_quant, ms.shape).tolist())
            t_c, t_quant = table[0][rows], table[1][rows]
        t_c, t_quant = float(t_c), float(t_quant)
        t_m = hbm_bytes / (c.hbm_bw * p.mem_eff * bandwidth_share)
        fixed = p.floor_s + kernel_timing.input_quant_seconds(m, k, t_quant, input_quantized, static_input_scale,
                                                              self.setup.system.gpu, self.setup.efficiency.engine)
        total = fixed + ridge_floats(t_c, t_m, p.smooth)   # (params.combine on floats; 0 when both terms are)
        bound = "compute" if t_c >= t_m else "memory"
        if fixed > max(t_c, t_m):
            bound = "overhead"
        return total, t_c, t_m, fixed, bound


def queue_lines(runs, seconds, attention, launch_s: float, gap_s: float,
                every_repeat: bool = False) -> tuple[tuple[int, float], ...]:
    """The eager launch queue of a stage as lines in the attention instance's time a (gap included), from
    its layer runs (layer_runs) and each op's seconds per instance (None for the attention ops).

    forward_pass.launch_queue_time runs, per kernel instance j launched at j*L (L = launch_s):
    free_j = max(free_{j-1}, j*L) + d_j, with d_j its time plus the gap. Unrolled, the stage ends at
    max over j of (j*L + d_j + ... + d_N): the last moment the GPU waited for a launch, then every
    kernel after it back to back. With the attention instances priced per batch, that is
    max over m of (c_m + m*a), m the attention instances from j on, c_m the largest j*L plus the
    other kernels' times from j on; only lines on the upper envelope for a >= 0 are kept."""
    first, j = [], 0   # 0-based index of each run's first kernel instance
    for start, stop, reps in runs:
        first.append(j)
        j += (stop - start) * reps
    best: dict[int, float] = {}
    low = -np.inf
    after_s, after_m = 0.0, 0   # the kernels after the run: their time, their attention instances
    for (start, stop, reps), j0 in zip(reversed(runs), reversed(first)):
        d = [0.0 if i in attention else seconds[i] + gap_s for i in range(start, stop)]
        k, layer_s, layer_m = stop - start, sum(d), sum(1 for i in range(start, stop) if i in attention)
        # within one repeat: for each count of attention ops from offset o on, the largest o*L + d_o + ... + d_k
        within: dict[int, float] = {}
        w, a = 0.0, 0
        for o in range(k - 1, -1, -1):
            w += d[o]
            if start + o in attention:
                a += 1
            c = o * launch_s + w
            if c > within.get(a, low):   # (max, keeping the first of equals)
                within[a] = c
        base = (j0 + 1) * launch_s + after_s + (reps - 1) * layer_s
        # A GPU-bound layer (its kernels outlast their launches: shift falls with rep) needs only its first
        # repeat: a later repeat's line lies below the one before it, which has more attention instances
        # (or the same line), so the envelope below drops it either way.
        # (every_repeat: all of them, as a check)
        lines = tuple(within.items())
        step = k * launch_s - layer_s
        for rep in range(1 if step <= 0 and not every_repeat else reps):   # j = j0 + rep*k + o
            shift = base + rep * step   # (the repeats after it add their time)
            top = after_m + (reps - 1 - rep) * layer_m
            for a, c in lines:
                v = shift + c
                if v > best.get(top + a, low):
                    best[top + a] = v
        after_s += reps * layer_s
        after_m += reps * layer_m
    # keep a line only where no line with more attention instances starts as high (it wins for every a >= 0)
    kept, top = [], low
    for m, c in sorted(best.items(), reverse=True):
        if c > top:
            kept.append((m, c))
            top = c
    return tuple(kept)


def layer_runs(ops) -> list[tuple[int, int, int]]:
    """(start, stop, repeats) of the ops in execution order, as launch_queue_time reads them: a run of
    ops with the same count > 1 is one layer, repeated count times; any other op runs once."""
    if any(op.op_class == OpClass.TRANSFER for op in ops):   # (none without techniques or placement)
        raise ValueError("layer_runs: a stage with transfers is timed whole")
    runs, i = [], 0
    while i < len(ops):
        j = i + 1
        if ops[i].count > 1:
            while j < len(ops) and ops[j].count == ops[i].count:
                j += 1
        runs.append((i, j, ops[i].count))
        i = j
    return runs
