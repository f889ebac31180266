"""Claims whose setup once had a side whatif's memory plan could not hold, now run as the paper's release ran them
(session 72 E2, docs/accuracy.md): both sides must fit, so a profile or setup that drifts from the release shows."""
import pytest

from whatif.claims import all_claims
from whatif.claims.claim import claim_scenarios, scenario_of
from whatif.specs.engines import load_engine

# paper prefix -> what of the release makes it fit
RUN_AS_RELEASED = {
    "TidalDecode reduces LLM decoding latency": "a preallocated paged cache (no held previous cache)",
    "PEARL: a superior speedup performance up to": "the 70B over 3 GPUs, the drafter on a 4th",
    "ShadowKV supports up to 6x": "caches sized exactly on the whole GPU",
    "ShadowKV boosts throughput": "caches sized exactly on the whole GPU, batches 4 and 24",
    "TriForce: up to 2.31x": "its full cache sized exactly on the whole GPU (test/on_chip.py)",
    "reducing peak-memory size up to 2.29x": "GEAR at a batch its generate() baseline holds",
}


def _sides(claim) -> list[dict]:
    """Both sides at the claim's setup and at each value of its assumed input: a swept batch must fit too."""
    claims = [claim] + ([claim.assumed.at(claim, v) for v in claim.assumed.values] if claim.assumed else [])
    return [side for c in claims for side in claim_scenarios(c)]


@pytest.mark.parametrize("prefix", sorted(RUN_AS_RELEASED))
def test_both_sides_of_a_claim_run_as_released_fit_whatifs_memory_plan(prefix):
    found = [c for c in all_claims() if c.paper.startswith(prefix)]
    assert found, prefix
    for c in found:
        for side in _sides(c):
            m = scenario_of(side).run().memory
            assert m.fits, (c.paper, RUN_AS_RELEASED[prefix], m.total_bytes / 1e9, m.usable_bytes / 1e9)


def test_tidaldecode_harness_holds_one_preallocated_cache():
    """Its KvPool is allocated once at tidal_init, unlike the hf-transformers parent's torch.cat cache."""
    assert load_engine("hf-transformers").holds_previous_cache
    spec = load_engine("tidaldecode-bench")
    assert not spec.holds_previous_cache and not spec.cache_grows
