"""The `whatif` command line: estimate, compare, crossover, size-tier, simulate, capacity, search, report, demo,
kernel, validate, list, show.

One module per command family (estimate.py, compare.py, tiers.py, simulate.py, search.py, report.py,
validate.py, catalog.py), each with its parser and its commands; the flags they share are in one place each:
scenario_flags.py (the scenario), sim_flags.py (the simulator), reporting.py (--report), progress.py (the
progress bar), common.py (the parser class, optional packages); reports/output.py formats estimates and
kernels (the API's results too).
Building the parser imports nothing heavy: each command imports what it runs when it runs."""
from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import WhatifError
from .catalog import add_catalog_parsers, cmd_list, cmd_show
from .common import WhatifParser, unknown_flags
from .compare import add_compare_parser, cmd_compare
from .estimate import add_estimate_parser, add_kernel_parser, cmd_estimate, cmd_kernel
from .report import add_demo_parser, add_report_parser, cmd_demo, cmd_report
from .search import add_search_parser, cmd_search
from .simulate import add_capacity_parser, add_simulate_parser, cmd_capacity, cmd_simulate
from .tiers import add_crossover_parser, add_size_tier_parser, cmd_crossover, cmd_size_tier
from .validate import add_validate_parser, cmd_validate


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only`, that command's flags alone, every other command registered by name and
    help (what one run and the top-level --help read; adding ~600 flags is most of building the whole one)."""
    ap = WhatifParser(prog="whatif", description="Predict LLM inference latency, throughput and memory from specs.")
    ap.add_argument("--version", action="version", version=f"whatif {__version__}")
    sub = ap.add_subparsers(dest="command", parser_class=WhatifParser)
    if only is not None:
        sub = _NamesOnly(sub, only)
    add_estimate_parser(sub)
    add_compare_parser(sub)
    add_crossover_parser(sub)
    add_size_tier_parser(sub)
    add_simulate_parser(sub)
    add_capacity_parser(sub)
    add_search_parser(sub)
    add_report_parser(sub)
    add_demo_parser(sub)
    add_kernel_parser(sub, WhatifParser)
    add_validate_parser(sub, WhatifParser)
    add_catalog_parsers(sub)
    return ap


class _NamesOnly:
    """The subcommands action as the add_*_parser functions see it: each command is registered as given, and
    only the one named `keep` gets its flags (the others' parsers are handed back as _Inert)."""

    def __init__(self, sub, keep: str):
        self._sub, self._keep = sub, keep

    def add_parser(self, name, **kwargs):
        parser = self._sub.add_parser(name, **kwargs)
        return parser if name == self._keep else _Inert()


class _Inert:
    """Takes any parser call (add_argument, groups, nested subcommands) and does nothing."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: self


def command_of(argv: list[str]) -> str:
    """The command named in argv (the first word not a flag: the top level takes only --version and -h), or ''."""
    return next((a for a in argv if not a.startswith("-")), "")


COMMANDS = {"estimate": cmd_estimate, "compare": cmd_compare, "crossover": cmd_crossover, "size-tier": cmd_size_tier,
            "simulate": cmd_simulate, "capacity": cmd_capacity, "search": cmd_search,
            "report": cmd_report, "demo": cmd_demo,
            "kernel": cmd_kernel, "list": cmd_list, "show": cmd_show, "validate": cmd_validate}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=command_of(argv))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            raise unknown_flags(parser, getattr(args, "command", None), extra)
        if args.command is None:
            parser.print_help()
            return 0
        return COMMANDS[args.command](args)
    except WhatifError as exc:
        print(f"whatif: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
