"""`whatif simulate --rate R --requests N` whose arrivals end before its rate's steady state (run_length.py, which
capacity and search already use) says so near the top of its text, in --json's summary and in the HTML report; a
closed loop (--concurrency) is not judged, and an overloaded run says OVERLOADED alone (session 75 K)."""
from __future__ import annotations

import json

from whatif.cli import main
from whatif.simulator.run_length import SPANS, short_line

# session 75 C/D's walk: 150 requests at 64 req/s arrive in ~2.5 s while each lasts ~24 s
WALK = ["--model", "openai/gpt-oss-120b", "--hardware", "h200-sxm", "--tp", "1", "--prompt", "1024", "--output",
        "1024", "--no-progress"]


def _json(capsys, *args) -> dict:
    assert main(["simulate", *WALK, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_burst_says_it_is_too_short_first(capsys):
    assert main(["simulate", *WALK, "--rate", "64", "--requests", "150"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("TOO SHORT TO JUDGE THE RATE: the 150 arrivals spanned ")
    assert f"under {SPANS:g} mean request latencies" in first and "--requests >= " in first


def test_the_summary_carries_the_figures(capsys):
    r = _json(capsys, "--rate", "64", "--requests", "150")["run_length"]
    assert r["judged"] and r["long_enough"] is False
    assert r["span_s"] < SPANS * r["latency_s"]
    assert r["requests_needed"] >= 149 * SPANS * r["latency_s"] / r["span_s"] > 150   # arrivals' gaps over the span


def test_a_long_enough_run_says_nothing(capsys):
    assert main(["simulate", *WALK, "--rate", "4", "--requests", "600"]) == 0
    assert "TOO SHORT" not in capsys.readouterr().out
    r = _json(capsys, "--rate", "4", "--requests", "600")["run_length"]
    assert r["judged"] and r["long_enough"] is True


def test_a_closed_loop_is_not_judged(capsys):
    # one wave of 64 clients spans ~0 s: judged as a rate it would read too short; a closed loop has no rate to reach
    r = _json(capsys, "--concurrency", "64", "--requests", "64")["run_length"]
    assert r["judged"] is False and r["long_enough"] is None and "closed loop" in r["rule"]
    assert main(["simulate", *WALK, "--concurrency", "64", "--requests", "64"]) == 0
    assert "TOO SHORT" not in capsys.readouterr().out


def test_an_overloaded_run_is_not_called_a_burst():
    r = {"long_enough": False, "span_s": 1.0, "latency_s": 5.0, "requests_needed": 11, "spans": SPANS}
    assert short_line(r, 10, overloaded=True) is None
    assert "spanned 1 s" in short_line(r, 10) and "(2 x 5 s)" in short_line(r, 10)


def test_the_html_report_says_it_where_the_overload_verdict_goes():
    from whatif.api import simulate
    from whatif.reports.simulation import headline_pairs
    res = simulate("openai/gpt-oss-120b", "h200-sxm", tp=1, prompt=1024, output=1024, rate=64.0, requests=150).result
    pairs = dict(headline_pairs(res.summary(), res.slo))
    assert pairs["run length"].startswith("TOO SHORT TO JUDGE THE RATE")
