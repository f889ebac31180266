"""An fp32 router gate (MoESpec.fp32_router: MiniMax-M2, whose vLLM model builds the gate in float32 and casts the
hidden state to it) is an fp32 GEMM on the CUDA cores, TP-independent, not a 16-bit one."""
import whatif.api as api
from whatif.specs.models import load_model


def router(model: str, tp: int, prompt: int):
    est = api.estimate(model, "dgx-b200", tp=tp, gpus=tp, batch=1, prompt=prompt, output=2).estimate
    return next(t for t in est.prefill[0][0].op_times if t.op.name == "router")


def test_minimax_declares_an_fp32_router():
    assert load_model("minimax-m2.5").moe.fp32_router
    assert not load_model("qwen3-30b-a3b").moe.fp32_router


def test_the_fp32_router_runs_at_the_fp32_peak_whatever_the_tp():
    t = router("MiniMaxAI/MiniMax-M2.5", 4, 8192)
    assert t.op.dtype == "fp32"
    flops = 2 * 8192 * 3072 * 256
    assert t.time_s >= flops / 75e12                      # B200's fp32 (CUDA-core) datasheet peak
    assert abs(router("MiniMaxAI/MiniMax-M2.5", 2, 8192).time_s - t.time_s) < 1e-9   # the gate is replicated


def test_the_simulator_step_pricer_prices_the_fp32_router():
    # the simulator's fast step pricer (step_price/parts.py) hands an SGEMM to kernel_timing, not its 16-bit tables
    res = api.simulate("MiniMaxAI/MiniMax-M2.5", "dgx-b200", tp=4, gpus=4, prompt=1024, output=16,
                       traffic={"concurrency": 2, "requests": 2, "seed": 1})
    assert res is not None
