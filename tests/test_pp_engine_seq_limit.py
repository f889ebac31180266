"""max_num_seqs under pipeline parallelism, each engine's rule from its source (session 75 N, issue 37):
- vLLM V1 keeps ONE Scheduler; its `running` list holds the requests of every batch in flight and a waiting request
  is admitted only while len(self.running) < max_num_running_reqs (v1/core/sched/scheduler.py): max_num_seqs bounds
  the whole engine, not each micro-batch;
- TensorRT-LLM's micro-batch scheduler caps each micro-batch at max_batch_size and the executor's active requests at
  model_engine.get_max_num_sequences() = pp_size x max_batch_size (_torch/pyexecutor/model_engine.py,
  py_executor.py max_num_active_requests): per micro-batch, as the simulator's lanes already were."""
from __future__ import annotations

from collections import defaultdict

import pytest

from whatif.cli import main
from whatif.simulator.replica import engine_seq_cap
from whatif.simulator.scheduling import core

RUN = ["simulate", "--model", "llama-3-70b", "--hardware", "dgx-h100", "--tp", "2", "--pp", "2", "--prompt", "128",
       "--output", "64", "--concurrency", "64", "--requests", "128", "--max-batch", "32", "--seed", "0", "--json"]


def _peaks(monkeypatch, capsys, engine: str) -> tuple[int, list[int]]:
    """The most running sequences summed over the replica's lanes at any schedule call, and each lane's own peak."""
    peak, lanes = [0], defaultdict(int)
    schedule = core.Scheduler.schedule

    def recorded(self, now):
        batch = schedule(self, now)
        peak[0] = max(peak[0], sum(len(s.running) for s in self.hooks.schedulers))
        lanes[id(self)] = max(lanes[id(self)], len(self.running))
        return batch

    monkeypatch.setattr(core.Scheduler, "schedule", recorded)
    assert main([*RUN, "--engine", engine]) in (0, None)
    monkeypatch.setattr(core.Scheduler, "schedule", schedule)
    capsys.readouterr()
    return peak[0], sorted(lanes.values())


def test_vllm_v1_max_num_seqs_bounds_every_lane_together(monkeypatch, capsys):
    total, lanes = _peaks(monkeypatch, capsys, "vllm")
    assert total == 32   # (before: 64, each lane admitting its own 32)
    assert lanes == [0, 32]   # the first batch takes all 32; the second finds the engine full


def test_trtllm_caps_each_micro_batch(monkeypatch, capsys):
    total, lanes = _peaks(monkeypatch, capsys, "trtllm")
    assert total == 64 and lanes == [32, 32]   # pp x max_batch_size active, max_batch_size a micro-batch


@pytest.mark.parametrize("max_batch, running, elsewhere, cap", [(32, 0, 32, 0), (32, 5, 20, 12), (32, 10, 30, 10),
                                                               (32, 0, 0, 32)])
def test_engine_seq_cap(max_batch, running, elsewhere, cap):
    assert engine_seq_cap(max_batch, running, elsewhere) == cap
