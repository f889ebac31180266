"""CacheGen chunks a context's KV by tokens (each chunk holds every layer), so the query's prefill cannot start
before the last chunk has arrived: the stream is in line with the pass's kernels, not hidden beside them."""
import pytest

from whatif.roofline.estimate import Workload
from whatif.roofline.ops import OpClass, is_overlapped
from whatif.scenario import Scenario


def prefill_pass(techniques):
    est = Scenario(model="mistral-7b", hardware="a100-sxm-80gb", workload=Workload(1, 8192, 1),
                   techniques=tuple(techniques)).run(with_max_batch=False)
    (p, _n), = est.prefill
    return p


@pytest.mark.parametrize("spec", ["cachegen", "cachegen:bits=8,codec=none"])
def test_query_prefill_waits_for_the_whole_stream(spec):
    p = prefill_pass([spec])
    stream = next(t for t in p.op_times if t.op.name == "cachegen_kv_stream")
    kernels = sum(t.total_s for t in p.op_times if t.op.op_class != OpClass.TRANSFER)
    assert not is_overlapped(stream.op)
    assert p.gpu_s >= stream.total_s + kernels - 1e-9     # in sequence, not max(stream, kernels)


def test_a_faster_link_still_pays_the_query_prefill():
    slow, fast = prefill_pass(["cachegen"]), prefill_pass(["cachegen:bandwidth=3000"])
    kernels = sum(t.total_s for t in fast.op_times if t.op.op_class != OpClass.TRANSFER)
    assert fast.gpu_s < slow.gpu_s and fast.gpu_s >= kernels
