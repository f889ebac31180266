"""`whatif validate run | calibrate | report | reference`: the command line of whatif/validate/ (which holds no CLI)."""
from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

from ..errors import WhatifError
from ..specs.checks import flag_float, flag_int, flag_text, writable_file
from .reporting import start_report, write_report
RUN_EPILOG = """On a machine with one NVIDIA GPU (H100 or H200; estimated under 7 minutes by
benchmarks/validate_sweep.py, not yet measured; the budget stops new cases at 7 minutes, so it fits one
8-minute call):

  pip install -e '.[validate]'        # or, where torch and triton are already there: PYTHONPATH=. python3 -m whatif
  whatif validate run --out whatif/validate/measurements/h100-sxm/run
  whatif validate calibrate whatif/validate/measurements/h100-sxm/run/measurements.csv \\
      --out whatif/validate/measurements/h100-sxm/calibration.yaml

The run checks every kernel against its torch reference, times it (triton.testing.do_bench, median, L2 flushed,
rotating input sets), predicts it with the default efficiency model, and writes measurements.csv and device.json.
It stops starting new cases after --budget seconds and lists what it skipped. --dry-run runs the same pipeline
on the CPU interpreter with the small test shapes (its times mean nothing)."""


def add_validate_parser(p) -> None:
    from ..validate.kernels import FAMILIES
    vsub = p.add_subparsers(dest="validate", parser_class=type(p))
    run = vsub.add_parser("run", help="check and time every kernel of the sweep on this GPU; write a measurement table",
                          epilog=RUN_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    run.add_argument("--out", type=flag_text, default="whatif-validate", metavar="DIR",
                     help="folder for measurements.csv and device.json (default ./whatif-validate)")
    run.add_argument("--families", default=",".join(FAMILIES),
                     help=f"comma-separated kernel families (default all: {','.join(FAMILIES)})")
    run.add_argument("--gpu", type=flag_text,
                     help="whatif GPU profile to predict for (default: from the device's name)")
    run.add_argument("--budget", type=flag_float(0, 86400, "seconds", low_open=True), default=None, metavar="S",
                     help="stop starting new cases after S seconds (default 420)")
    run.add_argument("--dry-run", action="store_true",
                     help="run on the CPU interpreter with the small test shapes (checks the pipeline, no GPU times)")
    run.add_argument("--quiet", action="store_true", help="no line per case")

    cal = vsub.add_parser("calibrate", help="fit the efficiency model of one GPU on measurement tables; report "
                                            "held-out error before and after")
    cal.add_argument("tables", nargs="*", metavar="TABLE", help="measurement tables (measurements.csv)")
    cal.add_argument("--reference", action="store_true",
                     help="add the public reference measurements for the GPU (Vidur's A100 / H100 kernel timings)")
    cal.add_argument("--gpu", type=flag_text, help="the GPU to calibrate when the tables hold several")
    cal.add_argument("--vidur", type=flag_text, metavar="DIR",
                     help="Vidur's profiling folder for the reference measurements "
                     "(default: reference/vidur-profiling under the working directory, as in a checkout)")
    cal.add_argument("--out", type=flag_text, metavar="FILE",
                     help="write the calibration YAML here (default: print the summary only)")
    cal.add_argument("--json", action="store_true", help="print one JSON object")

    rep = vsub.add_parser("report", help="predicted versus measured per family and regime (MAPE, median, worst shapes)")
    rep.add_argument("tables", nargs="*", metavar="TABLE", help="measurement tables")
    rep.add_argument("--reference", action="store_true", help="add the public reference measurements (A100, H100)")
    rep.add_argument("--gpu", type=flag_text, help="only the rows of this GPU")
    rep.add_argument("--vidur", type=flag_text, metavar="DIR",
                     help="Vidur's profiling folder for the reference measurements "
                     "(default: reference/vidur-profiling under the working directory, as in a checkout)")
    rep.add_argument("--efficiency", choices=("ideal", "default", "calibrated"), default=None,
                     help="efficiency model to predict with (default: default; calibrated with --calibration)")
    rep.add_argument("--calibration", type=flag_text, help="calibration file for --efficiency calibrated")
    rep.add_argument("--split", choices=("all", "held-out", "train"), default="all", help="rows to score")
    rep.add_argument("--csv", type=flag_text, metavar="FILE",
                     help="also write the scored rows for `whatif report --measurements`")
    rep.add_argument("--html", type=flag_text, metavar="FILE",
                     help="also write the accuracy as one self-contained HTML page")
    rep.add_argument("--json", action="store_true", help="print one JSON object")

    ref = vsub.add_parser("reference", help="write the public reference measurements of a GPU as a measurement table")
    ref.add_argument("--gpu", type=flag_text, required=True,
                     help="a100-sxm-80gb or h100-sxm (Vidur); with --corpus also b200, l40s")
    ref.add_argument("--out", type=flag_text, required=True, metavar="FILE")
    ref.add_argument("--corpus", metavar="DIR", help="write the aiconfigurator corpus's GEMM and attention rows "
                     "(a folder of its tables, e.g. ../shared/reference/aiconfigurator, or the compact subset "
                     "whatif/validate/measurements/aiconfigurator) instead of Vidur's")
    ref.add_argument("--engine", default="vllm", help="with --corpus: the engine whose kernels (vllm, sglang, trtllm)")
    ref.add_argument("--rows", type=flag_int(1, 10**7, "rows"), default=1000, metavar="N",
                     help="with --corpus: at most N shapes per op and dtype, every k-th (default 1000)")
    ref.add_argument("--vidur", type=flag_text, metavar="DIR",
                     help="Vidur's profiling folder for the reference measurements "
                     "(default: reference/vidur-profiling under the working directory, as in a checkout)")
    ref.add_argument("--all-tokens", action="store_true",
                     help="every token count (default: the committed subset, 1 to 4096 in powers of 4)")


def _families(text: str) -> tuple[str, ...]:
    """Family names checked without importing the kernels (a dry run must switch the interpreter on first)."""
    from ..validate.kernels import FAMILIES
    names = tuple(f.strip() for f in text.split(",") if f.strip())
    if not names:
        raise WhatifError("--families: name at least one kernel family")
    for f in names:
        if f not in FAMILIES:
            raise WhatifError(f"--families: '{f}' is not a kernel family; valid: {', '.join(FAMILIES)}")
    return names


def _rows(args):
    from ..validate.reference import vidur_rows
    from ..validate.table import read_tables
    if not args.tables and not args.reference:
        raise WhatifError("name at least one measurement table, or --reference for the public measurements")
    rows = read_tables(args.tables)
    if args.reference:
        from ..validate.reference import reference_gpus
        gpus = [args.gpu] if args.gpu else sorted({r.gpu for r in rows} or set(reference_gpus()))
        for gpu in gpus:
            rows += vidur_rows(gpu, directory=args.vidur)
    return rows


def cmd_run(args) -> int:
    from ..validate.runner import BUDGET_S, run
    budget = BUDGET_S if args.budget is None else args.budget
    if budget <= 0:
        raise WhatifError(f"--budget: {budget:g} must be a positive number of seconds")
    log = (lambda *_: None) if args.quiet else (lambda line: print(line, flush=True))
    families = _families(args.families)
    for module in ("torch", "triton"):      # the kernels and their references, even in a dry run
        if importlib.util.find_spec(module) is None:
            raise WhatifError(f"whatif validate run needs {module}: pip install 'whatif[validate]' (on a GPU machine "
                              "a CUDA build of torch; on a CPU, --dry-run runs with the CPU build)")
    record = run(args.out, families, args.gpu, args.dry_run, budget, log)
    print(f"wrote {Path(args.out) / 'measurements.csv'} and device.json: {record['ok']} timed, {record['wrong']} wrong "
          f"result(s), {record['error']} error(s), {len(record['skipped'])} skipped for the budget, "
          f"in {record['wall_s']:.0f} s on {record['name']}")
    return 0 if record["wrong"] == 0 and record["error"] == 0 else 1


def cmd_calibrate(args) -> int:
    from ..validate.calibrate import calibrate, calibration_document, held_out_report, write_calibration
    if args.out:
        writable_file(args.out, "--out", "calibration.yaml")
    cal = calibrate(_rows(args), args.gpu, tuple(args.tables) + (("vidur reference",) if args.reference else ()))
    report = held_out_report(cal)
    doc = calibration_document(cal, report)
    if args.out:
        write_calibration(args.out, doc)
    if args.json:
        print(json.dumps(doc, allow_nan=False))
        return 0
    print(f"calibrated {cal.gpu} on {len(cal.train)} train rows; {len(cal.held_out)} held-out rows")
    for cls, (n, err) in sorted(cal.fitted.items()):
        p = cal.efficiency.classes[cls]
        print(f"  {cls:<18} {n:>6} rows  compute_eff {p.compute_eff:.3g}  memory_eff {p.memory_eff:.3g}  "
              f"overhead {p.overhead_s * 1e6:.3g} us  in-sample MAPE {err:.1%}")
    if cal.kept:
        print(f"  kept from the default model (too few rows): {', '.join(cal.kept)}")
    for (model, dtype), (n, err) in sorted((cal.kernel or {}).items()):
        print(f"  kernel model {model} {dtype}: {n} rows, in-sample mean |log error| {err:.3f} (times these ops)")
    d, c = report["default"], report["calibrated"]
    if d["rows"]:
        print(f"held-out error: MAPE {d['mape']:.1%} -> {c['mape']:.1%}, median |error| {d['median_abs']:.1%} -> "
              f"{c['median_abs']:.1%} (default -> calibrated, {d['rows']} rows the fit did not see)")
        for fam, s in report["by_family"].items():
            print(f"  {fam:<20} {s['rows']:>6} rows  MAPE {s['default_mape']:.1%} -> {s['calibrated_mape']:.1%}")
    if args.out:
        print(f"wrote {args.out} (use: --efficiency calibrated --calibration {args.out})")
    return 0


def cmd_validate_report(args) -> int:
    from ..specs.hardware import load_component
    from ..roofline.efficiency import load_efficiency
    from ..validate.accuracy import as_measurements, group_stats, overall, score, text_table, worst_lines
    from ..roofline.efficiency import efficiency_source
    args.efficiency = efficiency_source(args.efficiency, args.calibration)
    if args.html:
        start_report(args.html, "--html")
    if args.csv:
        writable_file(args.csv, "--csv", "scored.csv")
    rows = _rows(args)
    if args.gpu:
        rows = [r for r in rows if r.gpu == args.gpu]
    if args.split != "all":
        rows = [r for r in rows if r.split == args.split]
    cache = {}

    def efficiency_for(gpu_name):
        if gpu_name not in cache:
            gpu = load_component(gpu_name, "gpu")
            cache[gpu_name] = (gpu, load_efficiency(args.efficiency, gpu, args.calibration))
        return cache[gpu_name]

    scored = score(rows, efficiency_for)
    if not scored:
        raise WhatifError("the tables have no timed rows to report on")
    stats = group_stats(scored)
    if args.csv:
        from ..validate.table import write_measurements
        write_measurements(args.csv, as_measurements(scored))
    if args.html:
        from ..reports.build import validation_page
        page = validation_page(as_measurements(scored), f"measurement tables, {args.efficiency} efficiency")
        write_report(page, args.html, "--html")
    if args.json:
        print(json.dumps({"efficiency": args.efficiency, "overall": overall(scored),
                          "held_out": overall(scored, "held-out"),
                          "groups": [{"family": g.family, "regime": g.regime, "split": g.split, "rows": g.rows,
                                      "mape": g.mape, "median_abs": g.median_abs, "bias": g.median_signed,
                                      "worst": [{"kernel": w.row.kernel, "error": w.error} for w in g.worst]}
                                     for g in stats]}, allow_nan=False))
        return 0
    o = overall(scored)
    if any(s.row.source.startswith("dry run") for s in scored):
        print("note: dry-run rows are CPU interpreter times, not GPU measurements; their errors mean nothing")
    print(f"{o['rows']} timed rows, efficiency '{args.efficiency}': MAPE {o['mape']:.1%}, median |error| "
          f"{o['median_abs']:.1%}, {o['within_10']:.0%} within 10%, {o['within_25']:.0%} within 25%")
    print(text_table(stats))
    print("\nworst shapes:")
    print("\n".join(worst_lines(scored)))
    return 0


def cmd_reference(args) -> int:
    from ..validate.reference import SUBSET_TOKENS, vidur_rows
    from ..validate.table import write_table
    writable_file(args.out, "--out", "measurements.csv")
    if args.corpus:
        from ..errors import positive_int
        from ..validate.corpus_rows import corpus_rows
        rows = corpus_rows(args.corpus, args.gpu, args.engine, max_rows=positive_int(args.rows, "--rows"))
        write_table(Path(args.out), rows)
        print(f"wrote {args.out}: {len(rows)} rows of the aiconfigurator corpus ({args.engine} on {args.gpu})")
        return 0
    rows = vidur_rows(args.gpu, None if args.all_tokens else SUBSET_TOKENS, args.vidur)
    write_table(Path(args.out), rows)
    print(f"wrote {args.out}: {len(rows)} rows of Vidur's {args.gpu} kernel timings")
    return 0


SUBCOMMANDS = {"run": cmd_run, "calibrate": cmd_calibrate, "report": cmd_validate_report, "reference": cmd_reference}


def cmd_validate(args) -> int:
    if args.validate is None:
        raise WhatifError("whatif validate: name a subcommand; valid: " + ", ".join(SUBCOMMANDS))
    return SUBCOMMANDS[args.validate](args)

