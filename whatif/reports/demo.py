"""`whatif demo`: the flagship what-if on built-in profiles, as one page.

Where should long-context Llama-3.1-70B (4-bit weights) be served: one H100 SXM (80 GB HBM3), one GH200
(144 GB HBM3e, with Grace's LPDDR5X over NVLink-C2C), or an H100 PCIe whose host has CXL memory expanders?
Eight 16k-token prompts need about 87 GB per GPU, more than an H100 holds: the page shows what each answer
costs (KV quantization, the bigger HBM, offloading the KV to a slower tier), with speculative decoding on top,
then serves long-context traffic on the GH200 and searches each system's capacity under an SLO. Sized to
finish in a few seconds: the simulations are small (and say so)."""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ..specs import units
from ..queries.compare import Comparison, Row
from ..scenario import Scenario, build_scenario
from .breakdowns import latency_section, memory_section
from .build import comparison_sweeps
from .capacity import capacity_section
from .comparison import comparison_section, row_name
from .page import Page, esc
from .roofline_chart import roofline_section
from .simulation import simulation_section
from .summary import estimate_summary
from .sweeps import sweep_section

MODEL = "llama-3.1-70b"
PRECISION = {"weight": "int4", "activation": "bf16", "kv": "bf16"}   # AWQ-style 4-bit weights, 16-bit KV
WORKLOAD = {"batch": 8, "prompt": 16384, "output": 512}
H100, GH200, CXL = "h100-sxm", "gh200-144gb-superchip", "h100-pcie-cxl"
QUESTION = ("Where should long-context Llama-3.1-70B with 4-bit weights be served: one H100 SXM (80 GB HBM3), one "
            "GH200 (144 GB HBM3e, plus Grace's LPDDR5X over NVLink-C2C), or an H100 PCIe whose host has CXL memory "
            "expanders? Eight 16,384-token prompts need about 87 GB per GPU, more than an H100 holds. Each row "
            "below is one answer: a KV technique (KIVI's 2-bit cache), the bigger HBM, or the KV cache offloaded "
            "to a slower tier, with speculative decoding on top.")


@dataclass(frozen=True)
class Config:
    techniques: tuple[str, ...]
    hardware: str
    place: tuple[str, ...] = ()
    note: str = ""                      # how the row names its placement


CONFIGS = (
    Config((), H100),
    Config(("kivi",), H100),
    Config(("kivi", "speculative"), H100),
    Config((), GH200),
    Config(("kivi", "speculative"), GH200),
    Config((), GH200, ("kv=lpddr5x",), "KV in Grace LPDDR5X"),
    Config((), CXL, ("kv=cxl",), "KV on CXL"),
    Config(("kivi",), CXL, ("kv=cxl",), "KV on CXL"),
)
FLAGSHIP = 3                            # the GH200 baseline: its roofline and breakdowns are shown
OFFLOAD = 6                             # the H100 PCIe with its KV on CXL: a second roofline
SIM = {"lengths": "long-context", "rate": 0.15, "requests": 60, "seed": 0}
SLO = {"ttft_s": 5.0, "tpot_s": 0.05}
CAPACITY_CONFIGS = (1, 3, 4)            # rows of CONFIGS whose capacity is searched
CAPACITY_TRAFFIC = {"lengths": "long-context", "requests": 40, "seed": 0}
CAPACITY_SEARCH = {"lo": 0.05, "hi": 0.8, "rel_tol": 0.15, "max_runs": 6}


def scenario(c: Config) -> Scenario:
    return build_scenario({"model": MODEL, "hardware": c.hardware, "techniques": list(c.techniques),
                           "place": list(c.place)}, {"precision": dict(PRECISION), "workload": dict(WORKLOAD)})


def comparison() -> tuple[Comparison, list[Scenario]]:
    scenarios = [scenario(c) for c in CONFIGS]
    rows = []
    for c, sc in zip(CONFIGS, scenarios):
        est = sc.run()
        hardware = c.hardware + (f" ({c.note})" if c.note else "")
        rows.append(Row(est.techniques.label(), hardware, est.techniques.label(), est))
    return Comparison(tuple(rows)), scenarios


def simulation(sc: Scenario):
    from ..simulator.cluster import simulate
    from ..simulator.config import SLO as SLOConfig
    from ..simulator.config import SimConfig
    from ..simulator.workload import WorkloadSpec
    cfg = SimConfig(sc, WorkloadSpec(**SIM), slo=SLOConfig(**SLO))
    return simulate(cfg)


def capacities(scenarios: list[Scenario], c: Comparison) -> tuple[dict, str]:
    from ..simulator.capacity import max_rate
    from ..simulator.cluster import simulate
    from ..simulator.config import SLO as SLOConfig
    from ..simulator.config import SimConfig
    from ..simulator.workload import WorkloadSpec, describe
    slo = SLOConfig(**SLO)
    spec = WorkloadSpec(**CAPACITY_TRAFFIC)
    results = {}
    for i in CAPACITY_CONFIGS:
        cfg = SimConfig(scenarios[i], spec, slo=slo)
        results[row_name(c.rows[i])] = max_rate(
            lambda rate, cfg=cfg: simulate(replace(cfg, workload=replace(cfg.workload, rate=rate))), slo,
            **CAPACITY_SEARCH)
    traffic = describe(spec).replace(f" {spec.rate:g} req/s", " arrivals at each rate searched", 1)
    return results, traffic


def headline(c: Comparison) -> str:
    """One line: what fits where, and the TPOT of each system's plain and best configuration."""
    parts = []
    for hardware in dict.fromkeys(r.hardware for r in c.rows):
        mine = [r for r in c.rows if r.hardware == hardware]
        base = mine[0].estimate
        if not base.memory.fits:
            over = "; ".join(f"{tier} {units.nbytes(need)} > {units.nbytes(usable)} usable"
                             for tier, need, usable in base.memory.overflow())   # every tier over
            text = f"{hardware}: does not fit ({over})"
        else:
            text = f"{hardware}: TPOT {units.seconds(base.tpot_s)}"
        fitting = [r for r in mine if r.estimate.memory.fits]
        if fitting:
            best = min(fitting, key=lambda r: r.estimate.tpot_s)
            if best is not mine[0]:
                text += f", with {best.label} TPOT {units.seconds(best.estimate.tpot_s)}"
        parts.append(text)
    return "; ".join(parts)


def build() -> tuple[Page, str]:
    """The demo page and its headline line."""
    t0 = time.perf_counter()
    c, scenarios = comparison()
    flagship, offload = c.rows[FLAGSHIP].estimate, c.rows[OFFLOAD].estimate
    sweeps = comparison_sweeps(c, scenarios)
    sim = simulation(scenarios[FLAGSHIP])
    caps, traffic = capacities(scenarios, c)
    page = Page(f"whatif demo: {MODEL} (4-bit weights) on H100, GH200 and H100 + CXL",
                [f"batch {WORKLOAD['batch']}, prompt {WORKLOAD['prompt']:,} tokens, output {WORKLOAD['output']:,} "
                 f"tokens; efficiency: {flagship.efficiency.source}; built-in profiles only"])
    summary = estimate_summary(flagship, QUESTION)
    summary.html(f"<p><b>Headline.</b> {esc(headline(c))}</p>")
    summary.html("<p>The scenario lines and the table above describe the GH200 baseline; the comparison below "
                 "has every configuration.</p>")
    page.add(summary)
    page.add(comparison_section(c, "Comparison: systems, techniques and placements"))
    page.add(sweep_section(sweeps))
    page.add(roofline_section(flagship, f"Roofline: {row_name(c.rows[FLAGSHIP])}"))
    page.add(roofline_section(offload, f"Roofline: {row_name(c.rows[OFFLOAD])}", "roofline-offload"))
    page.add(latency_section(flagship))
    page.add(memory_section(flagship))
    page.add(simulation_section(sim, f"Serving simulation: {row_name(c.rows[FLAGSHIP])} (a small run: "
                                     f"{SIM['requests']} requests)"))
    page.add(capacity_section(caps, traffic, f"Capacity under the SLO (small runs: {CAPACITY_TRAFFIC['requests']} "
                                             "requests per probe)"))
    page.subtitle.append(f"built in {time.perf_counter() - t0:.1f} s")
    return page, headline(c)

