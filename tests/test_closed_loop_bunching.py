"""benchmarks/closed_loop_bunching.py: a closed-loop row's TTFT in prefill passes, the simulation's opening
(bunched) round against its steady rounds, and a way back from the last token to the next send (session 74 H:
TensorRT-LLM 1.0.0rc3 Qwen3-32B at 2k / 4k prompts measures the bunched queue, whatif the spread one)."""
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import closed_loop_bunching as clb  # noqa: E402


def test_bunched_prompts_wait_half_the_queue_served_one_or_two_a_step():
    assert clb.bunched_passes(8) == pytest.approx(4.5)      # (1 + ... + 8) / 8
    assert clb.bunched_passes(8, 2) == pytest.approx(5.0)   # 2, 2, 4, 4, 6, 6, 8, 8
    assert clb.bunched_passes(1) == pytest.approx(1.0)


def test_return_path_is_restored_and_off_at_zero():
    from whatif.simulator.closed_loop import ClientLoop
    original = ClientLoop.answered
    with clb.return_path(0.0):
        assert ClientLoop.answered is original
    with clb.return_path(0.05):
        assert ClientLoop.answered is not original
    assert ClientLoop.answered is original


def _row(isl: int):
    import serving_reference as sr
    rid = f"qwen_qwen3_32b_qwen_qwen3_32b_h100_sxm_trtllm_agg_{isl}x256_c8_tp1_epnone_"
    rows = [r for r in sr.load() if r["id"].startswith(rid)]
    assert len(rows) == 1, rid
    return rows[0]


def test_qwen3_32b_rc3_4k_measures_the_bunched_queue_whatif_the_spread_one():
    r = clb.row_regime(_row(4096), (50.0,))
    assert 4.2 < r["measured"] / r["pass"] < 5.0            # 1,133 ms, 4.6 passes: (8 + 1) / 2 is 4.5
    assert r["steady"] / r["pass"] < 3.0                    # 629 ms, 2.6 passes
    assert abs(r["opening"] / r["measured"] - 1) < 0.1      # the opening burst: 1,135 ms
    assert r["bunched"] == pytest.approx(4.5)               # 5,632 tokens: one 4,096-token prompt a step
    assert r["back50"] > 1.4 * r["table"]                   # a 50 ms way back re-bunches the loop: 978 ms


def test_qwen3_32b_rc3_1k_pairs_prompts_in_whatifs_budget_and_so_matches():
    r = clb.row_regime(_row(1024))
    assert r["budget"] >= 2 * 1024 + 7                      # 8 + 1,024 + 1,500 rounded to 32: two prompts a step
    assert r["bunched"] == pytest.approx(5.0)
    assert abs(r["table"] / r["measured"] - 1) < 0.05       # 273 ms both
