"""How a simulation run's metrics are shown: the notes that say what each figure counts, the latency rows
and percentiles, and the text report's lines (SimulationResult.text in metrics.py)."""
from __future__ import annotations

from ..specs import units
from .request import FINISHED, QUEUED, REJECTED, RUNNING

PERCENTILES = (50, 90, 95, 99)
STAT_KEYS = tuple(f"p{p}" for p in PERCENTILES) + ("mean", "max")
WINDOW_NOTE = "busy window: first arrival to last finish"
STEADY_NOTE = "from the 10% to the 90% completion: warm-up and drain left out"
ITL_NOTE = ("ITL: between chunks of tokens as they stream out (one token each in plain decoding; a speculative "
            "round's accepted tokens, or a multi-step iteration's tokens, come out as one chunk)")
GOODPUT_NOTE = "SLO-attaining requests per second of the busy window, never above the offered rate x attainment"
ATTAINMENT_NOTE = "share of arrived requests; rejected and unfinished ones count as misses"
LATENCY_ROWS = (("TTFT", "ttft_s"), ("TPOT", "tpot_s"), ("ITL", "itl_s"), ("E2EL", "e2e_s"), ("queue", "queue_s"))
SERVED_ROW = ("TTFT (server)", "served_ttft_s")
SERVED_NOTE = ("TTFT (server): TTFT plus the engine spec's front end (HTTP, tokenization, first token back; its "
               "`frontend` figures, partly assumed), as a client of the server measures it; a closed loop runs the "
               "front end one request at a time and counts its queue, other runs exclude it")


# Under overload these grow with the run (a queue that never drains): their tails are no latency to quote.
QUEUED_LATENCIES = ("ttft_s", "served_ttft_s", "e2e_s", "queue_s")
TAIL_KEYS = ("p90", "p95", "p99", "max")
UNBOUNDED_MARK = "+"
UNBOUNDED_NOTE = ("+: unbounded: offered load exceeds what the run sustains, so the queue, and these tails with it, "
                  "grow for as long as the run lasts")


def _seconds(x: float | None) -> str:
    return "-" if x is None else units.seconds(x)


def _percent(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _rate(x: float | None, unit: str) -> str:
    return f"- {unit}" if x is None else units.rate(x, unit)


def setup_lines(setup: dict) -> list[str]:
    """One line per human-readable (string) entry of the engine's setup description."""
    return [f"{key}: {value}" for key, value in setup.items() if isinstance(value, str)]


def counts_line(c: dict) -> str:
    reasons = "; ".join(f"{n} {why or 'no reason given'}" for why, n in c["rejected_reasons"].items())
    line = (f"requests: {c['arrived']} arrived, {c[FINISHED]} finished, {c[QUEUED]} still queued, "
            f"{c[RUNNING]} still running, {c[REJECTED]} rejected" + (f" ({reasons})" if reasons else ""))
    longest = c.get("rejected_longest_tokens")
    if longest is not None:
        line += f"; the longest rejected request is {longest} tokens"
        if any("context window" in why for why in c["rejected_reasons"]):
            line += " (give --context-window to treat the window as longer, or pick a model with a longer one)"
    return line


def latency_table(latency: dict, unbounded: bool = False) -> str:
    """One column per latency (each in one unit), one row per statistic. `unbounded`: the run is overloaded, so
    the tails of the latencies that include queueing grow with the run's length: marked, not figures."""
    served = (SERVED_ROW,) if (latency.get("served_ttft_s") or {}).get("p50") is not None else ()
    columns = LATENCY_ROWS[:1] + served + LATENCY_ROWS[1:]
    rows = [[k] + [_seconds(latency[key][k]) + (UNBOUNDED_MARK if unbounded and key in QUEUED_LATENCIES
                                                 and k in TAIL_KEYS else "") for _, key in columns]
            for k in STAT_KEYS]
    return units.table(["latency"] + [name for name, _ in columns], rows)


def throughput_lines(t: dict) -> list[str]:
    lines = [f"throughput: {_rate(t['finished_rps'], 'req/s')}, {_rate(t['output_tok_s'], 'tok/s')} out, "
             f"{_rate(t['input_tok_s'], 'tok/s')} in ({WINDOW_NOTE}, {_seconds(t['window_s'])})"]
    steady = t.get("steady") or {}
    if steady.get("window_s") is not None:
        lines.append(f"steady state: {_rate(steady['finished_rps'], 'req/s')}, "
                     f"{_rate(steady['output_tok_s'], 'tok/s')} out, offered {_rate(t['offered_rps'], 'req/s')} "
                     f"({STEADY_NOTE}, {_seconds(steady['window_s'])})")
    return lines


def slo_line(slo: dict, window_s: float | None) -> str:
    objectives = " and ".join(f"{name} <= {units.seconds(slo[key])}"
                              for name, key in (("TTFT", "ttft_s"), ("TPOT", "tpot_s")) if slo[key] is not None)
    return (f"SLO ({objectives}): {_percent(slo['attainment'])} attained (target {slo['target']:.0%}; "
            f"{ATTAINMENT_NOTE}), goodput {_rate(slo['goodput_rps'], 'req/s')} ({GOODPUT_NOTE})")


def memory_line(s: dict) -> str:
    busy = ", ".join(f"#{r['replica']} {r['role']} {_percent(r['busy_fraction'])}" for r in s["replicas"])
    kv = s["kv_memory"]
    return (f"KV memory: peak {_percent(kv['peak_fraction'])}, mean {_percent(kv['mean_fraction'])} of blocks "
            f"(busiest replica); GPU busy: {busy or '-'} of {_seconds(s['end_s'])}")


def batch_line(b: dict, iterations: int) -> str:
    mean = "-" if b["mean_seqs"] is None else f"{b['mean_seqs']:.3g}"
    tokens = "-" if b["mean_tokens"] is None else f"{b['mean_tokens']:.4g}"
    return (f"batch: mean {mean} seqs, max {b['max_seqs'] if b['max_seqs'] is not None else '-'} seqs, "
            f"mean {tokens} tokens per iteration over {iterations} iterations")


def cache_line(s: dict) -> str:
    p, c = s["preemptions"], s["prefix_cache"]
    return (f"preemptions: {p['total']} ({p['requests_preempted']} requests); prefix cache: "
            f"{_percent(c['hit_rate'])} of {c['prompt_tokens']} prompt tokens served from cache")
