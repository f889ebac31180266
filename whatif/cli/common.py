"""What every command shares: the parser that reports bad flags as a WhatifError, the check for an
optional package, and --explain."""
from __future__ import annotations

import argparse
import importlib.util

from ..errors import WhatifError


class WhatifParser(argparse.ArgumentParser):
    """argparse that reports bad flags on one line and exits 2, like every other user error."""

    def error(self, message):
        raise WhatifError(f"{self.prog}: {message} (see `{self.prog} --help`)")


def require(module: str, command: str) -> None:
    """`command` needs the optional `module` (an extra of whatif[sim]); say how to install it."""
    if importlib.util.find_spec(module) is None:
        raise WhatifError(f"{command} needs the {module} package: pip install 'whatif[sim]'")


def add_explain_flag(parser) -> None:
    parser.add_argument("--explain", action="store_true",
                        help="print the efficiency model's whole provenance (text output shows one short line)")
