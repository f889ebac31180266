"""`whatif crossover` (from which batch an offloading scenario beats more GPUs) and `whatif size-tier` (how many
devices of a memory tier a scenario needs)."""
from __future__ import annotations

import json

from ..errors import WhatifError, shown
from ..specs.checks import MAX_BATCH, MAX_PARALLEL, flag_int, flag_text, integer
from ..specs.hardware import MAX_TIER_DEVICES
from .scenario_flags import add_scenario_flags, scenario_from_args


MAX_SWEEP = 256   # batch sizes in one crossover sweep (each is one estimate)


def add_crossover_parser(cro) -> None:
    add_scenario_flags(cro)
    cro.add_argument("--versus-gpus", type=flag_int(1, MAX_PARALLEL, "GPUs"), default=2,
                     help="GPUs (tensor parallel, all in HBM) to compare against (default 2)")
    cro.add_argument("--batches", type=flag_text, help="comma-separated batch sizes to sweep (default 1,2,4,...,1024)")


def add_size_tier_parser(siz) -> None:
    add_scenario_flags(siz)
    siz.add_argument("--tier", type=flag_text, required=True, help="memory profile to add, e.g. cxl-micron-cz120-256gb")
    siz.add_argument("--max-count", type=flag_int(1, MAX_TIER_DEVICES, "devices"), default=None,
                     help="most devices to try (default 64)")


def cmd_crossover(args) -> int:
    from ..queries.tier_queries import SWEEP_BATCHES, crossover_dict, crossover_text, run_crossover
    if args.batch is not None:
        raise WhatifError("whatif crossover: --batch is swept; use --batches to choose the sizes")
    batches = SWEEP_BATCHES
    if args.batches is not None:   # `--batches=` is an error, not the default sweep
        parts = [b.strip() for b in args.batches.split(",")]
        if not 1 <= len(parts) <= MAX_SWEEP or not all(b.isdigit() and len(b) <= 10 for b in parts):
            raise WhatifError(f"--batches: {shown(args.batches)} must be 1 to {MAX_SWEEP} comma-separated positive "
                              f"integers")
        batches = tuple(integer(int(b), "--batches", 1, MAX_BATCH, "sequences") for b in parts)
    result = run_crossover(scenario_from_args(args), args.versus_gpus, sorted(set(batches)))
    print(json.dumps(crossover_dict(result), allow_nan=False) if args.json else crossover_text(result))
    return 0


def cmd_size_tier(args) -> int:
    from ..errors import positive_int
    from ..queries.tier_queries import MAX_TIER_COUNT, run_size_tier, size_tier_dict, size_tier_text
    limit = positive_int(args.max_count, "--max-count") if args.max_count is not None else MAX_TIER_COUNT
    result = run_size_tier(scenario_from_args(args), args.tier, limit)
    if args.json:
        print(json.dumps(size_tier_dict(result), allow_nan=False))
    else:
        print(size_tier_text(result, limit))
    return 0
