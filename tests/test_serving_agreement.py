"""One answer per question: `simulate` and `estimate` price the same serving through the same steps. A lone
request through the closed loop reproduces `estimate` at batch 1 (TTFT through the server's front end, TPOT),
for each engine; a closed loop's steady state agrees with the estimate's figure at the same batch (the serving
figure `estimate` and `search` report), within what the N prefills of a cycle add to the decode steps."""
import pytest

from whatif import api

MODEL, GPU = "llama-3.1-8b", "h100-sxm"


def _lone(engine: str, prompt: int, output: int):
    res = api.simulate(MODEL, GPU, kernel_engine=engine, prompt=prompt, output=output,
                       traffic={"concurrency": 1, "requests": 1})
    return res, res.records[0]


@pytest.mark.parametrize("engine", ["vllm", "sglang", "trtllm"])
def test_a_lone_request_through_the_closed_loop_reproduces_the_estimate(engine):
    prompt, output = 1536, 24
    res, rec = _lone(engine, prompt, output)
    est = api.estimate(MODEL, GPU, kernel_engine=engine, batch=1, prompt=prompt, output=output,
                       with_max_batch=False).estimate
    assert rec.ttft_s == pytest.approx(est.ttft_s, rel=0.01)
    assert rec.ttft_s + res.frontend.seconds(prompt) == pytest.approx(est.served_ttft_s, rel=0.01)
    assert rec.tpot_s == pytest.approx(est.tpot_s, rel=0.01)


@pytest.mark.parametrize("engine, clients", [("vllm", 16), ("sglang", 8), ("trtllm", 32)])
def test_a_closed_loops_steady_state_agrees_with_the_estimate_at_that_batch(engine, clients):
    prompt, output = 256, 192
    res = api.simulate(MODEL, GPU, kernel_engine=engine, prompt=prompt, output=output,
                       traffic={"concurrency": clients, "requests": clients * 5})
    steady = sorted(res.records, key=lambda r: r.request.id)[2 * clients:]
    tpot = sum(r.tpot_s for r in steady) / len(steady)
    at_batch = api.estimate(MODEL, GPU, kernel_engine=engine, batch=clients, prompt=prompt, output=output,
                            with_max_batch=False).estimate
    one = api.estimate(MODEL, GPU, kernel_engine=engine, batch=1, prompt=prompt, output=output,
                       with_max_batch=False).estimate
    # each of a cycle's `clients` prefills lengthens one decode step that every running request shares
    ceiling = at_batch.tpot_s + clients * one.ttft_s / (output - 1)
    assert 0.97 * at_batch.tpot_s <= tpot <= 1.03 * ceiling
    assert max(r.ttft_s for r in steady) <= clients * one.ttft_s + 2 * at_batch.tpot_s
