"""Estimate, simulate and search run on each model profile of the 2025-26 families (and say something sane): the
estimate of all in the default run; simulate and search of all in the slow run, of one per mechanism here."""
import math

import pytest

import whatif
from tests.test_model_cards import CARDS
from whatif.specs.models import load_model

NEW = sorted(CARDS)
ONE_PER_MECHANISM = ["gpt-oss-20b", "deepseek-v3.2", "qwen3.5-35b-a3b", "nemotron-3-nano-30b-a3b", "llama-4-scout",
                     "gemma-4-31b", "glm-5.2", "kimi-linear-48b-a3b"]
# (gemma-4: full layers' own head shape; glm-5.2: IndexShare; kimi-linear: KDA's channel gate beside NoPE MLA)


@pytest.mark.parametrize("name", NEW)
def test_estimate_runs_and_its_memory_plan_holds_the_weights(name):
    tp = math.gcd(8, load_model(name).num_heads)    # gemma-3-1b's 4 heads split at most 4 ways
    e = whatif.estimate(name, "dgx-b200", tp=tp, batch=4, prompt=2048, output=128, weight_dtype="fp8")
    assert e.fits and 0 < e.ttft_s < 10 and 0 < e.tpot_s < 1
    d = e.to_dict()
    assert d["memory"]["weights_bytes"] > 0 and d["memory"]["kv_bytes_per_token"] > 0


def run_simulate_and_search(name):
    tp = math.gcd(8, load_model(name).num_heads)
    s = whatif.simulate(name, "dgx-b200", tp=tp, weight_dtype="fp8", rate=2.0, requests=20, prompt=1024, output=32,
                        seed=1)
    assert s.to_dict()["requests"]["finished"] == 20
    r = whatif.search(name, "dgx-b200", gpus=tp, prompt=1024, output=128, tp=[tp], modes=("aggregated",),
                      weight_dtypes=("fp8",), batches=[1, 16])
    assert r.to_dict()["frontier"]


@pytest.mark.parametrize("name", ONE_PER_MECHANISM)
def test_simulate_and_search_run_per_mechanism(name):
    run_simulate_and_search(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in NEW if n not in ONE_PER_MECHANISM])
def test_simulate_and_search_run_on_every_new_profile(name):
    run_simulate_and_search(name)
