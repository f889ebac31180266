"""TensorRT-LLM's and SGLang's overlap loops send a step's tokens once they have launched the next step (engine spec
cpu.tokens_after_next_launch): a prompt's first token waits while an eager step after its prefill is launched."""
from types import SimpleNamespace

import pytest

import whatif
from whatif.roofline.engines import engine_spec
from whatif.simulator import first_token_hold
from whatif.simulator.first_token_hold import FirstTokenHold


def step(*recs):
    return SimpleNamespace(prefill=[(SimpleNamespace(rec=r), 1) for r in recs])


def test_a_first_token_waits_for_the_next_eager_steps_launch_only():
    a, b = SimpleNamespace(first_token_s=1.0), SimpleNamespace(first_token_s=0.5)   # b came out of an earlier step
    hold = FirstTokenHold(launch_s=0.030)
    hold.ran(step(a, b), end=1.0, duration=0.040)
    hold.next_step(1.0, eager=True, duration=0.050)   # CPU: 30 ms (prefill) + 30 ms (this one) - 40 ms of GPU
    assert a.first_token_s == pytest.approx(1.020) and b.first_token_s == 0.5
    hold.ran(step(a), end=2.0, duration=0.040)
    hold.next_step(2.0, eager=False, duration=0.010)   # a decode step: a CUDA graph replay, nothing held
    assert a.first_token_s == pytest.approx(1.020)
    a.first_token_s = 3.0
    hold.ran(step(a), end=3.0, duration=0.040)
    hold.next_step(3.5, eager=True, duration=0.050)   # the engine idled in between: sent at once
    assert a.first_token_s == 3.0
    hold.ran(step(a), end=3.5, duration=0.100)        # a GPU-bound prefill hides the next launch
    hold.next_step(3.5, eager=True, duration=0.050)
    assert a.first_token_s == 3.0
    a.first_token_s = 4.0
    hold.ran(step(a), end=4.0, duration=0.001)        # at most the next step's own time
    hold.next_step(4.0, eager=True, duration=0.005)
    assert a.first_token_s == pytest.approx(4.005)


def test_the_overlap_loops_of_tensorrt_llm_and_sglang_hold_their_tokens():
    for name in ("trtllm", "sglang", "sglang-0.5"):
        assert engine_spec(name).cpu.tokens_after_next_launch, name
        assert "documented" in engine_spec(name).sources["cpu.tokens_after_next_launch"], name
    for name in ("vllm", "trtllm-engine", "sglang-0.3"):   # no such loop (sglang-0.3: before the overlap scheduler)
        assert not engine_spec(name).cpu.tokens_after_next_launch, name


def test_a_loop_without_overlap_sends_its_tokens_at_once():
    from whatif.specs.engines import load_engine
    spec = load_engine("sglang")
    assert not spec.with_cpu_overlap(False).cpu.tokens_after_next_launch   # SGLang's event_loop_normal
    assert spec.with_cpu_overlap(True) is spec and spec.with_cpu_overlap(None) is spec


def test_the_hold_raises_a_moe_models_ttft_under_load_and_nothing_else(monkeypatch):
    kw = dict(kernel_engine="trtllm", tp=4, gpus=4, quantization="nvfp4", prompt=1024, output=32,
              traffic={"concurrency": 16, "requests": 64, "seed": 1})
    held = whatif.simulate("openai/gpt-oss-120b", "dgx-b200", **kw).result
    monkeypatch.setattr(first_token_hold.FirstTokenHold, "next_step", lambda self, *a: None)
    sent = whatif.simulate("openai/gpt-oss-120b", "dgx-b200", **kw).result
    ttft = [sum(r.ttft_s for r in res.records) for res in (held, sent)]
    assert ttft[0] > 1.02 * ttft[1]
    assert [r.finish_s for r in held.records] == [r.finish_s for r in sent.records]
