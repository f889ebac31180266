"""An attention op of a pass priced by its fitted kernel model straight from a batch's groups.

The simulator prices one attention op per new batch shape, and shapes with a prefill chunk rarely
recur. roofline builds an Op (shape, HBM levels, a formula string) and kernel_timing dispatches it
through covers, the KV dtype and the memoized model terms; here the same sums (attention_work, in
attention_op's order) feed the same formulas of kernel_timing.fitted_prefill_seconds and
fitted_decode_seconds, with everything that depends only on the op (heads, dims, dtype, fits,
peaks, coverage) resolved once. The prefill model's terms are prefill_attention._prefill_parts on
plain floats with its per-op factors worked out once (PrefillTiles; a chunk's equivalent causal
length rarely recurs, so a memo would only miss); the decode terms are kernel_timing's, memoized
here by (sequences, context, peak) (decode contexts are bucketed and recur).
The seconds are kernel_timing's to the bit (tests/test_sim_attention_price.py)."""
from __future__ import annotations

import math
from typing import NamedTuple

from .. import kernel_timing
from ..attention import DECODE_MAX_QUERIES
from ..kernel_models.decode_attention import SPLIT_TOKENS
from ..kernel_models.elementwise import Floats, plain
from ..kernel_models.prefill_attention import BK, BQ, d_split, exp_seconds, pair_mma_flops
from ...specs.op_kinds import OpRole
from ..op_shapes import AttentionShape
from ..ops import OpClass
from ..ridge import ridge_floats

DECODE_MEMO = 1 << 16   # decode terms kept per op kind (contexts are bucketed: a run meets few)
MIXED_MEMO = 1 << 17   # a mixed pass's kernel prices kept per op kind (prompt lengths and decode batches)
MISSING = object()


class AttentionWork(NamedTuple):
    """What kernel_timing reads of an attention Op (op_class, role, flops, HBM bytes, dtype, shape, modifiers)."""

    op_class: OpClass
    role: OpRole
    flops: float
    hbm_bytes: float
    dtype: str
    shape: AttentionShape
    alu_ops: float = 0.0
    bandwidth_share: float = 1.0


def group_sums(groups: tuple, kv_width: float, kv_bytes: float) -> tuple:
    """(pairs, KV bytes moved, cached KV bytes, queries, sequences, longest context, all decode) of `groups`,
    each summed in attention_op's order so the floats are the same."""
    pairs = kv_io = cached = 0
    queries = sequences = max_ctx = 0
    decode = True
    for q, c, n in groups:
        pairs += n * (q * c + q * (q + 1) / 2.0) * 1.0   # (attention.causal_pairs, inline: a call a group costs)
        kv_io += n * ((c + q) * kv_width * kv_bytes)
        cached += n * (c * kv_width * kv_bytes)
        queries += n * q
        sequences += n
        if c + q > max_ctx:
            max_ctx = c + q
        decode = decode and q <= DECODE_MAX_QUERIES
    return pairs, kv_io, cached, queries, sequences, max_ctx, decode


def attention_work(groups: tuple, old, act_bytes: float, kv_bytes: float, kv_width: float) -> AttentionWork:
    """The attention op roofline.attention.attention_op builds for `groups` with `old`'s heads, dims and
    dtype (dense causal pairs, a plain cache), as the sums kernel_timing reads, each summed in
    attention_op's order so the floats are the same (tests/test_sim_pass_parts.py checks it)."""
    sh = old.shape
    heads, kv_heads, d_qk, d_v = int(sh.heads), int(sh.kv_heads), int(sh.d_qk), int(sh.d_v)
    pairs, kv_io, cached, queries, sequences, max_ctx, decode = group_sums(groups, kv_width, kv_bytes)
    q_io = queries * heads * (d_qk + d_v) * act_bytes
    shape = AttentionShape(pairs=pairs, heads=heads, kv_heads=kv_heads, d_qk=d_qk, d_v=d_v, max_context=max_ctx,
                           sequences=sequences, kv_bytes=cached, queries=queries, kv_element_bytes=kv_bytes)
    return AttentionWork(OpClass.ATTENTION_DECODE if decode else OpClass.ATTENTION_PREFILL, old.role,
                         2.0 * pairs * heads * (d_qk + d_v), q_io + kv_io, old.dtype, shape)


class KernelAttention:
    """Seconds of one instance of the attention op `old` stands for, for a batch's groups, by its kernel
    model; built only where kernel_timing covers the op (KernelAttention.of says when)."""

    def __init__(self, old, fits: tuple, act_bytes: float, kv_bytes: float, kv_width: float, engine: str | None = None):
        sh = old.shape
        self.heads, self.kv_heads, self.d = int(sh.heads), int(sh.kv_heads), int(sh.d_qk)
        self.act_bytes, self.kv_bytes, self.kv_width = act_bytes, kv_bytes, kv_width
        self.c, self.prefill, self.decode = fits
        prefill, decode = probes(old, act_bytes, kv_bytes, kv_width)
        self.peak_prefill = self.c.peak_flops(kernel_timing.attention_peak_dtype(prefill, engine))
        self.peak_decode = self.c.peak_flops(kernel_timing.attention_peak_dtype(decode))
        self.small = kernel_timing.parts_ceilings(self.c.hbm_bw, self.c.sms, self.c.clock,   # as prefill_terms passes
                                                   self.c.exp2_per_clock)
        p = self.prefill
        # the prefill model on plain floats only where prefill_parts would take that path (elementwise.evaluate)
        self.floats = plain(self.heads, self.kv_heads, self.d, kv_bytes, self.peak_prefill, self.c.sms, self.c.hbm_bw,
                            self.c.clock, self.c.exp2_per_clock, p.compute_eff, p.mem_eff, p.tile_s, p.cta_s,
                            p.token_s, p.kv_splits, p.floor_s)
        self.tiles = PrefillTiles(self.heads, self.kv_heads, self.d, kv_bytes, self.peak_prefill, self.small, p)
        self.decode_memo: dict[tuple, tuple[float, float, float]] = {}   # kernel_timing.decode_terms by (b, ctx, peak)
        self.mixed: dict[tuple, float | None] = {}   # a mixed pass's prefill or decode kernel seconds by its groups
        q = self.decode   # the decode model on plain floats where decode_parts would take that path
        self.decode_tiles = DecodeTiles(self.heads, self.kv_heads, self.d, kv_bytes, self.c.hbm_bw, self.c.sms, q) \
            if plain(self.heads, self.kv_heads, self.d, kv_bytes, self.peak_prefill, self.peak_decode, self.c.sms,
                     self.c.hbm_bw, q.mem_eff, q.compute_eff, q.kv_splits, q.seq_s, q.floor_s, q.group_rows) else None

    @staticmethod
    def of(old, gpu, fits: tuple, act_bytes: float, kv_bytes: float, kv_width: float,
           engine: str | None = None) -> KernelAttention | None:
        """The pricer of `old`, or None where kernel_timing does not price it by these fits (a dtype or
        shape the models do not cover, another KV dtype than the fits')."""
        prefill, decode = probes(old, act_bytes, kv_bytes, kv_width)
        if not (kernel_timing.covers(prefill, gpu) and kernel_timing.covers(decode, gpu)):
            return None
        return KernelAttention(old, fits, act_bytes, kv_bytes, kv_width, engine)

    def seconds(self, groups: tuple) -> float | None:
        """Seconds of one instance for `groups`, or None where the sums leave the models' cover (no pairs).
        A mixed pass runs a prefill and a decode kernel, summed in that order (roofline.attention.mixed_op),
        each priced from its own rows' sums, in attention_op's order, so the floats are those of its two ops."""
        width, size = self.kv_width, self.kv_bytes
        if len(groups) == 2 and groups[0][0] <= DECODE_MAX_QUERIES < groups[1][0]:   # (the common mixed pass)
            decoding, prefilling = groups[:1], groups[1:]
        else:
            decoding, prefilling = [], []
            for g in groups:
                (decoding if g[0] <= DECODE_MAX_QUERIES else prefilling).append(g)
            if not decoding or not prefilling:
                return self._priced(*group_sums(groups, width, size))
        # A mixed pass's two kernels recur apart (the same decoding batch beside a new prompt chunk, a prompt
        # length met before beside another batch): each kernel's price is memoized by its own groups, the
        # same float as pricing it again.
        memo = self.mixed
        prefilling, decoding = tuple(prefilling), tuple(decoding)
        pre, dec = memo.get(prefilling, MISSING), memo.get(decoding, MISSING)
        if pre is MISSING:
            pre = memo[prefilling] = self._priced(*group_sums(prefilling, width, size))
        if dec is MISSING:
            dec = memo[decoding] = self._priced(*group_sums(decoding, width, size))
        if len(memo) > MIXED_MEMO:
            memo.clear()
        return None if pre is None or dec is None else pre + dec

    def _priced(self, pairs, kv_io, cached, queries, b, max_ctx, decode: bool) -> float | None:
        """One kernel's seconds from its groups' sums. One function on purpose: it runs once per new batch
        shape, and the calls it would make (the prefill or decode formula, kernel_timing's _scaled and
        _ridge) cost as much as their arithmetic; the operations and their order are
        fitted_prefill_seconds' and fitted_decode_seconds'."""
        if not (pairs > 0 and b > 0):
            return None
        heads, d = self.heads, self.d
        flops = 2.0 * pairs * heads * (d + d)
        hbm = queries * heads * (d + d) * self.act_bytes + kv_io
        c = self.c
        if decode:   # kernel_timing.fitted_decode_seconds(...)[0]
            p, peak = self.decode, self.peak_decode
            ctx = max(max_ctx, 1.0)
            t_c, t_m, fixed = self._decode_terms(b, ctx, peak)
            nominal = 4.0 * b * ctx * heads * d
            t_c = t_c * flops / nominal if nominal > 0 and t_c > 0 else flops / (peak * p.compute_eff)
            return fixed + ridge_floats(t_c, self._memory(t_m, b, ctx, hbm), p.smooth)
        # kernel_timing.fitted_prefill_seconds(...)[0]
        p = self.prefill
        length = (math.sqrt(1.0 + 8.0 * pairs / b) - 1.0) / 2.0
        if not self.floats:   # (kernel_timing.prefill_terms without its memo: plain floats only)
            return None
        try:
            t_c, t_m, fixed = self.tiles.parts(b, length)
        except (ArithmeticError, ValueError):
            return None
        if not math.isfinite(t_c + t_m + fixed):   # (as elementwise.evaluate: numpy's answer then)
            return None
        t_c = float(t_c)
        peak = self.peak_prefill
        nominal = 4.0 * b * length * (length + 1) / 2.0 * heads * d
        t_c = t_c * flops / nominal if nominal > 0 and t_c > 0 else flops / (peak * p.compute_eff)
        t_m = max(hbm / (c.hbm_bw * p.mem_eff * 1.0), 0.0)   # (bandwidth share 1, no extra memory)
        fixed = p.floor_s + p.token_s * queries / c.sms
        total = fixed + ridge_floats(t_c, t_m, p.smooth)
        if cached > 0:   # over a cached context: never cheaper than the decode kernel streaming that cache
            ctx = max(max_ctx, 1.0)   # (the decode model's memory and fixed terms at the prefill op's peak)
            _, t_m, fixed_decode = self._decode_terms(b, ctx, peak)
            t_stream = self._memory(t_m, b, ctx, hbm)
            if fixed_decode + t_stream > total:
                return fixed_decode + t_stream
        return total

    def _memory(self, t_m, b, ctx, hbm) -> float:
        """The decode model's memory term rescaled to the op's bytes (bandwidth share 1, no extra memory)."""
        c, p = self.c, self.decode
        nominal = b * ctx * self.kv_heads * self.d * 2.0 * self.kv_bytes
        t_m = t_m * hbm / nominal if nominal > 0 and t_m > 0 else hbm / (c.hbm_bw * p.mem_eff)   # (_scaled)
        return max(t_m / 1.0, 0.0)

    def _decode_terms(self, b, ctx, peak) -> tuple[float, float, float]:
        key = (b, ctx, peak)
        terms = self.decode_memo.get(key)   # (kernel_timing's memo hashes the fit's dataclass at every call)
        if terms is None:
            terms = self.decode_tiles.parts(b, ctx, peak) if self.decode_tiles is not None else None
            if terms is None:
                c = self.c
                terms = kernel_timing.decode_terms(b, ctx, self.heads, self.kv_heads, self.d, self.kv_bytes, peak,
                                                    c.hbm_bw, c.sms, self.decode)
            self.decode_memo[key] = terms
            if len(self.decode_memo) > DECODE_MEMO:
                self.decode_memo.clear()
        return terms


class PrefillTiles:
    """prefill_attention._prefill_parts on plain floats for one op kind (no window), with what depends only on
    the op (query heads per KV head, one tile pair's time, bytes per token) worked out once: the same
    operations in the same order, so the same floats (tests/test_sim_attention_price.py)."""

    def __init__(self, heads, kv_heads, d, kv_bytes, peak, c, p):
        self.sms, self.p = c.sms, p
        self.kv_heads, self.d = float(kv_heads), float(d)
        self.group = float(heads) / float(kv_heads)
        self.passes = d_split(self.d, Floats)   # CTAs per query tile (wide heads), as _prefill_parts
        self.t_pair = max(pair_mma_flops(self.d, self.passes) / (peak / c.sms * p.compute_eff), p.tile_s,
                          exp_seconds(c.clock, Floats, c.exp2_per_clock))
        self.width = float(heads) * 4.0 + self.kv_heads * 4.0 + self.kv_heads * 2.0 * kv_bytes
        self.bandwidth = c.hbm_bw * p.mem_eff

    def parts(self, batch, seq) -> tuple[float, float, float]:
        """(t_compute, t_memory, t_fixed) as _prefill_parts(Floats, batch, seq, ..., window=0, ...)."""
        p, sms = self.p, self.sms
        batch, seq = float(batch), float(seq)
        nq = float(math.ceil(seq * self.group / BQ))
        nk = float(math.ceil(seq / BK))
        if not nk:   # (Floats.where evaluates the windowed branch too, whose 0/0 raises then)
            raise ZeroDivisionError("no key tiles")
        mean_k = (nk + 1) / 2.0     # (no window: w = inf is never below nk)
        grid = batch * self.kv_heads * nq * self.passes * (p.cta_s + mean_k * self.t_pair) / sms
        t_c = max(grid, p.cta_s + nk * self.t_pair / p.kv_splits)
        t_m = batch * seq * self.d * self.width / self.bandwidth
        return t_c, t_m, p.floor_s + p.token_s * batch * seq / sms


class DecodeTiles:
    """kernel_timing.decode_terms (decode_attention._decode_parts without a window, on plain floats) for one
    op kind, with what depends only on the op worked out once: the same operations in the same order, so the
    same floats (tests/test_sim_attention_price.py). Built only where every number the model reads but the
    batch and context is a plain float or int (elementwise.evaluate's float path)."""

    def __init__(self, heads, kv_heads, d, kv_bytes, hbm_bw, sms, p):
        self.p, self.kv_bytes, self.bw, self.sms = p, kv_bytes, hbm_bw, sms
        self.kv_heads, self.d = float(kv_heads), float(d)
        self.splits = float(math.floor(p.kv_splits))
        self.rows = float(math.ceil(float(heads) / self.kv_heads / p.group_rows)) * p.group_rows

    def parts(self, batch, context, peak) -> tuple[float, float, float] | None:
        """(t_compute, t_memory, t_fixed) as _decode_terms, or None where evaluate would leave the floats."""
        if type(batch) not in (int, float) or type(context) not in (int, float):
            return None
        p, kv_heads, d = self.p, self.kv_heads, self.d
        try:
            batch, ctx = float(batch), float(context)
            split = float(math.ceil(ctx / SPLIT_TOKENS))
            items = batch * kv_heads * (split if split < self.splits else self.splits)
            share = items / self.sms
            t_m = batch * ctx * kv_heads * d * 2.0 * self.kv_bytes / (self.bw * p.mem_eff * (share if share < 1.0
                                                                                                else 1.0))
            t_c = 4.0 * batch * ctx * kv_heads * self.rows * d / (peak * p.compute_eff)
            fixed = p.floor_s + p.seq_s * batch * kv_heads / self.sms
        except (ArithmeticError, ValueError):
            return None
        if not math.isfinite(t_c + t_m + fixed):   # (evaluate sums the three: numpy's answer then)
            return None
        return float(t_c), float(t_m), float(fixed)


def probes(old, act_bytes: float, kv_bytes: float, kv_width: float) -> tuple[AttentionWork, AttentionWork]:
    """A prefill and a decode op of `old`'s kind (for what depends only on the op: coverage, peaks)."""
    return (attention_work(((DECODE_MAX_QUERIES + 1, 1, 1),), old, act_bytes, kv_bytes, kv_width),
            attention_work(((1, 1, 1),), old, act_bytes, kv_bytes, kv_width))
