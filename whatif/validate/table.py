"""The measurement table: the one schema, reader and writer of measured kernel times.

Schema (a CSV with a header row; times in seconds):
- `Row`, the full table (COLUMNS): one row per timed kernel shape, with whatif's op and prediction beside it.
  `whatif validate run` writes it, `validate reference` and corpus readers (validate/corpus.py) build it,
  `validate calibrate` fits it and `validate report` scores it. The op columns (op_class, op_dtype, flops,
  hbm_bytes, op_shape) are enough to rebuild the roofline op, so any row is re-predicted under any efficiency
  model without the kernel code. Rows whose correctness check failed (status != 'ok') carry no timing and are
  never fitted. `regime` is validate/regime.py's; `split` is train | held-out.
- `Measurement`, the scored view (MEASUREMENT_COLUMNS, a subset of COLUMNS): measured and predicted time of a
  kernel, what the HTML validation section plots. `read_measurements` reads it from any CSV that has at least
  REQUIRED (so a full table reads as measurements too); `validate report --csv` writes it.
To add a data source, build `Row`s (one per kernel shape and GPU) and `write_table` them: nothing else changes.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..errors import WhatifError, closest, shown
from ..roofline.ops import Op, op_fields_from_record, shape_record
from ..specs.safe_yaml import parse_json


@dataclass(frozen=True)
class Row:
    gpu: str            # whatif GPU profile the prediction is for (e.g. h100-sxm)
    device: str         # the device as the driver names it (e.g. NVIDIA H100 80GB HBM3), or the source's GPU
    family: str         # kernel family (validate/kernels) or, for reference tables, the op class
    kernel: str         # the kernel and its shape in words: what the accuracy report names
    dtype: str
    shape: str          # the family's shape parameters, JSON
    regime: str         # launch-bound | memory-bound | ridge | compute-bound (validate/regime.py)
    split: str          # train | held-out
    status: str         # ok, or why the row has no timing (wrong result, error)
    check_error: float  # relative error against the torch reference (nan: not checked, e.g. reference tables)
    measured_s: float   # median kernel time, seconds (nan when status != ok)
    predicted_s: float  # whatif's prediction at measurement time (default efficiency), seconds
    op_class: str
    op_dtype: str
    flops: float
    hbm_bytes: float
    op_shape: str       # the roofline op's shape dict, JSON
    source: str         # who measured: 'whatif validate run', 'vidur <model> (Vidur profiling)', ...

    @property
    def ok(self) -> bool:
        return self.status == "ok" and math.isfinite(self.measured_s) and self.measured_s > 0

    def op(self) -> Op:
        """The roofline op this row was predicted from."""
        return Op(self.family, self.op_class, self.flops, {"hbm": self.hbm_bytes}, self.op_dtype, count=1,
                  formula="rebuilt from a measurement table", **op_fields_from_record(json.loads(self.op_shape)))


COLUMNS = tuple(f.name for f in fields(Row))
# Committed tables and the calibrations fitted on them (package data): MEASUREMENTS_DIR/<gpu>/*.csv, calibration.yaml
MEASUREMENTS_DIR = Path(__file__).resolve().parent / "measurements"
SPLITS = ("train", "held-out")
MIN_KERNEL_S, MAX_KERNEL_S = 1e-12, 1e6   # a kernel's time: a picosecond to 11 days bounds any real one
FLOAT_COLUMNS = ("check_error", "measured_s", "predicted_s", "flops", "hbm_bytes")


def op_columns(op: Op) -> dict:
    """The Row fields that describe `op` (one instance)."""
    return {"op_class": str(op.op_class), "op_dtype": op.dtype, "flops": float(op.flops),
            "hbm_bytes": float(op.hbm_bytes),
            "op_shape": json.dumps({k: v if isinstance(v, str) else float(v) for k, v in shape_record(op).items()},
                                   sort_keys=True)}


def write_header(fh) -> csv.DictWriter:
    writer = csv.DictWriter(fh, fieldnames=COLUMNS)
    writer.writeheader()
    return writer


def write_row(writer: csv.DictWriter, row: Row) -> None:
    writer.writerow(asdict(row))   # floats as repr: they read back exactly


def write_table(path: Path, rows: list[Row]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = write_header(fh)
        for row in rows:
            write_row(writer, row)


def _float(value: str, column: str, where: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise WhatifError(f"{where}: {column} {shown(value)} is not a number") from None


def _check_numbers(values: dict, where: str) -> None:
    """Finite, non-negative numbers, so that no error figure computed from a row is NaN: nan is allowed only
    where the table's schema gives it a meaning (check_error: not checked; predicted_s: none stored, the report
    predicts again; measured_s: a row whose status is not ok has no timing)."""
    for c in FLOAT_COLUMNS:
        x = values[c]
        if math.isnan(x) and (c in ("check_error", "predicted_s") or (c == "measured_s" and values["status"] != "ok")):
            continue
        if not math.isfinite(x) or x < 0 or (c == "measured_s" and x == 0):
            why = "a positive" if c == "measured_s" else "a non-negative"
            raise WhatifError(f"{where}: {c} {shown(x)} is not valid; valid: {why} finite number"
                              + (" (nan only when status is not ok)" if c == "measured_s" else ""))


def _positive(value: str, column: str, where: str) -> float:
    x = _float(value, column, where)
    if not math.isfinite(x) or not MIN_KERNEL_S <= x <= MAX_KERNEL_S:
        raise WhatifError(f"{where}: {column} {shown(value)} must be a number of seconds from {MIN_KERNEL_S:g} to "
                          f"{MAX_KERNEL_S:g} (one kernel's time)")
    return x


def _read_csv(path: Path, what: str, required: tuple[str, ...], allowed: tuple[str, ...], parse,
              flag: str = "") -> list:
    """parse(raw_row, 'path:line') of each data row; a missing column, an unreadable file or an empty table is a
    one-line WhatifError naming the file (after `flag`, the option that named it, if any)."""
    try:
        return _parse_csv(path, what, required, allowed, parse)
    except WhatifError as exc:
        raise WhatifError(f"{flag} {exc}" if flag else str(exc)) from None


def _parse_csv(path: Path, what: str, required: tuple[str, ...], allowed: tuple[str, ...], parse) -> list:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in required if c not in (reader.fieldnames or [])]
            if missing:
                raise WhatifError(f"{path}: not a {what}: missing column(s) {', '.join(missing)} "
                                  f"(the columns: {', '.join(allowed)})")
            rows = [parse(raw, f"{path}:{i}") for i, raw in enumerate(reader, start=2)]
    except OSError as exc:
        raise WhatifError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise WhatifError(f"{path}: not a CSV table ({exc})") from None
    if not rows:
        raise WhatifError(f"{path}: the {what} has no rows")
    return rows


def known_families() -> tuple[str, ...]:
    """A table's family: a kernel family of the sweep (validate/kernels) or, in a reference table, an op class."""
    from ..roofline.efficiency import class_names
    from .kernels import FAMILIES
    return tuple(dict.fromkeys(FAMILIES + class_names()))


def _check_family(family: str, where: str) -> None:
    valid = known_families()
    if family not in valid:
        raise WhatifError(f"{where}: family {shown(family)} is not known{closest(family, valid)}; valid: "
                          f"{', '.join(valid)}")


def _row(raw: dict, where: str) -> Row:
    values = {c: raw[c] for c in COLUMNS}
    for c in FLOAT_COLUMNS:
        values[c] = _float(raw[c], c, where)
    _check_numbers(values, where)
    if values["split"] not in SPLITS:
        raise WhatifError(f"{where}: split {shown(values['split'])} is not valid; valid: {', '.join(SPLITS)}")
    _check_family(values["family"], where)
    shape = parse_json(values["op_shape"] or "", f"{where}: op_shape")
    if not isinstance(shape, dict):
        raise WhatifError(f"{where}: op_shape {shown(raw['op_shape'])} is not a JSON object")
    return Row(**values)


def read_table(path: str | Path) -> list[Row]:
    """Rows of a measurement table; a missing column or a malformed number is a one-line error naming it."""
    return _read_csv(Path(path), "whatif measurement table", COLUMNS, COLUMNS, _row)


def read_tables(paths) -> list[Row]:
    rows: list[Row] = []
    for p in paths:
        rows += read_table(p)
    return rows


# ---------------------------------------------------------------- the scored view


@dataclass(frozen=True)
class Measurement:
    """One measured kernel with a prediction beside it: the columns of a Row that a report needs."""

    gpu: str
    family: str                  # kernel family: the op class (gemm, norm, attention_decode, comm, ...)
    kernel: str                  # the kernel's name (e.g. mlp_up_proj, all_reduce)
    regime: str                  # validate/regime.py's (any text in a user's own table)
    measured_s: float
    predicted_s: float
    split: str = ""              # train / held-out / "" (unknown)
    source: str = ""

    @property
    def error(self) -> float:
        """Signed relative error of the prediction: (predicted - measured) / measured."""
        return (self.predicted_s - self.measured_s) / self.measured_s


MEASUREMENT_COLUMNS = tuple(f.name for f in fields(Measurement))
REQUIRED = ("family", "measured_s", "predicted_s")


def measurement(row: Row, predicted_s: float | None = None) -> Measurement:
    """The scored view of `row`, with `predicted_s` (default: the prediction stored in the row)."""
    return Measurement(row.gpu, row.family, row.kernel, row.regime, row.measured_s,
                       row.predicted_s if predicted_s is None else predicted_s, row.split, row.source)


def read_measurements(path: str | Path, flag: str = "--measurements") -> list[Measurement]:
    """Measurements from a CSV with at least the columns REQUIRED (a full measurement table qualifies); the others
    of MEASUREMENT_COLUMNS are optional. Every row needs positive measured and predicted times. Errors name `flag`."""
    name = Path(path).name

    def parse(raw: dict, where: str) -> Measurement:
        family = raw["family"] or "?"   # a label here (any benchmark's rows): the full tables check it
        return Measurement(raw.get("gpu") or "", family, raw.get("kernel") or family, raw.get("regime") or "all",
                           _positive(raw["measured_s"], "measured_s", where),
                           _positive(raw["predicted_s"], "predicted_s", where), raw.get("split") or "",
                           raw.get("source") or name)
    return _read_csv(Path(path), "measurement table", REQUIRED, MEASUREMENT_COLUMNS, parse, flag)


def write_measurements(path: str | Path, rows: list[Measurement]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=MEASUREMENT_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))
