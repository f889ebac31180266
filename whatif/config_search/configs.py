"""Deployable configurations built from priced replica setups, with their serving figures and verdicts.

Steady-state model (assumed, as aiconfigurator's; `--simulate-top` re-checks it under traffic):
- aggregated (continuous batching, B = max running sequences per replica): a replica serves B * output tokens per
  e2e(B) (the estimate: B prompts' prefill passes, then output - 1 decode steps at B). At full load (a closed loop
  of B clients) a request's TTFT is the closed loop's (closed_loop_ttft.py: the prompts that come back together
  wait for the engine's prefill passes, from the send through the front end); under a TTFT target, its prefill
  pass and its queueing (below). Its remaining output - 1 tokens take the rest of the cycle: TPOT = (e2e(B) - its
  own TTFT) / (output - 1), the other requests' prefills in it (own: the closed loop's at full load, a lone prefill
  under a target). Under a target the cycle is the one a request sees at the rate: decode steps at the occupancy it
  runs beside (seen_occupancy.py, not B) and the passes of the prompts that arrive in it; the TPOT target is held
  at its 90% quantile (tpot_spread.py), the TPOT shown is the mean.
- disaggregated xPyD: x prefill replicas each prefill one prompt per attention-DP rank at a time (x / ttft(1)
  requests/s at one rank; evaluate.prefill_pool_rps: the ranks side by side, within SGLang's send slots); the KV goes
  to a decode replica over the link between the pools; y decode replicas each hold B sequences for output - 1
  steps (y * B / ((output - 1) * TPOT(B)) requests/s). The cluster serves the lesser rate; TTFT is the prefill
  plus the KV transfer, TPOT the decode step at B.
Throughput per GPU is the cluster's output tokens/s over its GPUs; per-user throughput is 1 / TPOT.
Under a TTFT target, the rate is the highest at which a request's TTFT including its queueing under Poisson arrivals
(the re-check's traffic) meets the target for the SLO's attainment share (queueing.py), and TTFT is that
quantile at that rate: aggregated, a rank's prefill queue (passes of the prompts waiting at a pass's start, up to
the token budget, decode steps between them: queueing.bulk_ttft_quantile_s) plus a wait for one of a replica's B
slots (M/D/B, each held e2e(B)); disaggregated (M/D/c), for one
of a prefill replica's servers (evaluate.prefill_servers, each prefilling a prompt in servers / its rate), then for
one of a decode replica's B slots (each held (output - 1) * TPOT(B)). Without
a TTFT target the pools run at full load: an aggregated replica's TTFT is its closed loop's (closed_loop_ttft.py), a
disaggregated cluster's a lone request's prefill and KV transfer.
A prefill kernel built per new token count (SearchSpace.prefill_recompile_s) costs the steady state nothing: fixed
lengths reach a finite set of counts, each built once in warm-up (recompile.py); the re-check runs it.

The prefill chunk C (tokens per prefill pass, the engine's max_num_batched_tokens; one setting per deployment)
enters where the passes run:
- TTFT: a request's own prefill is ceil(prompt / C) passes (several short prompts share one pass when they fit);
  smaller passes use the GPU less well and re-read the weights once per pass.
- aggregated TPOT: the other B - 1 requests' prefills, in passes of at most C tokens, are the decode stall in
  e2e(B) - ttft(1) (under a TTFT target, in the passes Poisson arrivals make: poisson_stall.py, poisson_cycle).
  At full load prefill passes are priced apart from the decode steps (the decode tokens a chunked-prefill
  engine packs into a prefill pass are not merged with it: an upper bound on the stall, high by at most one
  decode step's fixed cost per pass; under a target a mixed pass carries them, poisson_stall.py). TPOT is the
  mean over a request's output: a smaller C spreads the stall over more, shorter gaps (what chunked prefill is
  for: the worst gap between two tokens is about one pass), which the mean does not show; the simulator re-check,
  run with a token budget of C per iteration, does.
- memory: every replica reserves activations for one pass of min(B * prompt, C) tokens, so a larger C can lower
  the max batch.
- disaggregated: the prefill pool's passes (TTFT and its rate); the decode pool runs no prefill, so C reaches it
  only through the activation reserve. Both pools are priced at the same C.
The decode steps' own time does not depend on C."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from ..simulator.kv_fanout import mla_kv_copies
from .closed_loop_ttft import loop_ttft_s, prompts_per_pass
from .queueing import (ATTAINMENT, bulk_ttft_quantile_s, max_rate_through, max_rate_under, max_rate_within,
                       tandem_wait_s, wait_quantile_s)
from .evaluate import BatchPoint, ReplicaProfile
from .poisson_stall import poisson_prefill_s
from .seen_occupancy import seen_occupancy
from .tpot_spread import tpot_spread_s
from .space import DEFAULT_CHUNKS, ReplicaSetup, SearchSpace, budget, node_gpus

OK, MISSES_SLO, DOES_NOT_FIT, INVALID = "ok", "misses SLO", "does not fit", "invalid"


@dataclass(frozen=True)
class Config:
    """One deployment: its replica setups, pool sizes, batch limit, serving figures and verdict."""

    mode: str                        # aggregated or disaggregated
    hardware: str
    replica: ReplicaSetup                # aggregated: the replicas' setup; disaggregated: the decode pool's
    batch: int                       # max running sequences per (decode) replica
    replicas: int                    # aggregated replicas, or decode replicas
    gpus: int                        # GPUs the whole deployment uses
    ttft_s: float = math.nan
    tpot_s: float = math.nan
    e2e_s: float = math.nan
    request_rate: float = math.nan   # requests/s the deployment serves
    tok_s: float = math.nan          # output tokens/s of the deployment
    tok_s_per_gpu: float = math.nan
    tok_s_per_user: float = math.nan
    status: str = OK                 # ok, misses SLO, does not fit, invalid
    reason: str = ""
    prefill: ReplicaSetup | None = None  # disaggregated: the prefill pool's setup
    prefill_replicas: int = 0
    chunk: int = DEFAULT_CHUNKS[0]   # tokens per prefill pass (both pools of a disaggregated cluster)

    @property
    def feasible(self) -> bool:
        return self.status in (OK, MISSES_SLO)

    def label(self) -> str:
        limits = f"batch {self.batch} chunk {self.chunk}"
        if not self.feasible:
            return f"[{self.replica.label()}] {limits}"
        if self.mode == "aggregated":
            return f"{self.replicas}x [{self.replica.label()}] {limits}"
        where = f" on {self.prefill.hardware}" if self.prefill.hardware != self.hardware else ""   # (heterogeneous)
        return (f"{self.prefill_replicas}P [{self.prefill.label()}]{where} + {self.replicas}D [{self.replica.label()}] "
                f"{limits}")

    def row(self) -> dict:
        """Flat values for a table (JSON, CSV, Parquet, pandas); figures not priced (rejected) are None."""
        e, p = self.replica, self.prefill
        row = {"mode": self.mode, "hardware": self.hardware, "gpus": self.gpus, "replicas": self.replicas,
              "tp": e.tp, "pp": e.pp, "ep": e.ep, "dp_attention": e.dp_attention, "attention_dp": e.attention_dp,
              "batch": self.batch, "prefill_chunk": self.chunk, "weight_dtype": e.weight,
              "quantization": e.quantization or None, "kv_dtype": e.kv,
              "techniques": "+".join(str(t) for t in e.techniques),
              "prefill_replicas": self.prefill_replicas, "prefill_hardware": p.hardware if p else None,
              "prefill_tp": p.tp if p else None,
              "prefill_pp": p.pp if p else None, "prefill_ep": p.ep if p else None,
              "prefill_attention_dp": p.attention_dp if p else None, "ttft_s": self.ttft_s, "tpot_s": self.tpot_s,
              "e2e_s": self.e2e_s, "request_rate_req_s": self.request_rate, "throughput_tok_s": self.tok_s,
              "throughput_per_gpu_tok_s": self.tok_s_per_gpu, "per_user_tok_s": self.tok_s_per_user,
              "status": self.status, "reason": self.reason, "label": self.label()}
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}

    def to_dict(self) -> dict:
        return asdict(self)


def _judged(space: SearchSpace, tpot_check_s: float | None = None, **kw) -> Config:
    """`tpot_check_s`: the TPOT the target is held to when not the mean (its attainment quantile, tpot_spread.py)."""
    check = kw["tpot_s"] if tpot_check_s is None else tpot_check_s
    miss = space.slo.misses(kw["ttft_s"], check, kw["e2e_s"])
    if check != kw["tpot_s"]:
        miss = miss.replace("TPOT ", f"TPOT for {ATTAINMENT:.0%} of requests ", 1)
    return Config(**kw, status=MISSES_SLO if miss else OK, reason=miss)


def rejected_replica(space: SearchSpace, p: ReplicaProfile) -> list[Config]:
    """One row per batch an engine cannot run (all of them, or those above its max batch)."""
    fitted = {pt.batch for pt in p.points} | set(p.pruned)
    rows = []
    for b in sorted(set(space.batches)):
        if b in fitted:
            continue
        status = INVALID if p.error.startswith("invalid") else DOES_NOT_FIT
        reason = p.error or (f"does not fit: batch {b} > max batch {p.max_batch} at {space.prompt + space.output} "
                             f"tokens, chunk {p.chunk}")
        if not p.error and p.engine_cap is not None and b > p.engine_cap:
            status, reason = INVALID, f"invalid: batch {b} > {p.engine_name or 'the engine'}'s max_num_seqs " \
                                      f"{p.engine_cap}"
        rows.append(Config(space.modes[0], p.key.hardware, p.key, b, 0, p.gpus, status=status, reason=reason,
                           chunk=p.chunk))
    return rows


def rate_within_ttft(space: SearchSpace, full_rate: float, own_ttft_s: float, service_s: float,
                     servers: int) -> tuple[float, float]:
    """(requests/s, TTFT s) of one server pool of `servers` deterministic servers of `service_s` each, at most
    `full_rate`/s: the highest Poisson rate at which a request's own TTFT plus its queueing.py wait meets the TTFT
    target for the SLO's attainment share, and that TTFT quantile there. No target, or the own TTFT alone over it:
    full load and the own TTFT (a configuration that misses the target anyway)."""
    target = space.slo.ttft_s
    if target is None or own_ttft_s > target:
        return full_rate, own_ttft_s
    rate = min(full_rate, max_rate_within(target - own_ttft_s, service_s, servers))
    return rate, own_ttft_s + wait_quantile_s(rate, service_s, servers)


def at_full_load(space: SearchSpace, p: ReplicaProfile) -> bool:
    """An aggregated replica runs at full load (a closed loop of B clients): no TTFT target, or one its lone
    prompt's prefill already misses."""
    return space.slo.ttft_s is None or p.prefill_s > space.slo.ttft_s


def prefill_queue_ttft(space: SearchSpace, p: ReplicaProfile, pt) -> tuple[float, float]:
    """(requests/s, TTFT s) of an aggregated replica at batch `pt.batch` under a TTFT target: the highest Poisson rate
    at which the attainment quantile of a rank's prefill queue (queueing.bulk_ttft_quantile_s: passes of up to
    loop_budget // prompt waiting prompts, decode steps between them) plus the wait for one of the B slots (M/D/B,
    each held e2e(B)) meets the target, and that TTFT there. No target, or a lone prompt's prefill over it: full
    load and the lone prefill (the caller prices the closed loop)."""
    full_rate = pt.batch / pt.e2e_s
    if at_full_load(space, p):
        return full_rate, p.prefill_s
    ranks = p.key.attention_dp
    per_rank = -(-pt.batch // ranks)
    per_pass = prompts_per_pass(per_rank, space.prompt, p.loop_budget)
    full_s = pt.ttft_s * per_pass / per_rank             # a full pass: its share of the batch's prefill passes
    lone_s = p.prefill_s
    if not p.prefill_first:                              # mixed steps: a pass carries the running decodes
        lone_s, full_s = lone_s + pt.tpot_s, full_s + pt.tpot_s

    def quantile(rate: float) -> float:
        return (bulk_ttft_quantile_s(rate / ranks, lone_s, full_s, per_pass, pt.tpot_s)
                + wait_quantile_s(rate, pt.e2e_s, pt.batch))
    rate = max_rate_under(quantile, space.slo.ttft_s, full_rate)
    if rate <= 0.0:                  # misses at no load: a configuration that misses the target anyway
        return full_rate, quantile(0.0)
    return rate, quantile(rate)


POISSON_ROUNDS = 4     # most cycle -> rate rounds: the cycle moves little with the rate (a pass holds ~1 prompt)


def poisson_cycle(space: SearchSpace, p: ReplicaProfile, pt) -> tuple[float, float, float]:
    """(requests/s, TTFT s, e2e s) of an aggregated replica at batch `pt.batch` under a TTFT target: its cycle with
    the prefill passes Poisson arrivals make (poisson_stall.py: unaligned ranks, k prompts a pass) in place of the
    estimate's aligned full passes, and prefill_queue_ttft's rate and TTFT on that cycle; the rate sets the passes'
    size, so from a pass of one prompt the two are re-priced until the cycle stays put (the last round's cycle, at
    its rate). At full load: prefill_queue_ttft's and e2e(B)."""
    if at_full_load(space, p):
        return (*prefill_queue_ttft(space, p, pt), pt.e2e_s)
    ranks = p.key.attention_dp
    per_rank = -(-pt.batch // ranks)
    per_pass = prompts_per_pass(per_rank, space.prompt, p.loop_budget)
    full_s = pt.ttft_s * per_pass / per_rank          # a full pass (prefill_queue_ttft's)
    decode_s = pt.e2e_s - pt.ttft_s                   # the cycle's decode steps

    def e2e(r: float) -> float:
        return decode_s + poisson_prefill_s(pt.batch, ranks, r, p.prefill_s, full_s, per_pass, pt.tpot_s,
                                            p.prefill_first)
    cycle = e2e(0.0)
    for _ in range(POISSON_ROUNDS):
        rate, ttft = prefill_queue_ttft(space, p, replace(pt, e2e_s=cycle))
        cycle, before = e2e(rate), cycle
        if abs(cycle - before) <= 1e-9 * before:
            break
    return rate, ttft, cycle


def decode_step_at(points, n: float) -> float:
    """Seconds of a decode step at `n` running sequences: linear between the priced batches' steps (`points`,
    BatchPoint), the nearest one's outside them."""
    pts = sorted(points, key=lambda q: q.batch)
    if n <= pts[0].batch:
        return pts[0].tpot_s
    for lo, hi in zip(pts, pts[1:]):
        if n <= hi.batch:
            return lo.tpot_s + (hi.tpot_s - lo.tpot_s) * (n - lo.batch) / (hi.batch - lo.batch)
    return pts[-1].tpot_s


def seen_life(space: SearchSpace, p: ReplicaProfile, pt, rate: float, cycle: float) -> tuple[float, float]:
    """(seconds a request holds its slot, seconds its TPOT's attainment quantile lies above the mean) at Poisson
    `rate` (the search's, set on the full batch's `cycle`): its output - 1 decode steps at the occupancy it runs
    beside (seen_occupancy.py) and the passes of the prompts that arrive meanwhile and its own (poisson_stall.py),
    the offered load a = rate x `cycle` (the holding time the rate was set on: iterating a to its own fixed point
    priced 3-11% under the simulator, Session 72 H3); the spread by tpot_spread.py."""
    ranks = p.key.attention_dp
    per_rank = -(-pt.batch // ranks)
    per_pass = prompts_per_pass(per_rank, space.prompt, p.loop_budget)
    full_s = pt.ttft_s * per_pass / per_rank          # a full pass (prefill_queue_ttft's)
    points = [q for q in p.points if q.batch <= pt.batch]
    if p.step1_s > 0 and min(q.batch for q in points) > 1:   # a --batches without 1: its step is priced anyway
        points.insert(0, BatchPoint(1, 0.0, p.step1_s, 0.0, 0.0))   # (the occupancy is between 1 and B)
    offered = rate * cycle
    n = seen_occupancy(offered, pt.batch)
    step = decode_step_at(points, n)
    slope = decode_step_at(points, n + 0.5) - decode_step_at(points, n - 0.5)

    def stall(prompts: float) -> float:
        return poisson_prefill_s(prompts, ranks, rate, p.prefill_s, full_s, per_pass, step, p.prefill_first)
    life = (space.output - 1) * step + stall(offered + 1.0)
    beside = offered if pt.batch > 1 else 0.0       # batch 1: no other request, no other prompt in its life
    spread = tpot_spread_s(beside, slope, stall(1.0), space.output, ATTAINMENT)
    return min(life, cycle), spread        # never above the full batch's cycle (the occupancy is at most B)


def _user_rate(tpot_s: float, e2e_s: float, output: int) -> float:
    return 1.0 / tpot_s if tpot_s > 0 else output / e2e_s


def _exact_ties(x: float) -> float:
    """`x` to 12 significant digits: e2e(B) - ttft(1) rounds differently for each prefill time subtracted (1e-16
    relative), which would split configurations whose TPOT is the same decode (batch 1 at two chunks) into a
    faster-per-user one and a more-per-GPU one, both on the frontier."""
    return float(f"{x:.12g}")


def aggregated(space: SearchSpace, p: ReplicaProfile) -> list[Config]:
    """Every replica count of each batch the engine fits, within the GPU budget."""
    out = []
    osl = space.output
    for pt in p.points:
        # a replica's rate: its prefill queue and its B slots within the TTFT target under Poisson arrivals; at full
        # load (no target, or one its own prefill misses) a closed loop of B clients (closed_loop_ttft.py)
        rate, ttft, e2e = poisson_cycle(space, p, pt)
        own, spread = p.prefill_s, 0.0
        if at_full_load(space, p):
            ranks = p.key.attention_dp
            loop = loop_ttft_s(-(-pt.batch // ranks), space.prompt, p.loop_budget, pt.ttft_s, p.prefill_first,
                               p.front_s, ranks)
            own = ttft = max(p.prefill_s, loop)     # (never below a lone prompt's)
        else:      # under a TTFT target a request decodes beside the occupancy it sees at the rate, not B
            e2e, spread = seen_life(space, p, pt, rate, e2e)
        # the cycle e2e(B) less the first token's share is the decode's (the other prompts' passes in it)
        tpot = _exact_ties((e2e - own) / (osl - 1)) if osl > 1 else 0.0
        user = _user_rate(tpot, e2e, osl)
        for r in range(1, budget(space, p.key.hardware) // p.gpus + 1):
            out.append(_judged(space, mode="aggregated", hardware=p.key.hardware, replica=p.key, batch=pt.batch,
                               replicas=r, gpus=r * p.gpus, ttft_s=ttft, tpot_s=tpot, tpot_check_s=tpot + spread,
                               e2e_s=e2e - own + ttft,
                               request_rate=r * rate, tok_s=r * rate * osl,
                               tok_s_per_gpu=rate * osl / p.gpus, tok_s_per_user=user, chunk=p.chunk))
    return out


def pairs_within(budget: int, gp: int, gd: int) -> list[tuple[int, int]]:
    """(x prefill replicas, y decode replicas), each at least 1, with x * gp + y * gd <= budget GPUs."""
    return [(x, y) for x in range(1, budget // gp + 1) for y in range(1, (budget - x * gp) // gd + 1)]


def pool_pairs(space: SearchSpace, prefill: ReplicaSetup, decode: ReplicaSetup) -> list[tuple[int, int]]:
    """(x prefill, y decode replicas) of a cluster within the budget: on one system type, within what it holds; on
    two (heterogeneous P/D), each pool within what its own system holds and both within the budget."""
    if prefill.hardware == decode.hardware:
        return pairs_within(budget(space, decode.hardware), prefill.gpus, decode.gpus)
    gp, gd = prefill.gpus, decode.gpus
    return [(x, y) for x in range(1, budget(space, prefill.hardware) // gp + 1)
            for y in range(1, budget(space, decode.hardware) // gd + 1) if x * gp + y * gd <= space.gpu_budget]


def disaggregated(space: SearchSpace, prefill: ReplicaProfile, decode: ReplicaProfile) -> list[Config]:
    """Every xPyD cluster of these two replica setups (priced at the same chunk) at each decode batch, within the GPU
    budget. Pools on two system types send the KV across their nodes' network."""
    osl = space.output
    if osl < 2 or prefill.error or decode.error or prefill.chunk != decode.chunk:
        return []
    node = node_gpus(decode.key.hardware) if prefill.key.hardware == decode.key.hardware else 0
    prefill_rps = prefill.prefill_rps   # (evaluate.prefill_pool_rps: its ranks side by side, within its send slots)
    pairs = pool_pairs(space, prefill.key, decode.key)
    # an MLA latent goes to each decode attention-TP rank, as the simulator sends it (simulator/kv_fanout.py)
    copies = mla_kv_copies(prefill.mla_kv_fanout, prefill.key.parallel, decode.key.parallel)
    out = []
    servers = prefill.prefill_servers
    # a prefill server's seconds a prompt, at the replica's full rate
    service = servers / prefill_rps if prefill_rps > 0 else math.inf
    within: dict[float, tuple[float, float]] = {}    # by KV send time: a prefill replica's rate within the TTFT target
    for pt in decode.points:
        pt: BatchPoint
        decode_rps = pt.batch / ((osl - 1) * pt.pool_tpot_s)
        for x, y in pairs:
            gpus = x * prefill.gpus + y * decode.gpus
            send = (prefill.kv_send_node_s if gpus <= node else prefill.kv_send_net_s) * copies
            if not math.isfinite(send):
                continue
            full_rate, pool_service = _held_to_send(prefill, send, prefill_rps, service)
            if send not in within:
                within[send] = rate_within_ttft(space, full_rate, prefill.prefill_s + send, pool_service, servers)
            per_prefill, ttft = within[send]
            rate = min(x * per_prefill, y * decode_rps)
            own = prefill.prefill_s + send
            if space.slo.ttft_s is not None and own <= space.slo.ttft_s:
                # then a slot among the decode pool's (each held for the output's steps): the first token comes
                # from the decode pool (simulator/replica.py), so its wait is in TTFT too
                stages = ((x, pool_service, servers), (y, (osl - 1) * pt.pool_tpot_s, pt.batch))
                rate = max_rate_through(space.slo.ttft_s - own, stages, rate)
                ttft = own + tandem_wait_s(rate, stages)
            out.append(_judged(space, mode="disaggregated", hardware=decode.key.hardware, replica=decode.key,
                               batch=pt.batch, replicas=y, gpus=gpus, ttft_s=ttft, tpot_s=pt.pool_tpot_s,
                               e2e_s=ttft + (osl - 1) * pt.pool_tpot_s, request_rate=rate, tok_s=rate * osl,
                               tok_s_per_gpu=rate * osl / gpus, tok_s_per_user=1.0 / pt.pool_tpot_s,
                               prefill=prefill.key, prefill_replicas=x, chunk=decode.chunk))
    return out


def _held_to_send(prefill: ReplicaProfile, send_s: float, rps: float, service_s: float) -> tuple[float, float]:
    """(full rate /s, seconds a server holds a prompt) of a prefill pool: a server that keeps a prompt's row until
    its KV is sent (SGLang's TP prefill pools, simulator/prefill_rows.py) runs its prompts and their sends in series."""
    if not prefill.prefill_rows_held or not math.isfinite(service_s):
        return rps, service_s
    held = service_s + send_s
    return min(rps, prefill.prefill_servers / held), held


def same_pool(a: ReplicaSetup, b: ReplicaSetup) -> bool:
    """Prefill and decode pools share precisions and techniques (the KV one writes, the other reads); their layouts
    may differ, and so may their system types where the pool names several (heterogeneous P/D)."""
    return (a.weight, a.kv, a.techniques, a.quantization) == (b.weight, b.kv, b.techniques, b.quantization)


def compose(space: SearchSpace, profiles: list[ReplicaProfile]) -> list[Config]:
    """Every configuration of the space from its replica setups' profiles, rejected ones included, in a fixed order."""
    out: list[Config] = []
    for p in profiles:
        out += rejected_replica(space, p)
        if "aggregated" in space.modes:
            out += aggregated(space, p)
    if "disaggregated" in space.modes:
        ready = [p for p in profiles if not p.error]
        for pre in ready:
            for dec in ready:
                if pre.chunk == dec.chunk and same_pool(pre.key, dec.key):
                    out += disaggregated(space, pre, dec)
    return out
