"""The summary section: the scenario (model, system, parallelism, dtypes, techniques, workload), the headline
numbers with their units, and the efficiency source with its provenance."""
from __future__ import annotations

from ..specs import units
from ..roofline.estimate import Estimate
from .page import Section, definitions, esc, note, table
from .output import NO_DECODE


def gpus_text(n: int) -> str:
    return f"{n} GPU{'s' if n != 1 else ''}"


def scenario_pairs(e: Estimate) -> list[tuple[str, str]]:
    """(what, value) lines describing an estimate's scenario."""
    w, p = e.workload, e.parallel
    gpu = e.system.gpu
    act = e.precision.activation
    pairs = [
        ("model", e.model.name),
        ("system", f"{e.system.name} ({gpus_text(p.gpus)} of {gpu.name}: {e.system.description})"),
        ("parallelism", p.label()),
        ("dtypes", e.precision.label(e.techniques.kv_label(e.precision.kv))),
        ("techniques", e.techniques.label() if e.techniques else "none"),
        ("placement", e.placement.label()),
        ("workload", f"batch {w.batch} sequences, prompt {w.prompt:,} tokens, output {w.output:,} tokens"
         + (f", shared prefix {w.shared_prefix:,} tokens" if w.shared_prefix else "")),
        ("efficiency", f"{e.efficiency.source} ({e.efficiency.provenance})"),
        ("ceilings", f"{units.rate(gpu.peak_flops(act), 'FLOP/s')} {act} ({gpu.peak[act].provenance}), HBM "
                     f"{units.rate(gpu.hbm_bandwidth.value, 'B/s')} ({gpu.hbm_bandwidth.provenance}), "
                     f"{units.nbytes(gpu.hbm_capacity.value)} HBM per GPU"),
    ]
    return pairs


def _cost(e: Estimate) -> str:
    if e.price is None:
        return "no price known (give --price-per-hour USD)"
    at_max = f"; {e.max_batch_cost_per_mtok:.4g} USD at max batch" if e.max_batch_cost_per_mtok else ""
    return f"{e.cost_per_mtok:.4g} USD per 1M tokens at {e.price.usd_per_hour:.4g} USD/h{at_max}"


def headline_rows(e: Estimate) -> list[list[str]]:
    w, m = e.workload, e.memory
    tpot_name = "TPOT (mean decode step)" if e.decode_round is None else "TPOT (effective: round time / tokens)"
    fits = "yes" if m.fits else "NO: " + "; ".join(f"{t} needs {units.nbytes(need)} of {units.nbytes(usable)} usable"
                                                   for t, need, usable in m.overflow())
    return [
        ["TTFT", units.seconds(e.ttft_s) + (f" ({e.prefill_pass_count} prefill passes)"
                                            if e.prefill_pass_count > 1 else "")],
        [tpot_name, units.seconds(e.tpot_s) if w.output > 1 else NO_DECODE],
        ["end-to-end latency", units.seconds(e.e2e_s)],
        ["throughput (batch)", f"{e.throughput_tok_s:,.1f} tok/s"],
        ["decode throughput", f"{e.decode_throughput_tok_s:,.1f} tok/s" if w.output > 1 else NO_DECODE],
        [f"max batch at {w.prompt + w.output:,} tokens", f"{e.max_batch} sequences"],
        [f"throughput at max batch ({e.max_batch})", f"{e.max_batch_throughput_tok_s:,.1f} tok/s"],
        [f"max context at batch {w.batch}", f"{e.max_context:,} tokens"],
        ["memory per GPU (all tiers)", units.nbytes(m.total_bytes)],
        ["HBM per GPU", f"{units.nbytes(m.hbm_bytes)} of {units.nbytes(m.usable_bytes)} usable "
                        f"({m.utilization:.0%} of {units.nbytes(m.capacity_bytes)})"],
        ["fits", fits],
        ["cost", _cost(e)],
    ]


def headline_html(e: Estimate) -> str:
    rows = headline_rows(e)
    html_rows = [[k, f'<span class="bad">{esc(v)}</span>' if k == "fits" and v != "yes" else esc(v)]
                 for k, v in rows]
    return table(["metric", "value"], html_rows, raw={1})


def estimate_summary(e: Estimate, question: str = "") -> Section:
    s = Section("summary", "Summary")
    if question:
        s.html(f"<p>{esc(question)}</p>")
    s.html(definitions(scenario_pairs(e)))
    s.html(headline_html(e))
    s.html(note("Every number comes from the roofline: op FLOPs and bytes over the hardware profile's ceilings, "
                f"scaled by the '{e.efficiency.source}' efficiency model named above; nothing is measured here."))
    return s


def efficiency_line(e: Estimate) -> str:
    return f"efficiency: {e.efficiency.source} ({e.efficiency.provenance})"


def scenario_only_pairs(scenario) -> list[tuple[str, str]]:
    """(what, value) lines of a scenario that has no single estimate (a simulation, a capacity search): the
    model, system, parallelism, dtypes, techniques, placement and efficiency with its provenance."""
    model, system, par, eff = scenario.resolve()
    techs = scenario.technique_set()
    placement = scenario.placement()
    p = scenario.precision
    return [
        ("model", model.name),
        ("system", f"{system.name} ({gpus_text(par.gpus)} of {system.gpu.name} per replica: {system.description})"),
        ("parallelism", par.label()),
        ("dtypes", p.label()),
        ("techniques", techs.label() if techs else "none"),
        ("placement", placement.label() if placement else "all in HBM"),
        ("efficiency", f"{eff.source} ({eff.provenance})"),
    ]
