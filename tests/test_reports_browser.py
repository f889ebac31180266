"""Each report page (estimate, compare, simulate, capacity, validation, reproduction, and the demo) opened in a
real headless Chromium: every chart rendered (plotly put an svg.main-svg inside each figure's div), no chart
reported a failure, the console stayed silent (no errors, no uncaught exceptions), and a screenshot is saved
under the test's temporary folder. Skipped where Chromium is not installed (.ci/run installs Debian's)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("plotly")

from .test_reports import example_pages  # noqa: E402

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

# Flags for a headless run as root on a machine without a network or a GPU; virtual time lets the page's scripts
# run to completion without waiting in real time.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--window-size=1400,3000", "--virtual-time-budget=10000"]
PARALLEL = 3          # browsers at once
TIMEOUT_S = 120


def _open(path: Path, folder: Path) -> subprocess.Popen:
    """Chromium on `path`: the rendered DOM on stdout, its log on stderr, a screenshot beside it."""
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={folder / (path.stem + '-profile')}",
           f"--screenshot={folder / (path.stem + '.png')}", "--dump-dom", path.as_uri()]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")


def _figures(dom: str) -> list[str]:
    """The DOM of each report figure: from its div to the next figure (or the end)."""
    parts = re.split(r'(?=<div class="whatif-figure)', dom)
    return [p for p in parts if p.startswith('<div class="whatif-figure')]


@pytest.fixture(scope="module")
def opened(tmp_path_factory):
    from whatif.reports import demo
    folder = tmp_path_factory.mktemp("browser")
    pages = example_pages(folder)
    pages["demo"] = demo.build()[0]
    paths = {}
    for name, page in pages.items():
        paths[name] = folder / f"{name}.html"
        page.write(str(paths[name]))
    results, queue = {}, list(paths.items())
    while queue:
        batch, queue = queue[:PARALLEL], queue[PARALLEL:]
        running = [(name, _open(path, folder)) for name, path in batch]
        for name, proc in running:
            try:
                out, err = proc.communicate(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
            results[name] = (proc.returncode, out, err, pages[name].figures)
    return folder, results


NAMES = ["estimate", "compare", "simulate", "capacity", "validation", "reproduction", "demo"]


@pytest.mark.parametrize("name", NAMES)
def test_every_chart_renders(opened, name):
    folder, results = opened
    rc, dom, err, expected = results[name]
    assert rc == 0, err[-2000:]
    figures = _figures(dom)
    assert len(figures) == expected > 0
    for i, fig in enumerate(figures):
        assert "main-svg" in fig and "plot-container" in fig, f"{name}: figure {i + 1} did not render"
        assert "could not be drawn" not in fig and "whatif-figure failed" not in fig
    assert (folder / f"{name}.png").stat().st_size > 10_000          # the screenshot, kept in the temp folder


@pytest.mark.parametrize("name", NAMES)
def test_console_is_clean(opened, name):
    _, results = opened
    _, _, err, _ = results[name]
    console = [line for line in err.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert not console, "\n".join(console[:5])


def test_escaped_text_stays_text(opened):
    _, results = opened
    dom = results["estimate"][1]
    # the model name is shown as text: the DOM holds it escaped, never as an element
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert not re.search(r"<script>\s*alert\(1\)", dom)
