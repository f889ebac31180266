"""Pipeline-parallel decode micro-batches (Session 75 J, issue 37): the engines fill each micro-batch by turn with
the requests not already in flight and never rebalance them (vLLM v1/core/sched/scheduler.py schedule(): a request
in flight has no new tokens and is skipped; a new one joins the next batch formed), and the simulator's pp virtual
engines do the same, so a closed loop's two micro-batches run uneven; `estimate` prices the even split and says so."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest

from whatif.cli import main
from whatif.simulator.scheduling import core

KIMI_PP2 = ["--model", "moonshotai/Kimi-K2.5", "--hardware", "hgx-h200", "--tp", "4", "--pp", "2",
            "--prompt", "128", "--output", "256"]


def _lanes(monkeypatch, capsys, clients: int) -> tuple[dict, dict]:
    """Each virtual engine's decode rows per step over a closed loop of `clients`, and simulate's JSON."""
    rows: dict = defaultdict(list)
    schedule = core.Scheduler.schedule

    def recorded(self, now):
        batch = schedule(self, now)
        rows[id(self)].append(batch.rows)
        return batch

    monkeypatch.setattr(core.Scheduler, "schedule", recorded)
    assert main(["simulate", *KIMI_PP2, "--max-num-seqs", "64", "--concurrency", str(clients),
                 "--requests", str(4 * clients), "--json"]) in (0, None)
    return rows, json.loads(capsys.readouterr().out)


def _tpot_ms(doc: dict) -> float:
    return doc["latency"]["tpot_s"]["mean"] * 1e3


@pytest.mark.parametrize("clients", [16, 32])
def test_micro_batches_are_filled_by_turn_not_balanced(monkeypatch, capsys, clients):
    rows, _ = _lanes(monkeypatch, capsys, clients)
    assert len(rows) == 2   # two virtual engines, one micro-batch each in flight
    a, b = rows.values()
    steps = min(len(a), len(b))
    middle = range(steps // 4, 3 * steps // 4)
    # every client's request is in one of the two (a closed loop keeps `clients` in flight, less the front end's)
    assert max(a[i] + b[i] for i in middle) <= clients
    # by turn: the lanes swing far from clients / 2 (a balancing rule, vLLM V0's fewest-unfinished engine,
    # would keep them within one of each other)
    assert max(abs(a[i] - b[i]) for i in middle) >= clients // 4


def test_two_clients_run_one_each_and_agree_with_estimate(monkeypatch, capsys):
    rows, doc = _lanes(monkeypatch, capsys, 2)
    a, b = rows.values()
    assert max(a) == max(b) == 1     # the even split: one sequence a micro-batch
    assert main(["estimate", *KIMI_PP2, "--batch", "2", "--no-ops", "--json"]) in (0, None)
    est = json.loads(capsys.readouterr().out)
    assert _tpot_ms(doc) == pytest.approx(est["tpot_s"] * 1e3, rel=0.10)


def test_estimate_says_it_prices_even_micro_batches(capsys):
    assert main(["estimate", *KIMI_PP2, "--batch", "32", "--no-ops"]) in (0, None)
    assert "decode priced as 2 even micro-batches of 16 sequences" in capsys.readouterr().out
    assert main(["estimate", *KIMI_PP2[:5], "8", "--prompt", "128", "--output", "256", "--batch", "32",
                 "--no-ops"]) in (0, None)
    assert "\npipeline: " not in capsys.readouterr().out   # tp only: nothing to split
