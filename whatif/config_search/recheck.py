"""`--simulate-top K`: serve the K best configurations in the discrete-event simulator (Poisson arrivals of the
workload's prompts and outputs) and rerank by goodput: the highest request rate at which the SLOs hold for 90% of
requests (simulator.capacity's search, started at 1.25x the rate the search predicts), as output tokens/s per GPU.
The steady-state model runs every pool at full load; under random arrivals queues form before that, most in a
disaggregated prefill pool, which is what this re-check shows. It runs the configuration's prefill chunk as the
scheduler's token budget per iteration, so the gaps a long prefill pass puts between a decoding request's tokens
count against the TPOT target here, where the search's TPOT is a mean.

Attention data parallel (SGLang --enable-dp-attention) is re-checked approximately: the simulator has one scheduler
per replica (one waiting queue, the DP ranks' KV caches pooled, each step's sequences split over the ranks as evenly
as whole sequences allow: simulator/iteration_time.py), where SGLang runs one scheduler per DP rank, each with its
own queue and KV cache and requests dealt to ranks as they arrive. Imbalance between ranks is not seen, so such a
goodput is optimistic; the row's caveat says so."""
from __future__ import annotations

from dataclasses import replace

from ..errors import WhatifError, positive_int
from .configs import Config
from .evaluate import replica_scenario
from .space import SearchSpace, node_gpus

RECHECK_REQUESTS = 300     # requests per re-check run (assumed: enough for a 90th percentile, a few s per run)
HEADROOM = 1.25            # the capacity search's top: this much above the predicted rate (assumed)
REL_TOL = 0.05             # the capacity search stops when its bracket is this narrow (assumed)
MAX_RUNS = 10


def sim_config(space: SearchSpace, c: Config, requests: int):
    """The simulator's configuration of `c` at its predicted request rate."""
    from ..simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
    from ..simulator.workload import WorkloadSpec
    from .evaluate import CROSS_NODE_KV_LINK
    scenario = replica_scenario(space, c.replica, c.chunk)
    traffic = WorkloadSpec(rate=c.request_rate, requests=requests, prompt=space.prompt, output=space.output)
    engine = SchedulerConfig(max_batch=c.batch, token_budget=c.chunk)
    if c.mode == "aggregated":
        cluster = ClusterConfig(replicas=c.replicas)
    else:
        link = space.kv_link if c.gpus <= node_gpus(c.hardware) else (space.kv_link or CROSS_NODE_KV_LINK)
        cluster = ClusterConfig(replicas=c.replicas, prefill_replicas=c.prefill_replicas, prefill_tp=c.prefill.tp,
                                prefill_pp=c.prefill.pp, kv_link=link)
    slo = SLO(ttft_s=space.slo.ttft_s, tpot_s=space.slo.tpot_s)
    return SimConfig(replace(scenario, workload=replace(scenario.workload, batch=1)), traffic, engine, cluster, slo)


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


def dp_attention_note(c: Config) -> str:
    """What the re-check of an attention-DP configuration leaves out ('' for others)."""
    dp = [e for e in (c.prefill, c.replica) if e is not None and e.dp_attention]
    if not dp:
        return ""
    ranks = max(e.tp for e in dp)
    return (f"attention DP: simulated as one scheduler per replica over its {ranks} DP ranks (one queue, pooled KV, "
            f"even split), not one per rank as SGLang runs it; rank imbalance is not seen, so this goodput is "
            f"optimistic")


def recheck(space: SearchSpace, ranked: list[Config], top: int, requests: int | None = None) -> list[dict]:
    """The `top` best of `ranked` under the simulator: their capacity under the SLOs, best goodput per GPU first."""
    from ..simulator.capacity import max_rate
    from ..simulator.cluster import simulate
    positive_int(top, "--simulate-top")
    requests = positive_int(requests, "--sim-requests") if requests is not None else RECHECK_REQUESTS
    out = []
    for c in distinct(ranked, top):
        cfg = sim_config(space, c, requests)
        try:
            res = max_rate(lambda rate, cfg=cfg: simulate(replace(cfg, workload=replace(cfg.workload, rate=rate))),
                           cfg.slo, hi=HEADROOM * c.request_rate, rel_tol=REL_TOL, max_runs=MAX_RUNS)
        except WhatifError as exc:    # a deployment the simulator cannot model (e.g. one spanning nodes)
            out.append({"config": c, "predicted_req_s": c.request_rate, "goodput_req_s": 0.0,
                        "goodput_per_gpu_tok_s": 0.0, "attainment_fraction": 0.0, "runs": 0,
                        "note": f"not simulated: {exc}", "caveat": ""})
            continue
        passed = [p for p in res.probes if p.passed and p.rate_rps == res.rate_rps]
        out.append({"config": c, "predicted_req_s": c.request_rate, "goodput_req_s": res.rate_rps,
                    "goodput_per_gpu_tok_s": res.rate_rps * space.output / c.gpus,
                    "attainment_fraction": passed[0].attainment if passed else 0.0, "runs": len(res.probes),
                    "note": res.note, "caveat": dp_attention_note(c)})
    return sorted(out, key=lambda r: -r["goodput_per_gpu_tok_s"])
