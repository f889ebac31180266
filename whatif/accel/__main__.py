"""python3 -m whatif.accel {build,status}: the optional compiled simulator (see whatif/accel/__init__.py)."""
from __future__ import annotations

import argparse
import sys

from . import status as status_mod


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m whatif.accel", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the simulator's hot modules with mypyc (needs mypy and a C compiler)")
    b.add_argument("--force", action="store_true", help="rebuild even when a build of these sources exists")
    sub.add_parser("status", help="one line: compiled or pure Python, and why")
    args = ap.parse_args(argv)
    if args.command == "status":
        print(status_mod.line())
        return 0
    from .build import BuildError, build
    try:
        folder = build(force=args.force)
    except BuildError as e:
        print(f"whatif.accel build: {e}", file=sys.stderr)
        return 1
    print(f"built: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
