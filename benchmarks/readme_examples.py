"""Re-run the README's example commands and compare (or replace) their printed output.

Every ```text block of README.md that starts with `$ whatif ...` holds examples: each `$ whatif ...` line runs
from the repository root and its output must be what the block shows up to the next `$ ` line. `whatif demo` is
skipped (its line holds a wall time and the path it was run from).

    python benchmarks/readme_examples.py            # list the examples whose output differs
    python benchmarks/readme_examples.py --write    # replace each block's output with the real one
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCK = re.compile(r"```text\n(\$ whatif .*?)```", re.S)
COMMAND = re.compile(r"^\$ whatif .*$", re.M)
SKIP = ("whatif demo",)


def command_of(line: str) -> list[str]:
    """The argv of a `$ whatif ...` line, without a trailing `# comment`."""
    words = shlex.split(line[2:], comments=True)
    return [sys.executable, "-m", "whatif", *words[1:]]


def run(line: str) -> str:
    out = subprocess.run(command_of(line), cwd=ROOT, capture_output=True, text=True, timeout=600)
    return out.stdout + (out.stderr if out.returncode else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace the outputs in README.md")
    args = ap.parse_args()
    text = README.read_text()
    stale = []

    def refresh(m: re.Match) -> str:
        body = m.group(1)
        starts = [c.start() for c in COMMAND.finditer(body)] + [len(body)]
        parts = []
        for a, b in zip(starts, starts[1:]):
            line, _, shown = body[a:b].partition("\n")
            real = shown if any(line.startswith(f"$ {s}") for s in SKIP) else run(line)
            if real != shown:
                stale.append(line)
            parts.append(f"{line}\n{real}")
        return "```text\n" + "".join(parts) + "```"

    new = BLOCK.sub(refresh, text)
    for line in stale:
        print(f"{'rewrote' if args.write else 'differs'}: {line}")
    if args.write:
        README.write_text(new)
    return 1 if stale and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
