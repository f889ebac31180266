"""Pages, one per result type: an estimate, a comparison, a simulation, a capacity search, a validation table,
the reproduction table, and the scenario report that puts several of them on one page (`whatif report`)."""
from __future__ import annotations


from .breakdowns import latency_section, memory_section
from .capacity import capacity_section
from .comparison import comparison_section, row_name
from .page import Page, Section, definitions, note
from .reproduction import ReproRow, reproduction_section
from .roofline_chart import roofline_section
from .simulation import simulation_section
from .summary import estimate_summary, scenario_only_pairs
from .sweeps import Sweep, batch_sweep, sweep_section
from .validation import Measurement, validation_section


def _title(e) -> str:
    return f"{e.model.name} on {e.system.name}"


def estimate_sections(scenario, est, sweep: bool = True, batches: list[int] | None = None,
                      question: str = "") -> list[Section]:
    """Summary, roofline, latency and memory breakdowns, and (with `sweep`) the batch sweep of one scenario."""
    sections = [estimate_summary(est, question), roofline_section(est), latency_section(est), memory_section(est)]
    if sweep:
        label = f"{_title(est)}, {est.techniques.label()}"
        sections.append(sweep_section([batch_sweep(label, scenario, est.max_batch, batches)]))
    return sections


def estimate_page(scenario, est, sweep: bool = True, batches: list[int] | None = None) -> Page:
    page = Page(f"whatif estimate: {_title(est)}", [f"efficiency: {est.efficiency.source}"])
    for s in estimate_sections(scenario, est, sweep, batches):
        page.add(s)
    return page


def compare_scenarios(base, variants: list[str], other_systems: list[str], host_links: list[str] | None) -> list:
    """The scenario of each row of `run_compare(base, variants, other_systems, host_links)`, in its order."""
    from ..queries.compare import compare_rows
    return [scenario for _, scenario in compare_rows(base, variants, other_systems, host_links)]


def comparison_sweeps(comparison, scenarios: list, batches: list[int] | None = None) -> list[Sweep]:
    return [batch_sweep(row_name(r), sc, r.estimate.max_batch, batches) for r, sc in zip(comparison.rows, scenarios)]


def compare_sections(comparison, scenarios: list | None = None, batches: list[int] | None = None,
                     question: str = "") -> list[Section]:
    """The baseline's summary, the comparison, the batch sweep of every row (when `scenarios` are given), and
    the baseline's roofline and breakdowns."""
    base = comparison.baseline.estimate
    summary = estimate_summary(base, question or f"Baseline of the comparison: {row_name(comparison.baseline)}.")
    sections = [summary, comparison_section(comparison)]
    if scenarios is not None:
        sections.append(sweep_section(comparison_sweeps(comparison, scenarios, batches)))
    sections += [roofline_section(base, f"Roofline: {row_name(comparison.baseline)}"), latency_section(base),
                 memory_section(base)]
    return sections


def compare_page(comparison, scenarios: list | None = None, batches: list[int] | None = None) -> Page:
    base = comparison.baseline.estimate
    page = Page(f"whatif compare: {base.model.name}, {len(comparison.rows)} configurations",
                [f"baseline: {row_name(comparison.baseline)}; efficiency: {base.efficiency.source}"])
    for s in compare_sections(comparison, scenarios, batches):
        page.add(s)
    return page


def scenario_section(scenario, extra: list[tuple[str, str]] = (), title: str = "Summary") -> Section:
    s = Section("summary", title)
    s.html(definitions(scenario_only_pairs(scenario) + list(extra)))
    return s


def simulation_page(cfg, result) -> Page:
    page = Page(f"whatif simulate: {cfg.scenario.model} on {cfg.scenario.hardware}",
                [str(result.setup.get("workload", ""))])
    page.add(scenario_section(cfg.scenario, [(k, v) for k, v in result.setup.items()
                                             if isinstance(v, str) and k != "scenario"]))
    page.add(simulation_section(result))
    return page


def capacity_page(configs: list[tuple[str, object]], results: dict, traffic: str) -> Page:
    first = configs[0][1]
    page = Page(f"whatif capacity: {first.model}, {len(configs)} configuration{'s' if len(configs) > 1 else ''}",
                [traffic])
    summary = scenario_section(first, [("traffic", traffic),
                                       ("configurations", "; ".join(label for label, _ in configs))])
    if len(configs) > 1:
        summary.html(note("The scenario lines describe the first configuration; the others differ in techniques "
                          "or hardware as their labels say."))
    page.add(summary)
    page.add(capacity_section(results, traffic))
    return page


def validation_page(rows: list[Measurement], source: str) -> Page:
    page = Page("whatif validation: predicted versus measured", [source])
    page.add(validation_section(rows, source))
    return page


def reproduction_page(rows: list[ReproRow]) -> Page:
    page = Page("whatif reproduction: paper claims versus predictions")
    page.add(reproduction_section(rows))
    return page
