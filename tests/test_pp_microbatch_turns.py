"""Pipeline-parallel decode micro-batches (Session 75 J, issue 37), each engine's rule as its source reads:
- vLLM V1 (spec scheduler.pp_batch_queue): a batch forms when the batch queue has room, once more at once after one
  is queued, and otherwise the engine blocks on the oldest batch (v1/engine/core.py step_with_batch_queue), a request
  in flight being skipped (v1/core/sched/scheduler.py); so a closed loop whose prompts fit one token budget runs ONE
  micro-batch, and a second forms only from what a batch left over (long prompts past the budget);
- SGLang (event_loop_pp: pp micro-batch slots in turn, each its own running batch) and TensorRT-LLM
  (_executor_loop_pp: microbatch_id in turn, requests in flight excluded): every slot takes the arrivals at its turn,
  none rebalanced, so a closed loop's micro-batches swing uneven.
`estimate` prices pp even micro-batches (the best case) and says so."""
from __future__ import annotations

import json
from collections import defaultdict

import pytest

from whatif.cli import main
from whatif.roofline.pipeline_micro import decode_microbatches
from whatif.simulator.scheduling import core

KIMI = ["--model", "moonshotai/Kimi-K2.5", "--hardware", "hgx-h200", "--tp", "4"]
SHORT = ["--prompt", "128", "--output", "256"]


def _lanes(monkeypatch, capsys, engine: str, clients: int, lengths=SHORT, extra=(), engines=2) -> tuple[list, float]:
    """Each virtual engine's rows per step over a PP2 closed loop of `clients`, and simulate's mean TPOT (ms)."""
    rows: dict = defaultdict(list)
    schedule = core.Scheduler.schedule

    def recorded(self, now):
        batch = schedule(self, now)
        rows[id(self)].append(batch.rows)
        return batch

    monkeypatch.setattr(core.Scheduler, "schedule", recorded)
    assert main(["simulate", "--engine", engine, *KIMI, "--pp", "2", *lengths, "--max-num-seqs", str(max(64, clients)),
                 "--concurrency", str(clients), "--requests", str(4 * clients), *extra, "--json"]) in (0, None)
    monkeypatch.setattr(core.Scheduler, "schedule", schedule)
    doc = json.loads(capsys.readouterr().out)
    assert len(rows) == engines   # two virtual engines (and a prefill pool's one)
    return list(rows.values()), doc["latency"]["tpot_s"]["mean"] * 1e3


def _estimate_tpot_ms(capsys, engine: str, batch: int) -> float:
    assert main(["estimate", "--engine", engine, *KIMI, "--pp", "2", *SHORT, "--batch", str(batch), "--no-ops",
                 "--json"]) in (0, None)
    return json.loads(capsys.readouterr().out)["tpot_s"] * 1e3


def _middle(lane: list) -> list:
    return lane[len(lane) // 4: 3 * len(lane) // 4]


@pytest.mark.parametrize("clients", [2, 16])
def test_vllm_runs_one_micro_batch_when_the_prompts_fit_one_budget(monkeypatch, capsys, clients):
    lanes, tpot = _lanes(monkeypatch, capsys, "vllm", clients)
    busy = sorted(max(_middle(lane), default=0) for lane in lanes)
    assert busy == [0, clients]   # every request in one micro-batch, the other slot empty
    # so it decodes as one micro-batch of `clients` through both stages, as estimate now prices it (pipeline_micro.py);
    # the even split it priced before (two of clients / 2: one of clients / 2 now) is x1.37 faster at 16 clients
    assert tpot == pytest.approx(_estimate_tpot_ms(capsys, "vllm", clients), rel=0.10)
    if clients == 16:
        assert tpot > 1.25 * _estimate_tpot_ms(capsys, "vllm", clients // 2)


def test_vllm_forms_a_second_micro_batch_from_what_the_budget_left(monkeypatch, capsys):
    lanes, _ = _lanes(monkeypatch, capsys, "vllm", 32, ["--prompt", "4096", "--output", "1024"])
    means = [sum(_middle(lane)) / len(_middle(lane)) for lane in lanes]
    assert min(means) > 12   # 4096-token prompts, 8192-token budget: the leftovers fill the second slot


def test_vllm_disaggregated_decode_takes_landed_kv_into_the_next_batch_formed(monkeypatch, capsys):
    """Session 75 D's Kimi case: a TP8 prefill pool feeding a TP4 PP2 decode pool at 32 clients. vLLM V1 schedules a
    request whose KV has landed in the next batch it forms (the engine blocks on the batch in flight), so the decode
    pool runs one micro-batch (before: 25 / 7, as whichever engine claimed each transfer)."""
    lanes, tpot = _lanes(monkeypatch, capsys, "vllm", 32, ["--prompt", "4096", "--output", "1024"],
                         ["--prefill-replicas", "1", "--prefill-tp", "8", "--prefill-pp", "1", "--nodes", "2"], 3)
    assert sorted(max(_middle(lane)) for lane in lanes) == [0, 0, 32]


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_turns_give_one_each_at_two_clients_and_agree_with_estimate(monkeypatch, capsys, engine):
    lanes, tpot = _lanes(monkeypatch, capsys, engine, 2)
    assert [max(_middle(lane)) for lane in lanes] == [1, 1]   # the even split
    assert tpot == pytest.approx(_estimate_tpot_ms(capsys, engine, 2), rel=0.10)


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
@pytest.mark.parametrize("clients", [16, 32])
def test_turns_are_not_rebalanced(monkeypatch, capsys, engine, clients):
    (a, b), _ = _lanes(monkeypatch, capsys, engine, clients)
    steps = range(len(a) // 4, 3 * min(len(a), len(b)) // 4)
    assert max(a[i] + b[i] for i in steps) <= clients
    # by turn: the slots swing far from clients / 2 (vLLM V0's rule, the engine with the fewest unfinished
    # requests, would keep them within one of each other)
    assert max(abs(a[i] - b[i]) for i in steps) >= clients // 4


def test_estimate_names_each_engines_split(capsys):
    assert main(["estimate", "--engine", "sglang", *KIMI, "--pp", "2", *SHORT, "--batch", "32",
                 "--no-ops"]) in (0, None)
    out = capsys.readouterr().out
    assert "decode priced as 2 micro-batches of 16 sequences over 2 stages, even (the best case)" in out
    assert main(["estimate", *KIMI, "--pp", "2", *SHORT, "--batch", "32", "--no-ops"]) in (0, None)
    assert "decode as 1 micro-batch of 32 sequences over 2 stages: vLLM V1's batch queue" in capsys.readouterr().out
    assert main(["estimate", *KIMI[:-1], "8", *SHORT, "--batch", "32", "--no-ops"]) in (0, None)
    assert "\npipeline: " not in capsys.readouterr().out   # no pipeline: nothing to split


def test_decode_microbatches_by_rule():
    assert decode_microbatches(2, 32, 128, 8192, batch_queue=False) == 2     # slots by turn: even at best
    assert decode_microbatches(2, 32, 128, 8192, batch_queue=True) == 1      # 4,096 prompt tokens: one budget
    assert decode_microbatches(2, 32, 1024, 8192, batch_queue=True) == 2     # four budgets: both slots
    assert decode_microbatches(4, 32, 512, 8192, batch_queue=True) == 2      # two budgets of four slots
    assert decode_microbatches(2, 32, 4096, 8192, batch_queue=True, decode_pool=True) == 1   # no prompts to leave
    assert decode_microbatches(2, 1, 4096, 8192, batch_queue=False) == 1
    assert decode_microbatches(1, 32, 4096, 8192, batch_queue=True) == 1


def test_search_prices_a_vllm_pp_decode_pool_as_its_simulation_runs_it(monkeypatch, capsys, tmp_path):
    """Session 75 D's split: `search` priced the TP4 PP2 decode pool at two micro-batches (28.9 ms at batch 32)
    where the simulator ran 39.4 ms; both now run vLLM V1's one micro-batch (42.3 ms priced, ~41 simulated)."""
    csv = tmp_path / "pools.csv"
    assert main(["search", "--model", "moonshotai/Kimi-K2.5", "--hardware", "hgx-h200", "--nodes", "2", "--gpus", "16",
                 "--prompt", "4096", "--output", "1024", "--slo-ttft", "1s", "--slo-tpot", "30ms", "--jobs", "1",
                 "--no-progress", "--modes", "disaggregated", "--csv", str(csv)]) in (0, None)
    capsys.readouterr()
    import pandas as pd
    d = pd.read_csv(csv)
    pool = d[(d.tp == 4) & (d.pp == 2) & (d.batch == 32) & (d.prefill_tp == 8) & (d.prefill_ep == 8)]
    priced = pool.tpot_s.iloc[0] * 1e3
    lanes, simulated = _lanes(monkeypatch, capsys, "vllm", 32, ["--prompt", "4096", "--output", "1024"],
                              ["--prefill-replicas", "1", "--prefill-tp", "8", "--prefill-pp", "1", "--nodes", "2"], 3)
    assert priced == pytest.approx(simulated, rel=0.10)
