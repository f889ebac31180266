"""How long an iteration takes, asked of roofline: its time from the batch's shape, memoized on a
bucketed shape, and the KV capacity, swap and transfer times of a replica.

An iteration's batch is a decode group (sequences, mean context) and prefill chunks (tokens,
cached context). Contexts are rounded to a geometric grid with steps of 2^(1/32) (about 2%) before
the roofline is asked; token and sequence counts are kept exact, because GEMM time steps at tile
and wave boundaries (517 tokens cost a quarter more than 512), so rounding them would move a pass's
time by far more than its share of tokens. A new shape's seconds come from roofline's StepPricer
(step_price/: memoized parts where the pass splits), so whole-pass evaluations stop growing with the run."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from ..errors import WhatifError
from ..specs.hardware import System, load_component
from ..roofline.config import ForwardBatch
from ..roofline.decode_round import Round, RoundContext
from ..roofline.ops import transfer
from ..roofline.memory import plan_memory
from ..roofline.overflow_text import tiers_over
from ..roofline.pass_setup import PassSetup
from ..roofline.context import HostPath
from ..roofline.tiers import host_path
from ..roofline.step_price import StepPricer
from ..roofline.timing import time_op

GRID_STEPS_PER_DOUBLING = 32
EXACT_BELOW = 64          # contexts up to this are used exactly
GIB = 2 ** 30
MEMO_LIMIT = 100_000      # iteration shapes memoized (~30 MB); past it the memo starts over


def bucket(x: int) -> int:
    """Context `x` rounded to the nearest point of the geometric grid (exact up to EXACT_BELOW)."""
    if x <= EXACT_BELOW:
        return x
    b = BUCKETS.get(x)
    if b is None:   # (a run meets each context many times: the log costs more than the lookup)
        b = BUCKETS[x] = round(2.0 ** (round(math.log2(x) * GRID_STEPS_PER_DOUBLING) / GRID_STEPS_PER_DOUBLING))
    return b


BUCKETS: dict[int, int] = {}   # bucket's memo, one entry per context length a run meets (decode_run reads it)


def bucket_span(x: int) -> tuple[int, int]:
    """(lo, hi): the contexts that round to the bucket of `x` (an interval: `bucket` never decreases with
    x), found by galloping out from x and bisecting; a decode run reprices only when it leaves them."""
    b = bucket(x)
    if x <= EXACT_BELOW:
        return x, x
    span = _SPANS.get(b)
    if span is not None:
        return span
    ends = []
    for sign in (-1, 1):
        inside, step = x, 1
        while bucket(inside + sign * step) == b:   # gallop: the bucket spans about 2% of x
            inside += sign * step
            step *= 2
        outside = inside + sign * step
        while abs(outside - inside) > 1:           # bisect between the last inside and the first outside
            mid = (inside + outside) // 2
            if bucket(mid) == b:
                inside = mid
            else:
                outside = mid
        ends.append(inside)
    _SPANS[b] = ends[0], ends[1]
    return _SPANS[b]


_SPANS: dict[int, tuple[int, int]] = {}   # bucket_span's memo, by bucket (a few hundred up to a million tokens)


@dataclass
class IterationTimes:
    """Iteration times and KV figures of one replica (one PassSetup), memoized."""

    setup: PassSetup
    cuda_graphs: bool
    block_size: int
    token_budget: int
    plan_seq_len: int                 # sequence length the KV bytes per token are averaged over
    scheduler_steps: int = 1          # decode passes per scheduled decode iteration (multi-step scheduling)
    cache: dict = field(default_factory=dict)
    quotes: dict = field(default_factory=dict)   # decode_span's answers by (rows, context bucket)
    draft_prefills: dict = field(default_factory=dict)   # draft_prefill's seconds by chunk tokens
    send_memos: dict = field(default_factory=dict)   # send_time's seconds by (path, tokens, copies)
    hits: int = 0
    misses: int = 0

    def __post_init__(self):
        plan = plan_memory(self.setup, 1, self.plan_seq_len, self.token_budget)
        self.kv_bytes_per_token = plan.sequence_kv_bytes(self.plan_seq_len) / self.plan_seq_len
        free = plan.free_for_kv
        if free <= 0 or self.kv_bytes_per_token <= 0:
            over = plan.overflow()
            detail = tiers_over(over) if over else "no room"
            raise WhatifError(f"{self.setup.model.name} leaves no memory for a KV cache on {self.setup.system.name} "
                              f"with tp={self.setup.parallel.tp} pp={self.setup.parallel.pp} ({detail}); try more GPUs "
                              f"(--tp/--pp), a smaller --weight-dtype or offloading (--place)")
        # attention-DP: the group's blocks, 1/dp each rank's own (rank_group.py splits them)
        self.kv_blocks = int(free // (self.kv_bytes_per_token * self.block_size)) * plan.sequence_groups
        self.pricer = StepPricer(self.setup)
        self.layers_per_gpu = math.ceil(self.setup.model.num_layers / self.setup.parallel.pp)
        self.decoder = self.setup.techniques.decoder
        self.rounds: dict[tuple[int, int], Round] = {}
        self.lookahead = 0   # KV slots a decoding row needs beyond its next token (drafted tokens verified)
        if self.scheduler_steps > 1:   # each row decodes that many tokens an iteration, its slots taken up front
            if self.decoder is not None:
                raise WhatifError(f"--scheduler-steps {self.scheduler_steps}: multi-step scheduling runs plain "
                                  f"decode steps; --technique {self.decoder.name} decodes in rounds of its own "
                                  f"(vLLM refuses the two together); valid: --scheduler-steps 1")
            self.lookahead = self.scheduler_steps - 1
        if self.decoder is not None:
            if not self.decoder.first_token_from_prefill:
                raise WhatifError(f"--technique {self.decoder.name}: the serving simulator schedules autoregressive "
                                  f"requests; a decoder that emits blocks of tokens is only estimated "
                                  f"(`whatif estimate`)")
            widths = [self.round(b, self.plan_seq_len).verify.batch.groups[0][0] for b in (1, 256)]
            self.lookahead = max(widths) - 1
        # Only then does the memo's (1, context, rows) key hold a plain decode pass at that context (a decoder
        # keys its verify width, multi-step its iterations' middle context): decode_time/decode_span read it
        self.plain_decode = self.decoder is None and self.scheduler_steps == 1

    def time(self, decode_seqs: int, decode_context: int, prefills: list[tuple[int, int]]) -> float:
        """Seconds of an iteration: `decode_seqs` sequences decoding one token each (or one round of
        the decoder, or `scheduler_steps` tokens of a decode-only iteration) after `decode_context` cached
        tokens on average, and prefill chunks of (tokens, cached tokens)."""
        if self.plain_decode and len(prefills) == 1:   # (the common step, read from the memo without the rest)
            q, c = prefills[0]
            ctx = decode_context if decode_context <= EXACT_BELOW else BUCKETS.get(decode_context) or bucket(
                decode_context)
            chunk = (q, c if c <= EXACT_BELOW else BUCKETS.get(c) or bucket(c), 1)
            key: tuple = ((1, ctx, decode_seqs), chunk) if decode_seqs else (chunk,)
            t = self.cache.get(key)
            if t is not None:
                self.hits += 1
                return t
            passes, rnd = 1, None   # (a plain decode's: the key below would be this one; prompt shapes mostly miss)
        else:
            passes = self.scheduler_steps if decode_seqs and not prefills else 1
            # (a multi-step iteration's passes see the contexts c .. c + passes - 1: priced at their middle)
            ctx = bucket(decode_context + (passes - 1) // 2)
            rnd = self.round(decode_seqs, ctx) if self.decoder is not None and decode_seqs else None
            width = rnd.verify.batch.groups[0][0] if rnd is not None else 1
            decode = ((width, ctx, decode_seqs),) if decode_seqs else ()
            if len(prefills) == 1:   # (the common case, without a sort)
                q, c = prefills[0]
                key = decode + ((q, bucket(c), 1),)
            else:
                key = decode + tuple(sorted([(q, bucket(c), 1) for q, c in prefills]))
            t = self.cache.get(key)
            if t is not None:
                self.hits += 1
                return t
        self.misses += 1
        groups = key
        if len(key) > 2 or (len(key) == 2 and key[0][:2] == key[1][:2]):
            merged: dict[tuple[int, int], int] = {}   # equal chunks are one group of several sequences
            for q, c, n in key:
                merged[(q, c)] = merged.get((q, c), 0) + n
            groups = tuple((q, c, n) for (q, c), n in merged.items())
        logits = decode_seqs * width + len(prefills) if rnd is not None else 0   # verified rows need all logits
        t = self.pricer.group_seconds(groups, logits, self.cuda_graphs, passes)
        if rnd is not None:   # drafting and per-round work beside the (fused) verify pass
            t = rnd.time_with_verify(t)
        if self.decoder is not None:   # (draft_prefill's own test, before a call per new shape)
            t += self.draft_prefill(prefills)
        if len(self.cache) >= MEMO_LIMIT:   # prefill shapes rarely recur: memory stays bounded on long runs
            self.cache.clear()
            self.quotes.clear()
        self.cache[key] = t
        return t

    def group_time(self, shapes: list[tuple[int, int, list[tuple[int, int]]]]) -> float:
        """Seconds of an attention-DP step whose busy ranks run `shapes`, each (decode sequences, mean decode context,
        prefill chunks) as `time` takes them: the ranks step together (every MoE layer gathers all ranks' tokens),
        so the step takes its slowest rank, each rank priced on its own batch and CPU with the experts seeing the
        group's tokens. A rank with no work joins the experts' collectives only (never the slowest: left out).
        With a decoder every rank's decode rows verify the round's width of tokens, and the round's drafting (its
        head laid out as the target, run by all ranks together) is priced for the group's decode rows beside it."""
        if self.scheduler_steps > 1:
            raise WhatifError("per-rank attention-DP simulation runs one decode pass per step; multi-step "
                              "scheduling is not simulated per rank (estimate it)")
        rnd, width = self._group_round(shapes)
        ranks = [self._rank_groups(*shape, width) for shape in shapes]
        tokens = [sum(q * n for q, _, n in g) for g in ranks]
        total, prefilling = sum(tokens), any(q > 1 for s in shapes for q, _ in s[2])
        slowest = 0.0
        for (decode_seqs, _, prefills), groups, own in zip(shapes, ranks, tokens):
            others = bucket(total - own)   # (the experts' rows: rounded to the context grid, as contexts are)
            logits = decode_seqs * width + len(prefills) if rnd is not None else 0   # verified rows need all logits
            key = ("dp", groups, others, prefilling, logits)
            t = self.cache.get(key)
            if t is None:
                self.misses += 1
                filler = (() if not others else ((others, 0, 1),) if prefilling else ((1, 1, others),))
                local = ForwardBatch(groups, logits)
                whole = groups + filler   # (a verify step of every rank keeps its verify shape: all logits)
                wide = logits if prefilling else logits and sum(q * n for q, _, n in whole)
                t = self.pricer.seconds(ForwardBatch(whole, wide, local), self.cuda_graphs)
                if len(self.cache) >= MEMO_LIMIT:
                    self.cache.clear()
                    self.quotes.clear()
                self.cache[key] = t
            else:
                self.hits += 1
            t += self.draft_prefill(prefills)
            slowest = t if t > slowest else slowest
        return rnd.time_with_verify(slowest) if rnd is not None else slowest

    def _group_round(self, shapes) -> tuple[Round | None, int]:
        """The decoder's round for the whole group's decode rows (at their mean context) and its verify width;
        (None, 1) without a decoder or decode rows."""
        rows = sum(s[0] for s in shapes)
        if self.decoder is None or not rows:
            return None, 1
        rnd = self.round(rows, bucket(sum(s[0] * s[1] for s in shapes) // rows))
        return rnd, rnd.verify.batch.groups[0][0]

    @staticmethod
    def _rank_groups(decode_seqs: int, decode_context: int, prefills: list[tuple[int, int]], width: int = 1) -> tuple:
        """One rank's batch as (new, cached, sequences) groups, contexts on the grid, equal chunks merged."""
        merged: dict[tuple[int, int], int] = {}
        if decode_seqs:
            merged[(width, bucket(decode_context))] = decode_seqs
        for q, c in prefills:
            merged[(q, bucket(c))] = merged.get((q, bucket(c)), 0) + 1
        return tuple(sorted((q, c, n) for (q, c), n in merged.items()))

    def decode_time(self, rows: int, context: int) -> float:
        """time(rows, context, []): a decode-only iteration, its memo looked up first (the common case)."""
        t = self.cache.get(((1, bucket(context), rows),)) if self.plain_decode else None
        if t is None:
            return self.time(rows, context, [])
        self.hits += 1
        return t

    def decode_span(self, rows: int, context: int) -> tuple[float, int]:
        """(0.0 + decode_time(rows, context), bucket_span(context)[1]): a decode-only iteration's price and the
        largest context priced the same (a decode run reprices only past it), in one call, kept by (rows, bucket)
        beside the memo (and dropped with it)."""
        b = context if context <= EXACT_BELOW else BUCKETS.get(context) or bucket(context)
        quote = self.quotes.get((rows, b))
        if quote is not None:
            self.hits += 1   # (the memo holds its price too)
            return quote
        t = self.cache.get(((1, b, rows),)) if self.plain_decode else None
        if t is None:
            t = self.time(rows, context, [])
        else:
            self.hits += 1
        span = _SPANS.get(b) if context > EXACT_BELOW else None
        quote = self.quotes[(rows, b)] = 0.0 + t, (span or bucket_span(context))[1]
        return quote

    def draft_prefill(self, prefills: list[tuple[int, int]]) -> float:
        """The decoder's own prefill of these chunks (a draft model or head extends its KV over the prompt too;
        the estimate's TTFT adds the same), each chunk priced as a prompt of its tokens on one rank; 0 without."""
        if self.decoder is None or not prefills:
            return 0.0
        total = 0.0
        for q, _ in prefills:
            t = self.draft_prefills.get(q)
            if t is None:   # (chunk q x ranks: under attention DP the head's passes split the chunk per rank)
                t = self.draft_prefills[q] = self.decoder.prefill_s(RoundContext(
                    setup=self.setup, batch=1, context=q, prompt=q, output=self.plan_seq_len,
                    cuda_graphs=self.cuda_graphs, prefill_chunk=q * self.setup.parallel.attention_dp))
            total += t
        return total

    def round(self, rows: int, context: int) -> Round:
        """The decoder's round for `rows` decoding sequences at a (bucketed) context, memoized."""
        key = (rows, context)
        r = self.rounds.get(key)
        if r is None:
            r = self.decoder.round(RoundContext(setup=self.setup, batch=rows, context=context, prompt=context,
                                                output=self.plan_seq_len, cuda_graphs=self.cuda_graphs,
                                                prefill_chunk=self.token_budget))
            self.rounds[key] = r
        return r

    def accepted_tokens(self, rows: int, context: int, rng: random.Random) -> list[int]:
        """Tokens each decoding row gains this round, drawn from the decoder's acceptance: P(a row
        gets past depth d) = reach[d]; a batch that advances by its least (batch_policy=min) takes
        the minimum. Multi-step scheduling: every row decodes `scheduler_steps` tokens (the scheduler keeps
        fewer, where a row's output ends first)."""
        if self.scheduler_steps > 1:
            return [self.scheduler_steps] * rows
        r = self.round(rows, bucket(context))
        if r.reach:
            counts = [1 + sum(1 for p in r.reach if u < p) for u in (rng.random() for _ in range(rows))]
        else:   # a fixed yield: whole tokens, with the fraction as a chance of one more
            whole = int(r.tokens)
            counts = [whole + (rng.random() < r.tokens - whole) for _ in range(rows)]
        if getattr(self.decoder, "batch_policy", "ragged") == "min":
            counts = [min(counts)] * rows
        return counts

    def swap_time(self, blocks: int, direction: str) -> float:
        """Seconds to copy `blocks` KV blocks to host memory (d2h) or back (h2d). vLLM copies each
        block of each layer's K and V separately, so a swap is many small copies (FastSwitch)."""
        if blocks <= 0:
            return 0.0
        path = host_path(self.setup.system, self.setup.parallel.gpus)
        nbytes = blocks * self.block_size * self.kv_bytes_per_token
        op = transfer("kv_swap", nbytes, path, direction=direction, blocks=blocks * self.layers_per_gpu * 2)
        return time_op(op, self.setup.system.gpu, self.setup.efficiency).total_s

    def swap_blocks(self, swap_space_gib: float) -> int:
        """KV blocks the host swap space holds (it is per GPU, as each GPU swaps its own shard)."""
        return int(swap_space_gib * GIB // (self.kv_bytes_per_token * self.block_size))

    def send_time(self, tokens: int, path: HostPath, copies: int = 1) -> float:
        """Seconds to send `tokens` tokens of KV from this replica's GPUs to another's over `path`
        (each GPU sends its own shard at once, one copy per layer; `copies` times where each receiving rank
        needs the whole shard: kv_fanout.py), memoized by path, tokens and copies."""
        key = (path, tokens, copies)
        t = self.send_memos.get(key)
        if t is None:
            nbytes = tokens * self.kv_bytes_per_token * copies
            op = transfer("kv_send", nbytes, path, direction="d2h", blocks=self.layers_per_gpu * copies)
            t = self.send_memos[key] = time_op(op, self.setup.system.gpu, self.setup.efficiency).total_s
        return t

    def stats(self) -> dict:
        return {"iteration_time_lookups": self.hits + self.misses, "iteration_time_roofline_calls": self.misses,
                "grid_steps_per_doubling": GRID_STEPS_PER_DOUBLING}


def kv_link_path(system: System, link_name: str | None, cluster_gpus: int = 0) -> HostPath:
    """The path KV takes between disaggregated pools: a link profile, or the system's GPU link; on a multi-node
    system a cluster of more GPUs than a node (`cluster_gpus`) has its pools on different nodes: each GPU's NIC."""
    if link_name is None:
        link = system.gpu_link
        if link is None:
            raise WhatifError(f"--kv-link: {system.name} has no GPU-to-GPU link to send KV between the prefill and "
                              f"decode pools; give a link profile, e.g. nvlink-4 or rdma-400g")
        if link.scale_out is not None and cluster_gpus > (link.domain_gpus or cluster_gpus):
            link = link.scale_out
    else:
        link = load_component(link_name, "link", "--kv-link")
    return HostPath(f"KV transfer over {link.name}", link.bandwidth_for("h2d"), link.latency.value,
                    bandwidth_d2h=link.bandwidth_for("d2h"), link=link.name)
