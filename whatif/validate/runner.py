"""`whatif validate run`: check and time every kernel of the sweep on this machine's GPU, and write the
measurement table (measurements.csv) and the device record (device.json) into one folder.

Each case: draw input sets on the GPU with a seeded generator, run the kernel once and compare with the torch
reference (a wrong result is recorded and never timed), time it with rotating input sets, and predict the same op
with whatif's default efficiency model. Rows are written as they are measured, so a run cut short keeps what it
timed; a case that raises (a compile failure, out of memory) is recorded with its error and the run goes on. A
time budget stops starting new cases, so the run fits one 8-minute GPU call; the skipped cases are listed.
"""
from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

from ..errors import WhatifError
from ..specs.hardware import load_component
from ..roofline.efficiency import default_efficiency
from ..roofline.timing import time_op
from .table import Row, op_columns, write_header, write_row

BUDGET_S = 420.0            # stop starting new cases after 7 minutes: one 8-minute call with set-up to spare
SOURCE = "whatif validate run"


def choose_device(dry_run: bool) -> str:
    """'cuda', or 'cpu' for a dry run; the interpreter must be switched on before any kernel module is imported."""
    if dry_run:
        os.environ["TRITON_INTERPRET"] = "1"
        return "cpu"
    try:
        import torch
    except ImportError:
        raise WhatifError("whatif validate run needs torch and triton: pip install -e '.[validate]'") from None
    if not torch.cuda.is_available():
        raise WhatifError("whatif validate run: no CUDA GPU here; --dry-run checks the pipeline on the CPU "
                          "interpreter with the small test shapes")
    return "cuda"


def case_seed(case) -> int:
    return zlib.crc32(f"{case.family}|{case.dtype}|{case.shape_json}".encode())


def measure_case(case, device: str, gpu, eff, free_bytes: float) -> dict:
    """The row fields of one case: check, time and predict."""
    import torch

    from .regime import regime
    from .kernels.common import TOLERANCE, relative_error
    from .timing import input_sets, median_seconds
    mod, op = case.module(), case.op()
    fields = {"kernel": case.kernel, "regime": regime(op, gpu), "predicted_s": time_op(op, gpu, eff).time_s,
              **op_columns(op)}
    gen = torch.Generator(device=device).manual_seed(case_seed(case))
    first = mod.make_inputs(case.shape, case.dtype, device, gen)
    mod.launch(first, case.shape)
    err = relative_error(first["out"], mod.reference(first, case.shape))
    if not err <= TOLERANCE[case.dtype]:
        return {**fields, "status": f"wrong result: relative error {err:.3g} > {TOLERANCE[case.dtype]:g}",
                "check_error": err, "measured_s": float("nan")}
    sets = [first] + [mod.make_inputs(case.shape, case.dtype, device, gen)
                      for _ in range(input_sets(op.hbm_bytes, free_bytes) - 1)]
    measured = median_seconds([lambda s=s: mod.launch(s, case.shape) for s in sets], device)
    return {**fields, "status": "ok", "check_error": err, "measured_s": measured}


def _free_bytes(device: str) -> float:
    if device == "cpu":
        return 4e9
    import torch
    return float(torch.cuda.mem_get_info()[0])


def run(out_dir: str, families, gpu_name: str | None, dry_run: bool = False, budget_s: float = BUDGET_S,
        log=print) -> dict:
    """Measure the sweep into out_dir/measurements.csv and out_dir/device.json; returns the device record."""
    device = choose_device(dry_run)
    from .cases import sweep
    from .device import describe, profile_for
    record = describe(device)
    gpu = load_component(gpu_name or (profile_for(record["name"]) if device == "cuda" else "h100-sxm"), "gpu")
    eff = default_efficiency(gpu)
    cases = sweep(families, gpu, test_shapes=dry_run)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start, counts, skipped = time.monotonic(), {"ok": 0, "wrong": 0, "error": 0}, []
    log(f"whatif validate run: {len(cases)} cases on {record['name']} (predictions for {gpu.name}) -> {out}")
    with open(out / "measurements.csv", "w", newline="", encoding="utf-8") as fh:
        writer = write_header(fh)
        for i, case in enumerate(cases):
            if time.monotonic() - start >= budget_s:
                skipped.append(case.kernel)
                continue
            try:
                fields = measure_case(case, device, gpu, eff, _free_bytes(device))
            except Exception as exc:   # one bad case must not lose the run: record it and go on
                fields = {"kernel": case.kernel, "regime": "", "predicted_s": float("nan"),
                          **op_columns(case.op()), "status": f"error: {type(exc).__name__}: {exc}"[:300],
                          "check_error": float("nan"), "measured_s": float("nan")}
                if device == "cuda":
                    import torch
                    torch.cuda.empty_cache()
            counts["ok" if fields["status"] == "ok" else fields["status"].split(":")[0].split()[0]] += 1
            write_row(writer, Row(gpu=gpu.name, device=record["name"], family=case.family, dtype=case.dtype,
                                  shape=case.shape_json, split=case.split, source=SOURCE if device == "cuda"
                                  else "dry run on the CPU interpreter (not a GPU measurement)", **fields))
            fh.flush()
            log(f"[{i + 1}/{len(cases)}] {case.kernel}: {_describe(fields)}")
    record.update({"gpu_profile": gpu.name, "cases": len(cases), **counts, "skipped": skipped,
                   "wall_s": round(time.monotonic() - start, 1), "budget_s": budget_s})
    (out / "device.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def _describe(fields: dict) -> str:
    if fields["status"] != "ok":
        return fields["status"]
    m, p = fields["measured_s"], fields["predicted_s"]
    return f"{m * 1e6:.2f} us measured, {p * 1e6:.2f} us predicted ({(p - m) / m:+.0%}), {fields['regime']}"
