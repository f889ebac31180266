"""The search's op memo (roofline/op_memo.py): a remembering StepPricer prices each distinct op of a setup once, and
its steps equal forward_pass.engine_step's, float for float, op by op (the memo changes no cost math)."""
from __future__ import annotations

from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.forward_pass import engine_step
from whatif.roofline.op_memo import memo_price, op_key
from whatif.roofline.ops import gemm
from whatif.roofline.pass_setup import pass_setup
from whatif.roofline.step_price import StepPricer
from whatif.roofline.timing import time_op
from whatif.scenario import Scenario

# decode steps at several contexts and batches (the search's: they share every op but attention), prefill chunks,
# a mixed pass (its attention op has parts: priced unmemoized)
BATCHES = ([((1, c, b),) for b in (1, 8, 64) for c in (4000, 4250, 4500, 4999)]
           + [((2048, 0, 1),), ((2048, 2048, 1),), ((8192, 0, 1),), ((1, 3000, 64), (517, 0, 1))])
SCENARIOS = [Scenario(model="llama-3.1-70b", hardware="dgx-h100", parallel=Parallelism(tp=4, pp=2),
                      precision=Precision("fp8", "bf16"), techniques=("kivi",)),
             Scenario(hardware="dgx-h100", parallel=Parallelism(tp=2)),
             Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=4))]


def setup_of(sc: Scenario):
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(), sc.placement(),
                      engine_spec=sc.engine_spec())


def figures(step):
    p, wall = step
    return (wall, p.time_s, p.gpu_s, p.launch_s,
            [(t.op.name, t.time_s, t.compute_s, t.memory_s, t.overhead_s, t.bound) for t in p.op_times])


def test_remembered_steps_equal_whole_steps_float_for_float():
    for sc in SCENARIOS:
        setup = setup_of(sc)
        pricer = StepPricer(setup, memoized=False, remember=True)
        for groups in BATCHES:
            for graphs in (True, False):
                batch = ForwardBatch(groups)
                assert figures(pricer.step(batch, graphs)) == figures(engine_step(setup, batch, graphs))
        assert len(pricer.op_times) < sum(len(p.op_times) for p, _ in pricer.steps.values())   # ops did repeat


def test_a_hit_is_the_first_price_on_the_callers_op():
    setup = setup_of(Scenario(hardware="dgx-h100"))
    args = (setup.system.gpu, setup.efficiency, setup.system.gpu_link, setup.paths)
    price = memo_price({})
    a, b = (gemm("qkv_proj", 64, 1280, 8192, 2, 2, "bf16", 80) for _ in range(2))
    first, again = price(a, *args), price(b, *args)
    assert again.op is b and first.op is a
    assert (again.time_s, again.compute_s, again.memory_s, again.bound) == (first.time_s, first.compute_s,
                                                                             first.memory_s, first.bound)
    assert again == time_op(b, *args)
    other = gemm("qkv_proj", 65, 1280, 8192, 2, 2, "bf16", 80)   # one field apart: its own key
    assert op_key(other) != op_key(a) and price(other, *args) == time_op(other, *args)
