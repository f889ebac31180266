"""Which side of DistServe's rate and SLO-scale claims carries their under-prediction: each side's step prices against
the release's own A100-80G forward-time fits, and each side's figure under its steps made a few percent dearer.

The fits are DistServe's (LLMServe/DistServe simdistserve/estimators/profile_data/profiler-a100-80g.distserve.json
@7057aefe and profiler-a100-80g.vllm.json @0bba6065, read by simdistserve/estimators/time_estimator.py): prefill ms
= a + b x prompt tokens + c x sum of squared prompt lengths; decode ms = a + b x context tokens of the batch + c x
batch (its "smallbs" form, batches under 95). time_estimator divides both by pp (its own simulator's reading of a
pipelined step); a request's token still takes the whole pass, which is what whatif prices, so the decode instance
(tp 2 x pp 2) is compared against the tp-2 fit undivided. Nothing here is fitted or mapped: a diagnosis (docs/
accuracy.md, session 73 C).

    PYTHONPATH=$PWD python3 benchmarks/distserve_side_sensitivity.py [--steps] [--scale] [--floor] [--slo]
"""
from __future__ import annotations

import argparse
from contextlib import contextmanager

from whatif.claims.claim import all_claims, claim_scenarios, evaluate
from whatif.claims.serving import deep_merged, run, cluster_gpus, _config
from whatif.simulator import cluster as sim_cluster
from whatif.simulator import iteration_time
from whatif.simulator.clock import Clock
from whatif.simulator.cluster import Cluster
from whatif.simulator.config import SLO

# (a, b, c) in ms, OPT-66B, by engine and tp (the JSON files above, copied as printed)
PREFILL_FIT = {("distserve", 2): (39.14437589353578, 0.24929935185985747, 2.0434584061063132e-05),
               ("distserve", 4): (26.76512367065223, 0.1375928914774527, 7.561318878163137e-06),
               ("vllm", 4): (30.68963525855282, 0.15204703019896387, 3.286440997304907e-05)}
DECODE_FIT = {("distserve", 2): (48.288015489286245, 0.0009424343535737985, 0.12755020094383188),
              ("distserve", 4): (30.760284619429587, 0.000451947603788462, 0.063284195750671),
              ("vllm", 4): (32.98482446677012, 0.000578810141033908, 0.11317390154663971)}
CLAIMS = {"2.75x": "2.75x the per-GPU", "1.57x": "1.57x the per-GPU", "4.24x": "4.24x the per-GPU",
          "1.77x": "1.77x the per-GPU", "4.6x": "4.6x the per-GPU", "7.4x": "7.4x more",
          # the OPT-66B chatbot's SLO-scale panel (plot.ipynb cell 91, session 73 L): a tightest scale, not a rate
          "3.14x": "3.14x tighter SLO than vLLM for the OPT-66B",
          "1.8x": "1.8x tighter SLO than DeepSpeed-MII for the OPT-66B"}
BASELINE = {"2.75x": "vllm-0.2", "4.24x": "vllm-0.2", "4.6x": "vllm-0.2", "3.14x": "vllm-0.2",
            "1.57x": "deepspeed-mii", "1.77x": "deepspeed-mii", "7.4x": "deepspeed-mii", "1.8x": "deepspeed-mii"}


def claim(short: str):
    return next(c for c in all_claims() if CLAIMS[short] in c.paper)


def sides(c) -> tuple[dict, dict]:
    """The claim's baseline and DistServe mappings, as evaluate() runs them."""
    base, _ = claim_scenarios(c)
    new = deep_merged(base, c.variant)
    new["kernel_engine"] = c.system_engine
    return base, new


def prefill_fit_ms(key, tokens: int) -> float:
    a, b, c = PREFILL_FIT[key]
    return a + b * tokens + c * tokens * tokens


def decode_fit_ms(key, rows: int, context: int) -> float:
    a, b, c = DECODE_FIT[key]
    return a + b * rows * context + c * rows


def step_table() -> None:
    """whatif's prompt and decode steps of the OPT-66B chatbot claim's sides against the release's fits."""
    base, new = sides(claim("2.75x"))
    for label, mapping in (("vLLM v0.2.3", base), ("DistServe", new)):
        cluster = Cluster(Clock(), _config(mapping, 0.1), 900)
        for replica in {r.role: r for r in cluster.replicas}.values():
            times, par = replica.times, replica.times.setup.parallel
            key = ("vllm" if label.startswith("vLLM") else "distserve", par.tp)
            print(f"{label} {replica.role} replica, tp {par.tp} x pp {par.pp} (fit: tp {par.tp}, whole pass)")
            if replica.role != "decode":
                for tokens in (100, 500, 770, 1000, 1500, 1974):
                    w = times.time(0, 0, [(tokens, 0)]) * 1e3
                    f = prefill_fit_ms(key, tokens)
                    print(f"  prompt {tokens:5d} tokens: whatif {w:6.1f} ms, fit {f:6.1f} ms, fit / whatif {f / w:.2f}")
            if replica.role != "prefill":
                for rows in (1, 8, 16, 32, 64):
                    w = times.time(rows, 1000, []) * 1e3
                    f = decode_fit_ms(key, rows, 1000)
                    print(f"  decode {rows:3d} rows at 1,000 tokens: whatif {w:6.1f} ms, fit {f:6.1f} ms, "
                          f"fit / whatif {f / w:.2f}")


@contextmanager
def dearer(engine: str, factor: float, prompt_steps_only: bool):
    """Every step of the engine named `engine` (a substring) `factor` times whatif's price, for the block. A step priced
    inside is memoized at its dearer price (decode_time / decode_span read the memo without calling `time`), and the
    simulator's kept IterationTimes (cluster._TIMES, which a capacity search's runs share) are dropped on entry and
    exit, so no price crosses a block (until session 73 L one could: figures moved with the order blocks ran in)."""
    original = iteration_time.IterationTimes.time

    def scaled(self, decode_seqs, decode_context, prefills):
        misses = getattr(self, "misses", None)
        t = original(self, decode_seqs, decode_context, prefills)
        name = getattr(self.setup.engine_spec, "name", "") or ""
        if not (engine in name and (prefills or not prompt_steps_only)):
            return t
        if misses is None or self.misses > misses:   # priced now (a memo hit already holds the dearer price)
            t *= factor
            if misses is not None and self.cache:     # its memo entry is the last one written
                self.cache[next(reversed(self.cache))] = t
        return t
    sim_cluster._TIMES.clear()
    iteration_time.IterationTimes.time = scaled
    try:
        yield
    finally:
        iteration_time.IterationTimes.time = original
        sim_cluster._TIMES.clear()


def scale_table(factors=(1.0, 1.05, 1.1, 1.2)) -> None:
    """Each claim's sides (capacities, or the SLO-scale claims' tightest scales) with its baseline's steps, then
    DistServe's, made dearer."""
    for short in CLAIMS:
        c = claim(short)
        lo, hi = c.effective_band
        for engine in (BASELINE[short], "distserve"):
            prompt_only = engine == "vllm-0.2"   # v0.2.3's steps are prompts or decodes; MII's passes mix them
            cells = []
            for f in factors:
                with dearer(engine, f, prompt_only):
                    o = evaluate(c)
                cells.append(f"x{f:g}: {o.baseline:.3f} / {o.predicted:.3f} = {o.gain:.2f}x")
            what = "prompt steps" if prompt_only else "steps"
            print(f"{short} (band {lo:.2f}-{hi:.2f}), {engine} {what} dearer: " + "; ".join(cells))


def floor_table() -> None:
    """Attainment (both, first token only, token gap only) of each side of the OPT-66B rate claims on the
    release's per-GPU rate grid (plot.ipynb / _plot.py), 100 / 200 requests."""
    for short, grid in (("2.75x", (0.125, 0.25, 0.5, 0.75, 1.0)), ("4.24x", (0.125, 0.25, 0.375, 0.5, 0.625)),
                        ("1.77x", (0.25, 0.5, 0.75, 1.0, 1.25))):
        c = claim(short)
        for label, mapping in zip(("baseline", "DistServe"), sides(c)):
            slo, gpus = mapping["sim"]["slo"], cluster_gpus(mapping)
            cells = []
            for rate in grid:
                r = run(mapping, rate * gpus)
                cells.append(f"{rate:g}: {r.attainment():.2f} ({r.attainment(SLO(ttft_s=slo['ttft_s'])):.2f} / "
                             f"{r.attainment(SLO(tpot_s=slo['tpot_s'])):.2f})")
            print(f"{short} {label} ({gpus} GPUs), req/s a GPU: both (TTFT / TPOT): " + "; ".join(cells))


def slo_table(scales=(3, 2.5, 2, 1.7, 1.5, 1.3, 1.1, 0.9, 0.8, 0.7, 0.6, 0.5)) -> None:
    """Attainment (both, first token only, token gap only) of each side of the OPT-66B chatbot SLO-scale claims over
    plot.ipynb cell 91's scale grid (and two below it), at the panel's 0.75 req/s a GPU."""
    seen = set()
    for short in ("3.14x", "1.8x"):
        c = claim(short)
        for label, mapping in zip((c.baseline_engine, "distserve"), sides(c)):
            if label in seen:
                continue
            seen.add(label)
            r, slo = run(mapping), mapping["sim"]["slo"]
            both = [r.attainment(SLO(**{k: v * x for k, v in slo.items()})) for x in scales]
            ttft = [r.attainment(SLO(ttft_s=slo["ttft_s"] * x)) for x in scales]
            tpot = [r.attainment(SLO(tpot_s=slo["tpot_s"] * x)) for x in scales]
            for what, row in (("both", both), ("TTFT", ttft), ("TPOT", tpot)):
                print(f"{label} {what} at scales {'/'.join(f'{x:g}' for x in scales)}: "
                      + " / ".join(f"{100 * (a or 0.0):.0f}" for a in row) + "%")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", action="store_true", help="step prices against the release's fits")
    p.add_argument("--scale", action="store_true", help="each side's figure with its steps made dearer")
    p.add_argument("--floor", action="store_true", help="attainment over the release's rate grids")
    p.add_argument("--slo", action="store_true", help="attainment over the OPT-66B chatbot SLO-scale grid")
    args = p.parse_args()
    every = not (args.steps or args.scale or args.floor or args.slo)
    if args.steps or every:
        step_table()
    if args.floor or every:
        floor_table()
    if args.slo or every:
        slo_table()
    if args.scale or every:
        scale_table()


if __name__ == "__main__":
    main()
