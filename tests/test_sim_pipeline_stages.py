"""A pipeline-parallel replica's virtual engines share its stages (simulator/pipeline_stages.py): a micro-batch
waits for a stage busy with another's, so a decode micro-batch behind a whole-prompt prefill waits it out."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from whatif.roofline.config import Parallelism
from whatif.scenario import Scenario
from whatif.simulator import pipeline_stages
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.pipeline_stages import PipelineStages
from whatif.simulator.request import FINISHED, Request

# vLLM V0 (0.6): one virtual engine per stage, each taking arrivals as it schedules (V1 blocks on its batch queue
# instead, test_pp_microbatch_turns.py)
PP2 = Scenario(model="llama-3-8b", hardware="dgx-h100", parallel=Parallelism(pp=2), kernel_engine="vllm-0.6")
WHOLE_PROMPTS = SchedulerConfig(chunked_prefill=False, priority="prefill")


def test_equal_micro_batches_keep_the_pipeline_full():
    stages = PipelineStages(2)
    assert stages.wall_time(0.0, 2.0) == 2.0          # the first takes both stages in turn
    assert stages.wall_time(0.0, 2.0) == 3.0          # the second waits one stage for it
    # from then on each takes its priced time and the pipeline completes two per priced time
    assert stages.wall_time(2.0, 2.0) == pytest.approx(2.0)
    assert stages.wall_time(3.0, 2.0) == pytest.approx(2.0)


def test_a_decode_micro_batch_waits_out_the_prefill_ahead_of_it():
    stages = PipelineStages(2)
    stages.wall_time(0.0, 2.0)                          # a prefill: 1 s on each stage
    assert stages.wall_time(0.0, 0.2) == pytest.approx(2.1)   # a 0.1 s-a-stage decode behind it
    assert stages.wall_time(5.0, 0.2) == pytest.approx(0.2)   # idle stages: no wait


def _run(requests):
    return simulate(SimConfig(PP2, None, WHOLE_PROMPTS, ClusterConfig(), SLO(), None), requests=requests)


def test_whole_prompt_prefills_stall_the_other_engines_decodes(monkeypatch):
    rng = np.random.default_rng(5)
    decoders = [Request(0, float(t), 64, 300) for t in rng.uniform(0.0, 0.05, 24)]
    longs = [Request(0, 0.3 + 0.15 * k, 6000, 4) for k in range(10)]
    reqs = [replace(r, id=i) for i, r in enumerate(sorted([*decoders, *longs], key=lambda r: r.arrival_s))]
    shared = _run(reqs)
    monkeypatch.setattr(pipeline_stages.PipelineStages, "wall_time", lambda self, start, priced: priced)
    independent = _run(reqs)
    assert {r.status for r in shared.records} == {r.status for r in independent.records} == {FINISHED}
    gap = {name: r.summary()["latency"]["itl_s"]["mean"] for name, r in (("shared", shared), ("alone", independent))}
    assert gap["shared"] > 1.15 * gap["alone"]   # (the prefills' own engine stalls alike: the tail barely moves)
