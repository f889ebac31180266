"""The measurement table: one row per timed kernel shape, with whatif's op and prediction beside it.

A CSV with the columns of COLUMNS. The op columns (op_class, op_dtype, flops, hbm_bytes, op_shape) are enough
to rebuild the roofline op, so calibration and the accuracy report re-predict any row under any efficiency
model without the kernel code. Rows whose correctness check failed (status != 'ok') carry no timing and are
never fitted. The columns family, kernel, regime, split, source, gpu, measured_s, predicted_s are the ones
`whatif report --measurements` reads.
"""
from __future__ import annotations

import csv
import json
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..errors import WhatifError
from ..roofline.ops import Op


@dataclass(frozen=True)
class Row:
    gpu: str            # whatif GPU profile the prediction is for (e.g. h100-sxm)
    device: str         # the device as the driver names it (e.g. NVIDIA H100 80GB HBM3), or the source's GPU
    family: str         # kernel family (validate/kernels) or, for reference tables, the op class
    kernel: str         # the kernel and its shape in words: what the accuracy report names
    dtype: str
    shape: str          # the family's shape parameters, JSON
    regime: str         # launch-bound | memory-bound | ridge | compute-bound (cases.regime)
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
    source: str         # who measured: 'whatif validate run', 'vidur reference/...'

    @property
    def ok(self) -> bool:
        return self.status == "ok" and math.isfinite(self.measured_s) and self.measured_s > 0

    def op(self) -> Op:
        """The roofline op this row was predicted from."""
        return Op(self.family, self.op_class, self.flops, {"hbm": self.hbm_bytes}, self.op_dtype,
                  json.loads(self.op_shape), 1, "rebuilt from a measurement table")


COLUMNS = tuple(f.name for f in fields(Row))
FLOAT_COLUMNS = ("check_error", "measured_s", "predicted_s", "flops", "hbm_bytes")


def op_columns(op: Op) -> dict:
    """The Row fields that describe `op` (one instance)."""
    return {"op_class": op.op_class, "op_dtype": op.dtype, "flops": float(op.flops), "hbm_bytes": float(op.hbm_bytes),
            "op_shape": json.dumps({k: float(v) for k, v in op.shape.items()}, sort_keys=True)}


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
        raise WhatifError(f"{where}: {column} {value!r} is not a number") from None


def read_table(path: str | Path) -> list[Row]:
    """Rows of a measurement table; a missing column or a malformed number is a one-line error naming it."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise WhatifError(f"{path}: not a whatif measurement table: missing column(s) {', '.join(missing)} "
                                  f"(the columns: {', '.join(COLUMNS)})")
            rows = []
            for i, raw in enumerate(reader, start=2):
                where = f"{path}:{i}"
                values = {c: raw[c] for c in COLUMNS}
                for c in FLOAT_COLUMNS:
                    values[c] = _float(raw[c], c, where)
                try:
                    json.loads(values["op_shape"])
                except json.JSONDecodeError:
                    raise WhatifError(f"{where}: op_shape {raw['op_shape']!r} is not JSON") from None
                rows.append(Row(**values))
    except OSError as exc:
        raise WhatifError(f"cannot read measurement table {str(path)!r}: {exc.strerror}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise WhatifError(f"{path}: not a CSV table ({exc})") from None
    if not rows:
        raise WhatifError(f"{path}: the measurement table has no rows")
    return rows


def read_tables(paths) -> list[Row]:
    rows: list[Row] = []
    for p in paths:
        rows += read_table(p)
    return rows
