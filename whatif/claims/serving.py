"""Family J claims measured on the serving simulator: a claim's setup carries `sim` sections (traffic,
engine, cluster, slo, and `criterion`, what a served rate must meet), the variant overrides them.

A peak-goodput metric is the best SLO-attaining rate over closed loops of the criterion's `clients` counts.
A capacity metric is the highest arrival rate (req/s) whose run meets the criterion, bisected between
`lo` and `hi` of the criterion until they are within `CAPACITY_RESOLUTION` (1%) of each other; with `per_gpu`
in the criterion, divided by the GPUs the cluster takes (DistServe's per-GPU rate)."""
from __future__ import annotations

from ..scenario import Scenario, build_scenario
from ..simulator.cluster import simulate
from ..simulator.config import SLO, sim_config
from ..simulator.pools import prefill_scenario
from .fastgen_sla import effective_throughput_rps

SLO_SCALE_BISECTIONS = 14   # halvings of an SLO-scale bracket's log width (2^-14 of it)
# A capacity is bisected (geometrically) until the bracket's ends are within 1% of each other: a fixed 7 halvings of
# the claims' 256x-2560x brackets left 4-6% steps, each side rounded down by up to one step (added after scoring).
CAPACITY_RESOLUTION = 1.01


def _sim_sections(mapping: dict) -> tuple[dict, dict]:
    sim = dict(mapping.get("sim", {}))
    return {k: v for k, v in mapping.items() if k != "sim"}, sim


def deep_merged(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = deep_merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def scenario_of(mapping: dict) -> Scenario:
    """A claim's scenario mapping (its workload/precision/parallel sections apart) as a Scenario."""
    sections = {k: dict(mapping[k]) for k in ("workload", "precision", "parallel") if k in mapping}
    return build_scenario({k: v for k, v in mapping.items() if k not in sections}, sections)


def _config(mapping: dict, rate: float | None = None):
    top, sim = _sim_sections(mapping)
    traffic = {**sim.get("traffic", {}), **({"rate": rate} if rate is not None else {})}
    sections = {"traffic": traffic, **{k: sim[k] for k in ("engine", "cluster", "slo") if k in sim}}
    return sim_config(scenario_of(top), sections)


def cluster_gpus(mapping: dict) -> int:
    """GPUs a claim's cluster takes: its replicas' and, disaggregated, its prefill pool's."""
    cfg = _config(mapping)
    cl = cfg.cluster
    gpus = cl.replicas * cfg.scenario.parallelism().gpus
    return gpus + (cl.prefill_replicas * prefill_scenario(cfg).parallelism().gpus if cl.disaggregated else 0)


def run(mapping: dict, rate: float | None = None):
    """One simulation of a claim's mapping (its `sim.traffic.rate` replaced by `rate` when given)."""
    return simulate(_config(mapping, rate))


def _client(criterion: dict) -> bool:
    """Whether the criterion scores each TTFT as its benchmark client measured it (`client_ttft`: from the client's
    send, the server's front end included) rather than from the request's arrival at the engine."""
    return bool(criterion.get("client_ttft", False))


def meets(result, criterion: dict) -> bool:
    """Whether a run meets the claim's criterion: SLO attainment (the run's slo) at least `attainment`,
    and/or pooled token-gap, first-token and scheduling-delay quantiles under their bounds (Sarathi-Serve's
    P99 TBT and median scheduling delay: arrival to first scheduled, its capacity_search.py _is_under_sla)."""
    if "attainment" in criterion and (result.attainment(client=_client(criterion)) or 0.0) < criterion["attainment"]:
        return False
    lat = result.latency()
    for key, (stat, q) in {"p99_itl_s": ("itl_s", "p99"), "p50_ttft_s": ("ttft_s", "p50"),
                           "p90_ttft_s": ("ttft_s", "p90"), "p50_queue_s": ("queue_s", "p50")}.items():
        if key in criterion and not (lat[stat][q] is not None and lat[stat][q] <= criterion[key]):
            return False
    return bool(result.records) and len(result.finished()) == len(result.records)


def capacity_rps(mapping: dict) -> float:
    """The highest rate in [lo, hi] whose run meets the criterion (0 when even lo fails); per GPU of the cluster
    with the criterion's `per_gpu` (DistServe's release plots each backend's rate over its GPUs: its
    evaluation/ae-scripts/e2e/_plot.py load_result reads the run at per-GPU rate x num_gpus)."""
    crit = mapping["sim"]["criterion"]
    return _capacity(mapping, crit) / (cluster_gpus(mapping) if crit.get("per_gpu") else 1)


def _capacity(mapping: dict, crit: dict) -> float:
    lo, hi = crit["lo"], crit["hi"]
    if not meets(run(mapping, lo), crit):
        return 0.0
    if meets(run(mapping, hi), crit):
        return hi
    while hi / lo > CAPACITY_RESOLUTION:
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if meets(run(mapping, mid), crit) else (lo, mid)
    return lo


def tightest_slo_scale(mapping: dict) -> float:
    """The smallest factor on the claim's SLO (both objectives scaled together, DistServe's "SLO scale")
    that the run at its traffic rate still attains for `attainment` of requests, bisected in [lo, hi]."""
    crit = mapping["sim"]["criterion"]
    result = run(mapping)
    slo = mapping["sim"]["slo"]

    def attains(scale: float) -> bool:
        scaled = SLO(**{k: v * scale for k, v in slo.items()})
        return (result.attainment(scaled, client=_client(crit)) or 0.0) >= crit["attainment"]
    lo, hi = crit["scale_lo"], crit["scale_hi"]
    if attains(lo):
        return lo
    if not attains(hi):
        return float("inf")
    for _ in range(SLO_SCALE_BISECTIONS):
        mid = (lo * hi) ** 0.5
        lo, hi = (lo, mid) if attains(mid) else (mid, hi)
    return hi


def peak_goodput_rps(mapping: dict) -> float:
    """The highest SLO-attaining request rate over closed loops of the criterion's `clients` counts (DeepSpeed-
    FastGen's effective throughput: the best point of a 1-32 client sweep, requests meeting its SLA per second).
    With `fastgen_gen_tok_s` in the criterion a request is scored by FastGen's own SLA (claims/fastgen_sla.py)
    at that generation rate, not by the run's SLO."""
    crit = mapping["sim"]["criterion"]

    def goodput(result) -> float:
        if "fastgen_gen_tok_s" in crit:
            return effective_throughput_rps(result, crit["fastgen_gen_tok_s"])
        return result.goodput_rps() or 0.0
    return max(goodput(run(deep_merged(mapping, {"sim": {"traffic": {"concurrency": c}}}))) for c in crit["clients"])


def client_curve(mapping: dict) -> list[tuple[float, float]]:
    """(finished requests/s, mean end-to-end s) of a closed loop at each of the criterion's `clients` counts."""
    points = []
    for c in mapping["sim"]["criterion"]["clients"]:
        result = run(deep_merged(mapping, {"sim": {"traffic": {"concurrency": c}}}))
        points.append((result.summary()["throughput"]["finished_rps"], result.latency()["e2e_s"]["mean"]))
    return points


def read_off(points, target: float) -> float | None:
    """y at x = `target` on the sorted (x, y) points, linear between the two around it; None outside them."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x0 <= target <= x1:
            return y0 + (y1 - y0) * (target - x0) / (x1 - x0) if x1 > x0 else y0
    return None


def e2e_at_throughput(mapping: dict) -> float:
    """Mean end-to-end latency at the criterion's `throughput_rps`, read off the closed-loop throughput-latency
    curve of its `clients` counts (linear between the two points around it; DeepSpeed-FastGen's Figure 2 compares
    latency at equal throughput). inf when no client count reaches that throughput."""
    value = read_off(sorted(client_curve(mapping)), mapping["sim"]["criterion"]["throughput_rps"])
    return float("inf") if value is None else value


def throughput_at_e2e(mapping: dict) -> float:
    """Requests per second at the criterion's mean end-to-end latency `e2e_s`, read off the closed-loop throughput-
    latency curve of its `clients` counts (linear between the two points around it; DeepSpeed-FastGen's Figure 2
    also compares throughput at equal latency). 0 when even one client is slower; the curve's highest throughput
    when no client count is that slow (a lower bound)."""
    target = mapping["sim"]["criterion"]["e2e_s"]
    points = sorted((e2e, rps) for rps, e2e in client_curve(mapping))
    if target < points[0][0]:
        return 0.0
    value = read_off(points, target)
    return max(y for _, y in points) if value is None else value


def _latency(stat: str, q: str):
    return lambda mapping: run(mapping).latency()[stat][q]


# metric -> (value of a claim mapping, unit, True when higher is better)
SERVING_METRICS = {
    "capacity_rps": (capacity_rps, "req/s", True),
    "slo_scale": (tightest_slo_scale, "x SLO", False),
    "peak_goodput_rps": (peak_goodput_rps, "req/s", True),
    "output_tok_s": (lambda m: run(m).summary()["throughput"]["output_tok_s"], "tok/s", True),
    "finished_rps": (lambda m: run(m).summary()["throughput"]["finished_rps"], "req/s", True),
    "mean_e2e": (_latency("e2e_s", "mean"), "s", False),
    "mean_ttft": (_latency("ttft_s", "mean"), "s", False),
    "e2e_at_throughput": (e2e_at_throughput, "s", False),
    "throughput_at_e2e": (throughput_at_e2e, "req/s", True),
    "p95_itl": (_latency("itl_s", "p95"), "s", False),
}
