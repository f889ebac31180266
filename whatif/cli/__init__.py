"""The `whatif` command line: estimate, compare, crossover, size-tier, simulate, capacity, search, report, demo,
kernel, validate, list, show.

One module per command family (estimate.py, compare.py, tiers.py, simulate.py, search.py, report.py,
validate.py, catalog.py), each with its parser and its commands; the flags they share are in one place each:
scenario_flags.py (the scenario), sim_flags.py (the simulator), reporting.py (--report), progress.py (the
progress bar), common.py (the parser class, optional packages); reports/output.py formats estimates and
kernels (the API's results too).
Building the parser imports nothing heavy: each command imports what it runs when it runs, and a run
imports its own command's module alone (COMMANDS)."""
from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..errors import WhatifError
from .common import WhatifParser, unknown_flags

# Each command: its module here (with the function that adds its flags to its parser, and the one that runs it)
# and its one-line help. A run imports the module of its command alone.
COMMANDS = {
    "estimate": ("estimate", "add_estimate_parser", "cmd_estimate",
                 "TTFT, TPOT, throughput, memory and per-op tables for a scenario"),
    "compare": ("compare", "add_compare_parser", "cmd_compare",
                "technique sets and systems side by side against a baseline"),
    "crossover": ("tiers", "add_crossover_parser", "cmd_crossover",
                  "the batch from which an offloading scenario beats more GPUs per GPU"),
    "size-tier": ("tiers", "add_size_tier_parser", "cmd_size_tier",
                  "how many devices of a memory tier a scenario needs, and its decode rate"),
    "simulate": ("simulate", "add_simulate_parser", "cmd_simulate",
                 "serve a stream of requests: latency percentiles, throughput, goodput"),
    "capacity": ("simulate", "add_capacity_parser", "cmd_capacity",
                 "the highest request rate that meets latency SLOs, per configuration"),
    "search": ("search", "add_search_parser", "cmd_search",
               "the best deployment (TP/PP/EP, replicas, aggregated or disaggregated, batch, precision) of a model "
               "on a GPU budget under TTFT/TPOT targets"),
    "report": ("report", "add_report_parser", "cmd_report",
               "one self-contained HTML page for a scenario (charts; works offline)"),
    "demo": ("report", "add_demo_parser", "cmd_demo",
             "the flagship what-if on built-in profiles, as one HTML page (a few seconds)"),
    "kernel": ("estimate", "add_kernel_parser", "cmd_kernel", "single-kernel predictions"),
    "validate": ("validate", "add_validate_parser", "cmd_validate",
                 "Triton kernels on a real GPU: measure, calibrate, report accuracy"),
    "list": ("catalog", "add_list_parser", "cmd_list", "list hardware, models or techniques"),
    "show": ("catalog", "add_show_parser", "cmd_show", "show one hardware component, model or technique with sources"),
}


def _function(command: str, which: int):
    module = importlib.import_module(f".{COMMANDS[command][0]}", __name__)
    return getattr(module, COMMANDS[command][which])


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser; with `only` a command, that command alone with its flags (what one run parses: its module
    alone is imported, ~600 flags and a dozen sub-parsers not built); with `only` anything else (the top-level
    --help, a misspelt command), every command registered by name and help."""
    ap = WhatifParser(prog="whatif", description="Predict LLM inference latency, throughput and memory from specs.")
    ap.add_argument("--version", action="version", version=f"whatif {__version__}")
    sub = ap.add_subparsers(dest="command", parser_class=WhatifParser)
    names = (only,) if only in COMMANDS else COMMANDS
    for name in names:
        parser = sub.add_parser(name, help=COMMANDS[name][3])
        if only is None or name == only:
            _function(name, 1)(parser)
    return ap


def command_of(argv: list[str]) -> str:
    """The command named in argv (the first word not a flag: the top level takes only --version and -h), or ''."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv: list[str] | None = None) -> int:
    """Run the command in argv (default: this process's command line, whose end it then is: see _exiting)."""
    if argv is None:
        _starting()
        try:
            return _run(sys.argv[1:])
        finally:
            _exiting()
    return _run(list(argv))


# Allocations between young collections in a whole CLI process (CPython's default is 700): its start allocates
# its modules' classes, functions and dataclass methods, which live to the end, and young collections at 700
# rescan them ~50 times in a simulate's start (~10% of a cold estimate's or simulate's start, gc.callbacks
# timing); the simulator's own pause raises it too (simulator/collections_paused.py), and restores this.
PROCESS_YOUNG_THRESHOLD = 20_000
# Young collections between middle-generation ones (CPython's default is 10). The start's objects all survive: the
# tenth young collection of a simulate's start (its imports, before the run freezes them) walked ~200,000 of them to
# collect nothing, ~17 ms (gc.callbacks, thread CPU); at 20 it comes after the start (in a 50,000-request simulate,
# not at all), and a long run still collects its middle generation every 20 young collections.
PROCESS_MIDDLE_EVERY = 20
# OpenBLAS (numpy's BLAS) starts a worker thread per core as numpy loads, and each spins for a while before it
# sleeps: ~30 ms of CPU in any process that imports numpy, ~60 ms in a 50,000-request simulation (perf: its
# blas_thread_server). A command's arrays are far too small for threaded BLAS to pay (the simulator and the
# summary call no BLAS routine at all), so a whole process runs it on one thread; the user's own setting wins.
ONE_BLAS_THREAD = "1"


_KEPT: list = []   # what a whole process keeps to its end (keep_to_exit); [] while main(argv) runs
_WHOLE_PROCESS = [False]   # set by _starting: main() runs the whole process (a list: set in place)


def keep_to_exit(*objects) -> None:
    """In a whole process (main() without argv), keep `objects` to its end and never free them one by one: a
    50,000-request simulation's result (records, token runs, iteration log) costs ~40 ms of deallocation on
    return, and the system takes the process's memory back whole. A caller's main(argv) frees them as usual."""
    if _WHOLE_PROCESS[0]:
        _KEPT.extend(objects)


def _starting() -> None:
    """A whole process's command starts: young collections every PROCESS_YOUNG_THRESHOLD allocations (middle ones
    every PROCESS_MIDDLE_EVERY young ones), and numpy's BLAS on one thread unless the user set OPENBLAS_NUM_THREADS
    (see ONE_BLAS_THREAD)."""
    import gc
    import os
    gc.set_threshold(PROCESS_YOUNG_THRESHOLD, PROCESS_MIDDLE_EVERY, gc.get_threshold()[2])
    _WHOLE_PROCESS[0] = True
    if "numpy" not in sys.modules:   # (read as numpy loads OpenBLAS: too late once it is imported)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", ONE_BLAS_THREAD)


def _exiting() -> None:
    """The process ends next: its objects go to the collector's permanent generation, so the interpreter's last
    collection at exit does not walk them (after a 50,000-request simulation, ~0.1 s of a ~2.2 s process; its
    memory goes back to the system as a whole). Only a whole process's main() does this: a caller's own
    objects stay collectable. What keep_to_exit kept is a frozen cycle (the list holds itself): clearing the
    modules at exit does not free it, and the last collection does not look at frozen objects."""
    import gc
    _WHOLE_PROCESS[0] = False   # (a test's main() then main(argv): the latter frees its objects as usual)
    if _KEPT:
        _KEPT.append(_KEPT)
    gc.freeze()


def _run(argv: list[str]) -> int:
    parser = build_parser(only=command_of(argv))
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:
            raise unknown_flags(parser, getattr(args, "command", None), extra)
        if args.command is None:
            parser.print_help()
            return 0
        return _function(args.command, 2)(args)
    except WhatifError as exc:
        print(f"whatif: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
