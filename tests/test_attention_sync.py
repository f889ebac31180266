"""An eager loop that synchronizes the device around every attention call (kernels.sync_around_attention,
roofline/attention_sync.py; TidalDecode's release harness, engine_profiles/versions/tidaldecode-bench.yaml)."""
from whatif.roofline.config import Precision
from whatif.roofline.engines import engine_spec
from whatif.roofline.estimate import Workload
from whatif.roofline.forward_pass import launch_queue_time
from whatif.roofline.attention_sync import attention_sync_points
from whatif.scenario import Scenario
from whatif.specs.op_kinds import ATTENTION_CLASSES

SYNC = "tidaldecode-bench"
FP16 = Precision("fp16", "fp16", "fp16")


def run(engine: str, prompt: int):
    sc = Scenario(model="llama-2-7b", hardware="a100-sxm-80gb", precision=FP16, kernel_engine=engine,
                  workload=Workload(batch=1, prompt=prompt, output=64))
    return sc.run()


def test_profile_reads_the_sync_from_source_and_keeps_the_eager_host_cost():
    e, hf = engine_spec(SYNC), engine_spec("hf-transformers")
    assert e.sync_around_attention and not hf.sync_around_attention
    assert e.eager_launch_s == hf.eager_launch_s and e.graph_sizes == ()
    assert "TDAttention.forward" in e.sources["kernels.sync_around_attention"]


def test_long_context_attention_adds_to_the_launches_instead_of_hiding_under_them():
    synced, eager = run(SYNC, 4000).decode, run("hf-transformers", 4000).decode
    attention_s = sum(t.time_s * t.op.count for t in synced.stages[0] if t.op.op_class in ATTENTION_CLASSES)
    # at batch 1 the eager step is launch-bound: the attention hides under the host's launches ...
    assert eager.launch_s > eager.gpu_s and eager.time_s < eager.launch_s + 0.2 * attention_s
    # ... until each attention call is fenced: most of its time then adds to the launches
    assert synced.time_s > synced.launch_s + 0.8 * attention_s


def test_sync_points_are_each_attention_op_and_the_op_after_it():
    step = run(SYNC, 1024).decode
    times = step.stages[0]
    marks = attention_sync_points(times)
    attention = [t for t in times if t.op.op_class in ATTENTION_CLASSES]
    assert attention and all(id(t.op) in marks for t in attention)
    assert len(marks) <= 2 * len(attention)
    plain = launch_queue_time(times, 100e-6, 0.0)
    fenced = launch_queue_time(times, 100e-6, 0.0, sync_before=lambda op: id(op) in marks)
    assert fenced > plain
