"""vLLM V1 admits a waiting request's chunk (its tokens up to the step's budget) whole or not at all: the WAITING loop
of vllm/v1/core/sched/scheduler.py breaks when allocate_slots returns None, it never cuts the chunk to the free KV
blocks. So a recompute-preempted request does not re-enter at once with what its own release freed. Each test
compares runs with the behaviour on and off."""
from __future__ import annotations

from dataclasses import replace

import pytest

from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.simulator.config import SchedulerConfig

from tests.test_sim_preempted_blocks import _preempting_run as _run   # the same 30-request run on a 48-block pool

VLLM_V1 = replace(SchedulerConfig.for_engine(engine_spec("vllm")), prefix_caching=False)


def test_vllm_specs_admit_whole_chunks_and_other_engines_keep_cutting_them():
    for name in ("vllm", "vllm-0.18"):
        assert not SchedulerConfig.for_engine(engine_spec(name)).admits_partial_chunk
    for name in ("sglang", "trtllm"):
        assert SchedulerConfig.for_engine(engine_spec(name)).admits_partial_chunk


def test_whole_chunk_admission_preempts_less_and_recomputes_less():
    reqs, whole = _run(VLLM_V1)
    _, cut = _run(replace(VLLM_V1, admits_partial_chunk=True))
    prompts = sum(r.prompt for r in reqs)
    pre_whole = sum(r.preemptions for r in whole.records)
    pre_cut = sum(r.preemptions for r in cut.records)
    assert pre_cut > 0
    assert pre_whole < pre_cut     # a cut chunk re-enters into memory the running set is about to need
    redone_whole = sum(whole.log.columns["prefill_tokens"]) - prompts
    redone_cut = sum(cut.log.columns["prefill_tokens"]) - prompts
    assert redone_whole < redone_cut


def test_the_setting_is_checked():
    with pytest.raises(WhatifError, match="admits_partial_chunk"):
        SchedulerConfig(admits_partial_chunk="no")
