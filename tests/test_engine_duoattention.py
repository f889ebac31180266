"""DuoAttention's release harness as an engine (engine_profiles/versions/duoattention-bench.yaml) and its decode
claims, conditional on the host time per eager kernel (whatif/claims/family_c.py DUO_HOST)."""
from dataclasses import replace

from whatif.claims.claim import all_claims, evaluate
from whatif.roofline.engines import engine_spec

BENCH = "duoattention-bench"


def duo_decode(paper_start: str):
    return next(c for c in all_claims() if c.technique == "duoattention" and c.metric == "tpot"
                and c.paper.startswith(paper_start))


def test_profile_is_eager_with_no_generate_loop_and_native_gqa():
    e, hf = engine_spec(BENCH), engine_spec("hf-transformers")
    assert e.graph_sizes == () and e.eager_launch_s == hf.eager_launch_s
    assert e.cpu.per_step_s == 0 and hf.cpu.per_step_s > 0 and e.cpu.overlapped
    assert e.gqa_decode_shares_kv and not hf.gqa_decode_shares_kv
    assert "benchmark_static.py" in e.sources["cpu.per_step_s"]


def test_decode_claims_run_on_the_harness_and_turn_on_the_host_cost():
    for start in ("DuoAttention speeds up decoding by up to 1.50x", "DuoAttention speeds up decoding by up to 2.18x"):
        c = duo_decode(start)
        assert c.baseline_engine == BENCH and c.kind == "conditional"
        gains = [evaluate(c.assumed.at(c, us)).gain for us in (54.0, 100.0)]
        lo, hi = c.effective_band
        assert lo <= gains[0] <= hi and not lo <= gains[1] <= hi, (start, gains)


def test_the_step_is_the_longer_of_gpu_work_and_host_launches():
    # at 100 us a kernel the MHA step is the launches on both sides (~39 ms), so the cache the technique saves
    # hardly shows; with the GPU launch cost the eager step is the GPU's work again (2.25x, as with graphs)
    c = duo_decode("DuoAttention speeds up decoding by up to 2.18x")
    host_bound = evaluate(c.assumed.at(c, 100.0))
    gpu_bound = evaluate(c.assumed.at(c, 5.0))
    assert host_bound.gain < 1.2 < 2.1 < gpu_bound.gain
    assert abs(host_bound.predicted - 0.039) < 0.003
    graphed = evaluate(replace(c, baseline_engine="", engine_why="", assumed=None))
    assert abs(graphed.gain - gpu_bound.gain) < 0.01
