"""`whatif compare`: technique sets and systems side by side against a baseline."""
from __future__ import annotations

import json

from ..errors import WhatifError
from .common import add_explain_flag
from .reporting import add_report_flag, start_report, write_report
from .scenario_flags import add_scenario_flags, scenario_from_args
from .sim_flags import check_file_sections
from .tables import add_table_flags, start_tables, write_tables


def add_compare_parser(cmp_) -> None:
    add_scenario_flags(cmp_)
    cmp_.add_argument("--variant", action="append", default=[], metavar="SET",
                      help="a technique set to compare, e.g. 'kivi' or 'int4+kivi+h2o:heavy=0.1' (repeatable)")
    cmp_.add_argument("--systems", help="comma-separated hardware to compare (the first is the baseline's); each "
                                        "may set its own parallelism: dgx-h100:tp=8,h100-sxm:tp=1")
    cmp_.add_argument("--host-links", help="comma-separated host links to run each system with, e.g. "
                                           "pcie-gen4-x16,pcie-gen5-x16,nvlink-c2c (the same offload over each)")
    add_explain_flag(cmp_)
    add_report_flag(cmp_)
    add_table_flags(cmp_)


def parse_systems(systems_arg: str | None, hardware_given: bool) -> list[str]:
    """--systems as a list of hardware names (empty when not given); an error beside --hardware."""
    systems = [h.strip() for h in systems_arg.split(",") if h.strip()] if systems_arg else []
    if systems_arg is not None and not systems:
        raise WhatifError("--systems: give one or more hardware names separated by commas")
    if systems and hardware_given:
        raise WhatifError("--systems and --hardware both name the hardware; give one of them")
    return systems


def compare_inputs(args):
    """(base scenario, other systems, host links) from compare's flags, each checked."""
    base = scenario_from_args(args)
    check_file_sections(base, args.scenario)
    systems = parse_systems(args.systems, bool(args.hardware))
    if systems:
        from ..queries.compare import on_system
        base = on_system(base, systems[0])
    links = [h.strip() for h in args.host_links.split(",") if h.strip()] if args.host_links else None
    if args.host_links is not None and not links:
        raise WhatifError("--host-links: give one or more link profile names separated by commas")
    if links and args.host_link:
        raise WhatifError("--host-links and --host-link both set the host link; give one of them")
    return base, systems[1:], links


def cmd_compare(args) -> int:
    from ..queries.compare import compare_dict, compare_text, run_compare
    start_report(args.report)
    start_tables(args)
    base, others, links = compare_inputs(args)
    result = run_compare(base, args.variant, others, links)
    from .estimate import warn_idle_shared_prefix
    warn_idle_shared_prefix(base.workload.shared_prefix, [r.estimate.techniques for r in result.rows])
    print(json.dumps(compare_dict(result), allow_nan=False) if args.json
          else compare_text(result, args.explain, asked=args.model))
    from .result_rows import COMPARE_COLUMNS, compare_rows
    write_tables(args, compare_rows(result), COMPARE_COLUMNS)
    if args.report:
        from ..reports.build import compare_page, compare_scenarios
        write_report(compare_page(result, compare_scenarios(base, args.variant, others, links)), args.report)
    return 0
