"""vLLM 0.2.x's padded prompt batches (simulator/scheduling/padded_prompts.py): a prefill step's prompts run at the
longest's length, and the scheduler stops adding prompts past max_paddings padding tokens or the padded budget."""
from __future__ import annotations

import pytest

from whatif.errors import WhatifError
from whatif.roofline.engines import engine_spec
from whatif.scenario import Scenario
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SLO, ClusterConfig, SchedulerConfig, SimConfig
from whatif.simulator.request import Request
from whatif.simulator.scheduling.padded_prompts import padded_fits, padded_prefills

BASE = Scenario(model="llama-3-8b", hardware="h100-sxm")
UNPADDED = SchedulerConfig(chunked_prefill=False, priority="prefill")
PADDED = SchedulerConfig(chunked_prefill=False, priority="prefill", max_paddings=256)


def first_tokens(prompts: list[int], engine: SchedulerConfig) -> list[float]:
    reqs = [Request(i, 0.0, p, 4) for i, p in enumerate(prompts)]
    res = simulate(SimConfig(BASE, None, engine, ClusterConfig(), SLO(), None), requests=reqs)
    return [r.ttft_s for r in sorted(res.records, key=lambda r: r.request.id)]


def test_the_padding_rule_counts_prompts_times_the_longest():
    assert padded_fits(1000, 1000, 1, 900, 8192, 256)            # 2 x 1000 tokens, 100 of them padding
    assert padded_fits(900, 900, 1, 1000, 8192, 256)             # a longer newcomer pads the ones before it
    assert not padded_fits(1000, 1000, 1, 700, 8192, 256)        # 300 padding tokens > 256
    assert not padded_fits(1000, 1000, 1, 1000, 1999, 256)       # 2,000 padded tokens over the budget
    assert padded_fits(1000, 1000, 1, 1000, 2000, 0)
    assert padded_prefills([(900, 0), (1000, 0), (10, 0)]) == [(1000, 0)] * 3


def test_vllm_0_2_profiles_pad_their_prompts_and_later_vllm_does_not():
    assert engine_spec("vllm-0.2").max_paddings == engine_spec("vllm-0.2-ray").max_paddings == 256
    assert engine_spec("vllm").max_paddings is None and engine_spec("vllm-0.6").max_paddings is None
    assert SchedulerConfig.for_engine(engine_spec("vllm-0.2")).max_paddings == 256
    with pytest.raises(WhatifError, match="max_paddings"):
        SchedulerConfig(max_paddings=-1)


def test_prompts_past_the_padding_limit_prefill_in_separate_steps():
    a, b = first_tokens([1000, 700], UNPADDED)
    assert a == b                    # one step, packed
    a, b = first_tokens([1000, 700], PADDED)
    assert b > a                     # 300 padding tokens: the second prompt waits for a step of its own


def test_a_padded_step_costs_its_prompts_at_the_longest_length():
    packed = first_tokens([1000, 900], UNPADDED)
    padded = first_tokens([1000, 900], PADDED)
    assert packed[0] == packed[1] and padded[0] == padded[1]   # one step either way (100 padding tokens)
    assert padded[0] > packed[0]                               # 2,000 tokens' work, not 1,900
    assert first_tokens([1000, 1000], PADDED) == pytest.approx(padded)
