"""What every command shares: the parser that reports bad flags as a WhatifError, the check for an
optional package, and --explain."""
from __future__ import annotations

import argparse
import importlib.util

from ..errors import WhatifError


class WhatifParser(argparse.ArgumentParser):
    """argparse that reports bad flags on one line and exits 2, like every other user error."""

    _given: list = []

    def parse_known_args(self, args=None, namespace=None):
        self._given = list(args) if args is not None else []
        return super().parse_known_args(args, namespace)

    def error(self, message):
        raise WhatifError(f"{self.prog}: {self._as_typed(message)} (see `{self.prog} --help`)")

    def _as_typed(self, message: str) -> str:
        """'argument --tp/--tensor-parallel-size/-tp: ...' names the spelling given (else the first)."""
        head, sep, rest = message.partition(": ")
        if not (sep and head.startswith("argument ") and "/" in head):
            return message
        names = head[len("argument "):].split("/")
        given = [n for n in names if any(a == n or a.startswith(n + "=") for a in self._given)]
        return f"argument {(given or names)[0]}: {rest}"


def _subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            return action.choices[command]
    return parser


# Engine flags with no one-to-one whatif flag: what to give instead.
INSTEAD = {"--goodput": "--slo-ttft and --slo-tpot with units (vLLM's --goodput ttft:200 tpot:30 is --slo-ttft 200ms "
                        "--slo-tpot 30ms)",
           "--disable-radix-cache": "--no-prefix-caching"}


def unknown_flags(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> WhatifError:
    """The error for arguments no flag takes, with the closest flag of the command for each unknown one."""
    import difflib   # (on this error only: every run imports this module)
    sub = _subparser(parser, command)
    known = [o for a in sub._actions for o in a.option_strings]
    said = []
    for arg in extra:
        name = arg.split("=", 1)[0]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6) if name.startswith("-") else []
        if not close and name.startswith("-"):   # vLLM's snake_case spellings (trtllm-serve --tp_size)
            close = difflib.get_close_matches(name.replace("_", "-"), known, n=1, cutoff=0.6)
        instead = INSTEAD.get(name)
        said.append(f"{arg} (give {instead})" if instead else f"{arg} (did you mean {close[0]}?)" if close else arg)
    return WhatifError(f"{sub.prog}: unrecognized arguments: {' '.join(said)} (see `{sub.prog} --help`)")


def require(module: str, command: str) -> None:
    """`command` needs the optional `module` (an extra of whatif[sim]); say how to install it."""
    if importlib.util.find_spec(module) is None:
        raise WhatifError(f"{command} needs the {module} package: pip install 'whatif[sim]'")


def add_explain_flag(parser) -> None:
    parser.add_argument("--explain", action="store_true",
                        help="print the efficiency model's whole provenance (text output shows one short line)")
