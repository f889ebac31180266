"""`--simulate-top K`: serve in the discrete-event simulator (Poisson arrivals of the workload's prompts and outputs)
the K best configurations of each mode (aggregated, disaggregated) and every frontier row the text shows, and
rerank by goodput: the highest request rate at which the SLOs hold for 90% of requests (simulator.capacity's
search, started at 1.25x the rate the search predicts and raised while its top passes), as output tokens/s per
GPU. The simulator's answer is the one printed as best: the steady-state model ranks, the simulator (what
`simulate` and `capacity` run on the same layout) decides among those it re-checks.
The steady-state model runs every pool at full load; under random arrivals queues form before that, most in a
disaggregated prefill pool, which is what this re-check shows. It runs the configuration's prefill chunk as the
scheduler's token budget per iteration, so the gaps a long prefill pass puts between a decoding request's tokens
count against the TPOT target here, where the search's TPOT is a mean.

An attention data-parallel replica (either pool's, at its own rank count) is simulated rank by rank, as the engines
run it: each rank its own scheduler, queue, KV pool and CPU, the ranks stepping together (simulator/rank_group.py)."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError, positive_int
from .configs import Config
from .evaluate import replica_scenario
from .space import SearchSpace, node_gpus

RECHECK_REQUESTS = 300     # requests per re-check run at least (assumed: enough for a 90th percentile)
FILLS = 3                  # ... and this many times the sequences the deployment runs at once: a run shorter than
                           # that never fills its batches, so any rate passes (assumed: ~1 fill of warm-up)
HEADROOM = 1.25            # the capacity search's top: this much above the predicted rate (assumed)
REL_TOL = 0.05             # the capacity search stops when its bracket is this narrow (assumed)
MAX_RUNS = 10              # runs of one capacity search (assumed: a 5% bracket from a good guess takes ~6)
MAX_RAISES = 4             # while the top passes, double it at most this often (to 20x the predicted rate)


def _recompile(space: SearchSpace) -> dict:
    """The launch's per-token-count prefill compile, as the simulator's engine setting (none when off)."""
    return {"prefill_recompile_s": space.prefill_recompile_s} if space.prefill_recompile_s > 0 else {}


def sim_config(space: SearchSpace, c: Config, requests: int):
    """The simulator's configuration of `c` at its predicted request rate, built by the function `whatif
    simulate` and `whatif capacity` use (simulator.config.sim_config: the engine spec's scheduler defaults), with
    the flags they would be given: --max-num-seqs, --max-num-batched-tokens, --replicas, --prefill-*, --kv-link."""
    from ..roofline.engines import engine_limit_for_group
    from ..simulator.config import sim_config as build
    from .evaluate import CROSS_NODE_KV_LINK, PREFILL_PROMPTS_PER_RANK
    scenario = replica_scenario(space, c.replica, c.chunk)
    spec = scenario.engine_spec()
    cluster: dict = {"replicas": c.replicas}
    if c.mode == "disaggregated":
        one_node = c.prefill.hardware == c.hardware and c.gpus <= node_gpus(c.hardware)
        link = space.kv_link if one_node else (space.kv_link or CROSS_NODE_KV_LINK)
        if c.prefill.hardware != c.hardware:
            cluster["prefill_hardware"] = c.prefill.hardware
        cluster.update(prefill_replicas=c.prefill_replicas, prefill_tp=c.prefill.tp, prefill_pp=c.prefill.pp,
                       prefill_ep=c.prefill.ep, prefill_dp_attention=c.prefill.dp_attention,
                       prefill_attention_dp=c.prefill.attention_dp, kv_link=link,
                       prefill_max_batch=engine_limit_for_group(spec, PREFILL_PROMPTS_PER_RANK * c.prefill.attention_dp,
                                                                c.prefill.attention_dp))
    # the engine limit under which the (decode) replica's ranks run the batch the search priced (c.batch a group)
    batch = engine_limit_for_group(spec, c.batch, c.replica.attention_dp)
    values = {"traffic": {"rate": c.request_rate, "requests": requests, "prompt": space.prompt,
                          "output": space.output},
              "engine": {"max_batch": batch, "token_budget": c.chunk, **_recompile(space)}, "cluster": cluster,
              "slo": {"ttft_s": space.slo.ttft_s, "tpot_s": space.slo.tpot_s}}
    return build(replace(scenario, workload=replace(scenario.workload, batch=1)), values)


def distinct(ranked: list[Config], top: int) -> list[Config]:
    """The `top` best configurations that differ in more than their replica count (the best count of each)."""
    seen, out = set(), []
    for c in ranked:
        shape = (c.mode, c.replica, c.prefill, c.batch, c.chunk)
        if shape not in seen:
            seen.add(shape)
            out.append(c)
        if len(out) == top:
            break
    return out


def slots(c: Config) -> int:
    """Sequences the deployment runs at once: its (decode) replicas' batches."""
    return c.replicas * c.batch


def run_requests(c: Config, requests: int | None) -> int:
    """Requests per run: as given, or RECHECK_REQUESTS and at least FILLS x the deployment's slots."""
    return requests if requests is not None else max(RECHECK_REQUESTS, FILLS * slots(c))


def short_run_note(c: Config, requests: int) -> str:
    """The caveat of a run too short to fill the deployment ('' for one long enough)."""
    if requests >= FILLS * slots(c):
        return ""
    return (f"{requests} requests per run, under {FILLS}x the {slots(c)} sequences it runs at once: the batches "
            f"may never fill, so this goodput is optimistic (raise --sim-requests)")


def candidates(space: SearchSpace, ranked: list[Config], shown: list[Config], top: int) -> list[Config]:
    """What the re-check simulates: the `top` best (distinct) of each mode searched (so a mode the steady-state
    model ranks low still meets the simulator) and every frontier row the text shows (`shown`), each once, in
    that order."""
    out, seen = [], set()
    per_mode = [c for m in space.modes for c in distinct([c for c in ranked if c.mode == m], top)]
    for c in [*per_mode, *shown]:
        if _identity(c) not in seen:
            seen.add(_identity(c))
            out.append(c)
    return out


def _identity(c: Config) -> tuple:
    return (c.mode, c.replica, c.prefill, c.batch, c.chunk, c.replicas, c.prefill_replicas)


def goodput(run, slo, predicted_rps: float):
    """(the capacity search of `run` from HEADROOM x the predicted rate, runs, capped): while the top passes, the
    top doubles (at most MAX_RAISES times; each run seeded alike, so a rate is simulated once); `capped` says the
    answer is still a top that passed: a lower bound."""
    from ..simulator.capacity import max_rate
    seen: dict[float, object] = {}

    def cached(rate: float):
        if rate not in seen:
            seen[rate] = run(rate)
        return seen[rate]

    lo, hi = 0.0, HEADROOM * predicted_rps
    for _ in range(MAX_RAISES + 1):
        res = max_rate(cached, slo, lo=lo, hi=hi, rel_tol=REL_TOL, max_runs=MAX_RUNS)
        capped = res.rate_rps == hi and res.probes[-1].passed
        if not capped:
            break
        lo, hi = hi, 2 * hi
    return res, len(seen), capped


def recheck(space: SearchSpace, ranked: list[Config], top: int, requests: int | None = None,
            shown: list[Config] = (), jobs: int | None = None) -> list[dict]:
    """`candidates` under the simulator: their capacity under the SLOs (goodput), best first by the objective.
    Each candidate's capacity search is independent of the others' (seeded runs): over `jobs` worker processes
    (default: this process's CPUs) when there are several layouts, with the same answer as in one. Either way the
    candidates run layout by layout (`layout_groups`), so a layout's step prices are worked out once."""
    positive_int(top, "--simulate-top")
    if requests is not None:
        positive_int(requests, "--sim-requests")
    todo = candidates(space, ranked, list(shown), top)
    groups = layout_groups(space, todo, requests)
    if _workers(jobs, len(groups)) > 1:
        out = _in_pool(space, todo, requests, jobs)
    else:
        out = _in_order(todo, groups, [recheck_group(space, [todo[i] for i in g], requests) for g in groups])
    return sorted(out, key=lambda r: recheck_key(r, space.objective))


def _workers(jobs: int | None, n: int) -> int:
    from .backends import default_jobs
    return min(default_jobs() if jobs is None else jobs, n)


def layout_groups(space: SearchSpace, todo: list[Config], requests: int | None) -> list[list[int]]:
    """Indices of `todo` by the layout their (decode) replicas run, the costliest group first (`run_cost`). The
    simulator keeps a layout's step prices for the runs after (simulator/cluster.py's _TIMES: keyed by scenario,
    token budget and block size, i.e. replica setup and chunk here), and most of a cold run is pricing new step
    shapes (about half of issue 42's re-check); a worker given a whole group prices them once, where candidates
    dealt out one by one made each worker price the layouts of both (6.5 s CPU in one process, 8.9 s over two)."""
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(todo):
        groups.setdefault((c.replica, c.chunk), []).append(i)
    return sorted(groups.values(), key=lambda g: -sum(run_cost(space, todo[i], requests) for i in g))


def run_cost(space: SearchSpace, c: Config, requests: int | None) -> int:
    """A run's relative cost, to start the costliest first: its requests times the prefill passes of a prompt
    (each a step of a new shape where decodes ride along)."""
    return run_requests(c, requests) * -(-space.prompt // c.chunk)


def recheck_group(space: SearchSpace, group: list[Config], requests: int | None) -> list[dict]:
    """recheck_one of each of `group` in turn, in this process (one layout's step prices shared)."""
    return [recheck_one(space, c, requests) for c in group]


def _in_order(todo: list[Config], groups: list[list[int]], rows: list[list[dict]]) -> list[dict]:
    """The rows of `groups` (each group's in its order) back in `todo`'s order."""
    out: list = [None] * len(todo)
    for g, group_rows in zip(groups, rows):
        for i, row in zip(g, group_rows):
            out[i] = row
    return out


def _in_pool(space: SearchSpace, todo: list[Config], requests: int | None, jobs: int | None) -> list[dict]:
    """recheck_group of each layout group in a pool of forked workers, the costliest first (the pool hands the next
    group to whichever worker frees first, so the last to finish is a short one), the rows in `todo`'s order."""
    from .backends import fork_pool
    from ..simulator import certain_miss, cluster, metrics, workload  # noqa: F401 (imported before the fork, once)
    groups = layout_groups(space, todo, requests)
    with fork_pool(_workers(jobs, len(groups))) as pool:
        futures = [pool.submit(recheck_group, space, [todo[i] for i in g], requests) for g in groups]
        return _in_order(todo, groups, [f.result() for f in futures])


def recheck_one(space: SearchSpace, c: Config, requests: int | None) -> dict:
    """One candidate's capacity search in the simulator, as a re-check row."""
    from ..simulator.capacity import unsustained_note
    from ..simulator.certain_miss import FailedRun, Judged, SloFailed
    from ..simulator.cluster import simulate
    n = run_requests(c, requests)
    cfg = sim_config(space, c, n)

    def run(rate: float):
        """The run at `rate`, judged by the SLOs: only its attainment and verdicts (overloaded, long enough) are
        used (a re-check row shows no latencies), and one that fails them for sure stops there."""
        try:
            result = simulate(replace(cfg, workload=replace(cfg.workload, rate=rate)), stop_failing=cfg.slo,
                              keep_log=False)
        except SloFailed as stopped:
            return FailedRun(stopped)
        return Judged.of(result, cfg.slo)
    try:
        res, runs, capped = goodput(run, cfg.slo, c.request_rate)
    except WhatifError as exc:    # a deployment the simulator cannot model
        return {"config": c, "predicted_req_s": c.request_rate, "goodput_req_s": 0.0,
                "goodput_per_gpu_tok_s": 0.0, "goodput_tok_s": 0.0, "capped": False,
                "attainment_fraction": 0.0, "runs": 0, "note": f"not simulated: {exc}", "caveat": ""}
    passed = [p for p in res.probes if p.passed and p.rate_rps == res.rate_rps]
    note = (f"every run passed up to {res.rate_rps:.3g} req/s: a lower bound" + (
        " (no TTFT target: a growing queue never fails the SLOs)" if space.slo.ttft_s is None else "")
        if capped else res.note)
    return {"config": c, "predicted_req_s": c.request_rate, "goodput_req_s": res.rate_rps,
            "goodput_per_gpu_tok_s": res.rate_rps * space.output / c.gpus,
            "goodput_tok_s": res.rate_rps * space.output, "capped": capped,
            "attainment_fraction": passed[0].attainment if passed else 0.0, "runs": runs,
            "requests": n, "note": note,
            "caveat": "; ".join(x for x in (short_run_note(c, n), unsustained_note(res.probes)) if x)}


def recheck_key(r: dict, objective: str = "tok_s_per_gpu") -> tuple:
    """Best first by simulated goodput (per GPU, or in all with objective 'tok_s'), then the search's own order."""
    from .pareto import rank_key
    first = (-r["goodput_per_gpu_tok_s"], -r["goodput_tok_s"]) if objective == "tok_s_per_gpu" else \
        (-r["goodput_tok_s"], -r["goodput_per_gpu_tok_s"])
    return (*first, *rank_key(r["config"], objective))
