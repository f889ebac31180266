"""Re-run the example commands of the README and the docs pages and compare (or replace) their printed output.

Every ```text block of README.md and of docs/*.md (PAGES) that starts with `$ whatif ...` holds examples: each
`$ whatif ...` line runs from the repository root and its output must be what the block shows up to the next `$ `
line. `whatif demo` runs
with `--out` in a temporary folder, and the page's path, size and build time on its line are not compared (nor
rewritten: they say where and how fast the README's author ran it).

The comparison is the one tests/test_readme_examples.py makes (it imports `examples` and `mismatch` from here):
the same lines, the same words, and every number within 3% of the one shown, so that a figure that moves a
little does not fail while one that drifts does. `--write` replaces each output with the real one, byte for
byte.

The figures that the serving-simulation what-ifs quote in prose (chunked prefill, disaggregation) come from
simulations listed in PROSE_RUNS; they are checked and rewritten the same way (in this script only: the runs
take some ten seconds, too long for the test suite).

    python benchmarks/readme_examples.py            # list the examples whose output differs beyond the tolerance
    python benchmarks/readme_examples.py --write    # replace each block's output with the real one, in every page
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
BLOCK = re.compile(r"```text\n(\$ whatif .*?)```", re.S)
COMMAND = re.compile(r"^\$ whatif .*$", re.M)
DEMO = "$ whatif demo"
# the demo's page path, file size and wall time: where and how fast it ran, not what it predicts
VOLATILE = re.compile(r"^(whatif demo: wrote )(\S+) \(([^,]+), ([^,]+), ([^)]+)\)", re.M)
REL_TOL = 0.03          # numbers may move this much (relative) before an example counts as drifted
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def argv_of(line: str) -> list[str]:
    """The arguments after `whatif` of a `$ whatif ...` line, without a trailing `# comment`."""
    return shlex.split(line[2:], comments=True)[1:]


def argv_with_out(line: str, folder: str) -> list[str]:
    """The argv of an example; the demo writes its page into `folder`, not the checkout."""
    argv = argv_of(line)
    return [*argv, "--out", str(Path(folder) / "whatif-demo.html")] if line.startswith(DEMO) else argv


def comparable(text: str) -> str:
    return VOLATILE.sub(r"\1PAGE (SIZE, \4, TIME)", text)


def keep_volatile(shown: str, real: str) -> str:
    """`real` with the page path, size and time that `shown` states (what --write keeps of the README's)."""
    m = VOLATILE.search(shown)
    if not m:
        return real
    return VOLATILE.sub(lambda r: f"{r[1]}{m[2]} ({m[3]}, {r[4]}, {m[5]})", real)


def _split(body: str) -> list[tuple[str, str]]:
    starts = [c.start() for c in COMMAND.finditer(body)] + [len(body)]
    pairs = []
    for a, b in zip(starts, starts[1:]):
        line, _, shown = body[a:b].partition("\n")
        pairs.append((line, shown))
    return pairs


def pages() -> list[Path]:
    """The README and every docs page: the text a person reads, whose examples are checked."""
    return [README, *sorted(DOCS.glob("*.md"))]


def documentation() -> str:
    """Every page's text, one after another (what the tests search for sections, counts and cited files)."""
    return "\n".join(page.read_text() for page in pages())


def examples(text: str) -> list[tuple[str, str]]:
    """(the `$ whatif ...` line, the output shown under it) of every example in `text`, in order."""
    return [pair for m in BLOCK.finditer(text) for pair in _split(m.group(1))]


def _shape(line: str) -> tuple[str, list[float]]:
    """A line's words with its numbers taken out (runs of spaces and of dashes made one: column widths follow
    the numbers), and the numbers."""
    numbers = [float(n.replace(",", "")) for n in NUMBER.findall(line)]
    words = re.sub(r"-{2,}", "-", re.sub(r"\s+", " ", NUMBER.sub("#", line))).strip()
    return words, numbers


def _close(a: float, b: float, rel: float) -> bool:
    return a == b or abs(a - b) <= rel * max(abs(a), abs(b))


def mismatch(shown: str, real: str, rel: float = REL_TOL) -> str | None:
    """None when `real` is `shown` up to numbers within `rel` (relative); else where they first differ."""
    a, b = comparable(shown).rstrip("\n").splitlines(), comparable(real).rstrip("\n").splitlines()
    if len(a) != len(b):
        return f"{len(b)} lines instead of {len(a)}"
    for i, (x, y) in enumerate(zip(a, b)):
        (wx, nx), (wy, ny) = _shape(x), _shape(y)
        if wx != wy or len(nx) != len(ny):
            return f"line {i + 1}: shown {_near(x, y)!r}, now {_near(y, x)!r}"
        bad = next((j for j, (p, q) in enumerate(zip(nx, ny)) if not _close(p, q, rel)), None)
        if bad is not None:
            at = list(NUMBER.finditer(x))[bad].start()
            return f"line {i + 1}: now {ny[bad]:g} where it shows {x[max(0, at - 50):at + 20].strip()!r}"
    return None


def _near(x: str, y: str, width: int = 60) -> str:
    """`x` around where it first differs from `y` (long lines are cut to that place)."""
    at = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    start = max(0, at - width // 2)
    return ("..." if start else "") + x[start:start + width] + ("..." if start + width < len(x) else "")


# ---------------------------------------------------------------- figures quoted in prose

_SIM = ["simulate", "--model", "llama-3.1-8b", "--no-progress", "--json"]
_LONG = ["--lengths", "long-context"]
PROSE_RUNS = {
    "long_chunked": [*_SIM, *_LONG, "--rate", "1.5", "--requests", "300", "--token-budget", "512"],
    "long_unchunked": [*_SIM, *_LONG, "--rate", "1.5", "--requests", "300", "--no-chunked-prefill"],
    "long_8k_window": [*_SIM, *_LONG, "--rate", "1.5", "--requests", "300", "--model", "llama-3-8b"],
    "short_chunked": [*_SIM, "--lengths", "sharegpt", "--rate", "30", "--seed", "2"],
    "short_unchunked": [*_SIM, "--lengths", "sharegpt", "--rate", "30", "--seed", "2", "--no-chunked-prefill"],
    "disaggregated": [*_SIM, *_LONG, "--hardware", "dgx-h100", "--rate", "3", "--prefill-replicas", "1"],
    "two_mixed": [*_SIM, *_LONG, "--hardware", "dgx-h100", "--rate", "3", "--replicas", "2"],
}
_T = r"[\d.,]+ (?:s|ms|us)"     # a time as units.seconds prints it


def _latency(run: str, metric: str, stat: str):
    return run, lambda s: _seconds(s["latency"][metric][stat])


def _seconds(x: float) -> str:
    from whatif.specs.units import seconds
    return seconds(x)


# (README pattern, one group per figure, whitespace free to wrap; the figure each group holds)
PROSE = [
    (r"would reject\s+about (\d+%) of them",
     [("long_8k_window", lambda s: f"{s['requests']['rejected'] / s['requests']['arrived']:.0%}")]),
    (rf"the worst inter-token gap is\s+({_T})\s+against\s+({_T})\s+with",
     [_latency("long_chunked", "itl_s", "max"), _latency("long_unchunked", "itl_s", "max")]),
    (rf"and p99 is\s+({_T})\s+against\s+({_T}):",
     [_latency("long_chunked", "itl_s", "p99"), _latency("long_unchunked", "itl_s", "p99")]),
    (rf"chunking wins p99 too \(({_T})\s+against\s+({_T})\)",
     [_latency("short_chunked", "itl_s", "p99"), _latency("short_unchunked", "itl_s", "p99")]),
    (rf"long-context p50\s+({_T})\s+against\s+({_T})\)",
     [_latency("long_chunked", "ttft_s", "p50"), _latency("long_unchunked", "ttft_s", "p50")]),
    (r"the same\s+throughput \(([\d.]+ req/s)\)",
     [("disaggregated", lambda s: f"{s['throughput']['finished_rps']:.3g} req/s")]),
    (rf"p99 ITL\s+({_T})\s+against\s+({_T}),\s+p99 TTFT\s+({_T})\s+against\s+({_T})\.",
     [_latency("disaggregated", "itl_s", "p99"), _latency("two_mixed", "itl_s", "p99"),
      _latency("disaggregated", "ttft_s", "p99"), _latency("two_mixed", "ttft_s", "p99")]),
]


def prose_figures(texts: dict[Path, str]) -> tuple[dict[Path, str], list[str]]:
    """Each page's text with every figure of PROSE replaced by the real one, and the figures that moved beyond
    the tolerance (a pattern found on no page counts as moved: the sentence was edited)."""
    import json
    summaries = {}

    def summary(run: str) -> dict:
        if run not in summaries:
            out = subprocess.run([sys.executable, "-m", "whatif", *PROSE_RUNS[run]], cwd=ROOT, capture_output=True,
                                 text=True, timeout=600, check=True)
            summaries[run] = json.loads(out.stdout)
        return summaries[run]

    moved, texts = [], dict(texts)
    for pattern, figures in PROSE:
        page, m = next(((p, m) for p, t in texts.items() if (m := re.search(pattern, t))), (None, None))
        if m is None:
            moved.append(f"no page says {pattern!r}")
            continue
        real = [fmt(summary(run)) for run, fmt in figures]
        for i, value in enumerate(real):
            if mismatch(m.group(i + 1), value):
                moved.append(f"{m.group(0)!r}: figure {i + 1} is now {value}")
        text = texts[page]
        for i in reversed(range(len(real))):
            text = text[:m.start(i + 1)] + real[i] + text[m.end(i + 1):]
        texts[page] = text
    return texts, moved


def run(line: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run([sys.executable, "-m", "whatif", *argv_with_out(line, folder)], cwd=ROOT,
                             capture_output=True, text=True, timeout=600)
    return out.stdout + (out.stderr if out.returncode else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="replace the outputs in README.md and docs/*.md")
    args = ap.parse_args()
    drifted, outputs = [], {}
    for page in pages():
        for line, shown in examples(page.read_text()):
            outputs[line] = real = keep_volatile(shown, run(line))
            why = mismatch(shown, real)
            if why:
                drifted.append(f"{page.relative_to(ROOT)}: {line}\n    {why}")
    _, moved = prose_figures({page: page.read_text() for page in pages()})
    drifted += [f"(prose) {why}" for why in moved]
    for line in drifted:
        print(f"differs: {line}")

    def refresh(m: re.Match) -> str:
        body = "".join(f"{line}\n{outputs.get(line, shown)}" for line, shown in _split(m.group(1)))
        return "```text\n" + body + "```"

    texts = {page: page.read_text() for page in pages()}   # read again: others may have edited them meanwhile
    new = {page: BLOCK.sub(refresh, text) for page, text in (prose_figures(texts)[0] if args.write else texts).items()}
    changed = [page for page in pages() if new[page] != texts[page]]
    print(f"{len(drifted)} example(s) or prose figure(s) beyond the {REL_TOL:.0%} tolerance; pages "
          + ("rewritten: " + ", ".join(str(p.relative_to(ROOT)) for p in changed) if args.write and changed
             else "are byte for byte" if not changed else "not byte for byte: "
             + ", ".join(str(p.relative_to(ROOT)) for p in changed)))
    if args.write:
        for page in changed:
            page.write_text(new[page])
    return 1 if drifted and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
