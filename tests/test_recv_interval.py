"""SGLang's --scheduler-recv-interval (simulator/recv_interval.py): a busy scheduler reads new requests once per K
decode steps, so a prompt arriving while the server decodes waits about K / 2 steps."""
from __future__ import annotations

import statistics

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.simulator.config import SchedulerConfig
from whatif.simulator.recv_interval import RecvSkipper


def test_polls_every_k_decode_steps_and_after_a_prefill():
    skipper = RecvSkipper(3)
    assert skipper.polls()   # the first iteration reads
    seen = []
    for _ in range(6):
        skipper.stepped(had_prefill=False)
        seen.append(skipper.polls())
    assert seen == [False, False, True, False, False, True]
    skipper.stepped(had_prefill=False)
    assert not skipper.polls()
    skipper.stepped(had_prefill=True)   # a prefill step's weight (1000) reaches any interval
    assert skipper.polls()


@pytest.mark.parametrize("value", [0, 2.5, True])
def test_a_bad_interval_names_the_field(value):
    with pytest.raises(WhatifError, match="recv_interval"):
        SchedulerConfig(recv_interval=value)


def _mean_ttft_and_step(interval: int) -> tuple[float, float]:
    res = whatif.simulate("llama-3.1-8b", "h100-sxm", traffic=dict(concurrency=4, requests=40, seed=1, range_ratio=0.8),
                          prompt=512, output=128, kernel_engine="sglang", engine={"recv_interval": interval})
    assert all(r.status == "finished" for r in res.records)
    step = statistics.median(res.log.columns["duration_s"])
    return statistics.fmean(r.ttft_s for r in res.records[4:]), step


def test_a_prompt_arriving_at_a_decoding_server_waits_for_the_next_poll():
    """4 clients: every later prompt arrives while the others decode, so it waits for the poll, some of the
    interval's 20 steps (about half on average), where the default reads it at the next step."""
    (off, _), (on, step) = _mean_ttft_and_step(1), _mean_ttft_and_step(20)
    assert off + 4 * step < on < off + 20 * step
