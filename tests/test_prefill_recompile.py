"""A prefill kernel compiled per new token count (simulator/prefill_recompile.py; SGLang's FLA L2-norm before PR
#31558): a prefill step pays the compile only the first time its prefill token count runs on the server."""
from __future__ import annotations

import statistics

import pytest

import whatif
from whatif.errors import WhatifError
from whatif.simulator.config import SchedulerConfig
from whatif.simulator.prefill_recompile import TokenCountCompiles


def test_a_token_count_compiles_once():
    compiles = TokenCountCompiles(0.05)
    assert compiles.cost(1000) == 0.05
    assert compiles.cost(1000) == 0.0   # cached for the server's life
    assert compiles.cost(1001) == 0.05
    assert compiles.cost(0) == 0.0      # a step without a prefill runs no such kernel


@pytest.mark.parametrize("value", [-0.01, "fast", 11.0])
def test_a_bad_compile_time_names_the_field(value):
    with pytest.raises(WhatifError, match="prefill_recompile_s"):
        SchedulerConfig(prefill_recompile_s=value)


def _later_ttft(range_ratio: float, compile_s: float) -> float:
    res = whatif.simulate("llama-3.1-8b", "h100-sxm", prompt=512, output=32, kernel_engine="sglang",
                          traffic=dict(concurrency=1, requests=8, seed=1, range_ratio=range_ratio),
                          engine={"prefill_recompile_s": compile_s})
    assert all(r.status == "finished" for r in res.records)
    return statistics.fmean(r.ttft_s for r in res.records[1:])   # (the first request compiles in every case)


def test_new_prompt_lengths_pay_the_compile_and_a_repeated_length_does_not():
    """One client: each prompt is its own prefill step. Lengths drawn in [0.8 L, L] are (almost all) new, so each
    later TTFT carries the compile; a fixed length compiled once, on the first request."""
    off, on = _later_ttft(0.8, 0.0), _later_ttft(0.8, 0.05)
    assert 0.04 < on - off <= 0.05 + 1e-9
    assert _later_ttft(1.0, 0.05) == pytest.approx(_later_ttft(1.0, 0.0))


def _adp_later_ttft(compile_s: float) -> float:
    res = whatif.simulate("deepseek-v3", "dgx-b200", prompt=512, output=8, kernel_engine="sglang", tp=8, ep=8,
                          dp_attention=True, quantization="fp8",
                          traffic=dict(concurrency=1, requests=6, seed=1, range_ratio=0.8),
                          engine={"prefill_recompile_s": compile_s})
    assert all(r.status == "finished" for r in res.records)
    return statistics.fmean(r.ttft_s for r in res.records[1:])


def test_attention_dp_ranks_pay_the_compile_on_their_own_new_token_counts():
    """An attention-DP group (rank_group.py) steps its ranks together: a rank's prefill of a new token count builds
    on that rank's host and the step waits for it (until session 70 only a plain replica charged it)."""
    off, on = _adp_later_ttft(0.0), _adp_later_ttft(0.05)
    assert 0.04 < on - off <= 0.05 + 1e-9


def test_simulate_takes_the_flag_search_takes(capsys):
    from whatif.cli import main
    args = ["simulate", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--rate", "5", "--requests", "30"]
    assert main(args + ["--prefill-recompile-s", "0.05"]) == 0
    assert "50 ms of host compile on each prefill step" in capsys.readouterr().out
    assert main(args + ["--prefill-recompile-s", "20"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--prefill-recompile-s" in err[0]
