"""SGLang's admission of ignore_eos requests with the radix cache off (simulator/scheduling/ignore_eos.py,
schedule_policy.py add_one_req_ignore_eos): a request joins only if the pool holds every running request and it to
their ends, whole outputs at ratio 1.0, finishing in order of tokens left."""
import pytest

from whatif.errors import WhatifError
from whatif.simulator.cluster import simulate
from whatif.simulator.config import SchedulerConfig, SimConfig
from whatif.simulator.scheduling.ignore_eos import RESERVE_TOKENS, fits_to_the_end
from whatif.simulator.workload import WorkloadSpec
from tests.test_sim_capacity_policy import TIGHT

# long outputs after short prompts: the decaying ratio (0.7 -> 0.098 of what is left) reserves far less than the
# whole outputs the ignore_eos rule holds
LONG_OUTPUTS = WorkloadSpec(rate=1e9, requests=24, prompt=500, output=4000, seed=1)


def test_a_lone_request_fits_when_its_prompt_and_output_fit():
    # 1,000 free; prompt 400 allocated now leaves 600; its 500 output tokens need 500 + 1 reserved
    assert fits_to_the_end(1000, 400, [(500, 400)])
    assert not fits_to_the_end(1000, 400, [(600 - RESERVE_TOKENS, 400)])   # at equality SGLang refuses
    assert not fits_to_the_end(300, 400, [(10, 400)])                      # the prompt alone does not fit


def test_an_early_finisher_frees_its_tokens_for_the_later_ones():
    # 1,300 free, the new prompt's 300 allocated: 1,000 left. A running request with 100 left holds 900.
    # First both grow until it ends: 1,000 - 100 x 2 > 1 x 2; then its 900 come back: the new one may need
    # up to 1,000 + 900 - 1 - 1 = 1,898 more (SGLang counts each request's whole tokens left at every stage)
    assert fits_to_the_end(1300, 300, [(100, 900), (1898, 300)])
    assert not fits_to_the_end(1300, 300, [(100, 900), (1899, 300)])
    # the first stage binds when the early finisher is not early enough: 1,000 - 500 x 2 <= 2
    assert fits_to_the_end(1300, 300, [(450, 900), (500, 300)])
    assert not fits_to_the_end(1300, 300, [(500, 900), (501, 300)])


def test_requests_with_nothing_left_are_left_out():
    assert fits_to_the_end(100, 0, [(0, 10_000), (50, 10)])


def _run(ignore_eos: bool):
    res = simulate(SimConfig(TIGHT, LONG_OUTPUTS, SchedulerConfig(capacity="ratio", max_batch=256,
                                                           ignore_eos_admission=ignore_eos)))
    assert all(r.finish_s is not None for r in res.records)
    return res


def test_the_ignore_eos_rule_admits_fewer_at_once_than_the_decaying_ratio():
    ratio, ignore_eos = _run(False), _run(True)
    assert ignore_eos.summary()["batch"]["max_seqs"] < ratio.summary()["batch"]["max_seqs"]
    # fewer admitted at once: the last requests wait longer for their first token, and none is retracted
    assert max(r.ttft_s for r in ignore_eos.records) > max(r.ttft_s for r in ratio.records)
    assert sum(r.preemptions for r in ignore_eos.records) == 0 < sum(r.preemptions for r in ratio.records)


def test_the_rule_refines_the_ratio_capacity_only():
    with pytest.raises(WhatifError, match="ignore_eos_admission"):
        SchedulerConfig(capacity="on-demand", ignore_eos_admission=True)
    with pytest.raises(WhatifError, match="ignore_eos_admission"):
        SchedulerConfig(capacity="ratio", ignore_eos_admission="yes")
