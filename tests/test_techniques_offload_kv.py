"""Family I, KV side (sentencekv, fastswitch, instinfer, lamina): mechanisms that can fail."""
import pytest

from whatif.claims.claim import evaluate
from whatif.claims.family_i_kv import CLAIMS
from whatif.errors import WhatifError
from whatif.roofline.estimate import Workload
from whatif.roofline.techniques.registry import parse_technique
from whatif.scenario import Scenario


WORKLOAD = Workload(8, 2048, 256)


def run(techniques=(), model="llama-3.1-8b", hardware="h100-sxm", workload=WORKLOAD, max_batch=False, **kw):
    return Scenario(model=model, hardware=hardware, workload=workload, techniques=tuple(techniques), **kw).run(
        with_max_batch=max_batch)


def decode_op(e, name):
    (t,) = [t for t in e.decode.op_times if t.op.name == name]
    return t


def link_bytes(t):
    return sum(v for k, v in t.op.bytes.items() if k[:4] in ("h2d:", "d2h:"))


def transfer_s(e, prefix):
    return sum(t.total_s for t in e.decode.op_times if t.op.name.startswith(prefix))


# ---------------------------------------------------------------- sentencekv
def test_sentencekv_fetch_scales_with_the_sentence_budget_not_the_context():
    short = run(["sentencekv"], workload=Workload(1, 8192, 64))
    long = run(["sentencekv"], workload=Workload(1, 32768, 64))
    half = run(["sentencekv:sentence_budget=20"], workload=Workload(1, 32768, 64))
    f_short, f_long, f_half = (decode_op(e, "sentencekv_kv_fetch") for e in (short, long, half))
    assert link_bytes(f_long) == pytest.approx(link_bytes(f_short))
    assert link_bytes(f_half) == pytest.approx(link_bytes(f_long) / 2, rel=0.03)
    # one block per sentence fetched; the scoring (one vector per sentence) is what grows with the context
    assert f_long.op.shape.blocks == 40 and f_half.op.shape.blocks == 20
    s_short, s_long = (decode_op(e, "sentencekv_sentence_scores") for e in (short, long))
    assert s_long.op.hbm_bytes > 3.5 * s_short.op.hbm_bytes
    assert long.tpot_s < 1.1 * short.tpot_s


def test_sentencekv_frees_hbm_and_costs_host_link_time():
    wl = Workload(4, 32768, 256)
    base, skv = run([], workload=wl), run(["sentencekv"], workload=wl)
    assert skv.memory.kv_cache_bytes < base.memory.kv_cache_bytes / 10
    more = run(["sentencekv"], workload=wl, max_batch=True).max_batch
    assert more > 5 * run([], workload=wl, max_batch=True).max_batch
    # the fetch crosses the host link: a slower link makes decode slower
    slow = run(["sentencekv"], workload=wl, host_link="pcie-gen4-x16")
    assert slow.tpot_s > skv.tpot_s
    assert link_bytes(decode_op(slow, "sentencekv_kv_fetch")) == pytest.approx(
        link_bytes(decode_op(skv, "sentencekv_kv_fetch")))


# ---------------------------------------------------------------- fastswitch
def test_fastswitch_larger_blocks_swap_faster_and_overlap_is_never_slower():
    times = [transfer_s(run([f"fastswitch:block_tokens={b},overlap=false"]), "fastswitch_swap")
             for b in (16, 64, 256, 1024)]
    assert times == sorted(times, reverse=True) and times[0] > 1.5 * times[-1]
    for spec in ("block_tokens=16", "block_tokens=256", "block_tokens=16,preemptions_per_step=0.5"):
        on, off = run([f"fastswitch:{spec}"]), run([f"fastswitch:{spec},overlap=false"])
        assert on.tpot_s <= off.tpot_s * (1 + 1e-9)
    base = run([])
    assert run(["fastswitch:preemptions_per_step=0"]).tpot_s == pytest.approx(base.tpot_s)
    vllm = run(["fastswitch:block_tokens=16,overlap=false"])
    assert vllm.tpot_s > base.tpot_s and vllm.ttft_s == pytest.approx(base.ttft_s)


def test_fastswitch_swaps_both_ways_and_scale_with_the_rate():
    one, two = run(["fastswitch:preemptions_per_step=0.1"]), run(["fastswitch:preemptions_per_step=0.2"])
    out, back = decode_op(one, "fastswitch_swap_out"), decode_op(one, "fastswitch_swap_in")
    assert next(iter(out.op.bytes)).startswith("d2h:") and next(iter(back.op.bytes)).startswith("h2d:")
    assert link_bytes(decode_op(two, "fastswitch_swap_out")) == pytest.approx(2 * link_bytes(out))


# ---------------------------------------------------------------- instinfer
CSD = {"model": "llama-2-13b", "hardware": "rtx-a6000-csd", "workload": Workload(16, 1024, 256)}


def test_instinfer_decodes_faster_than_streaming_the_kv_from_the_ssd():
    inst, flexgen = run(["instinfer"], **CSD), run(["instinfer:in_storage=false"], **CSD)
    assert inst.tpot_s < flexgen.tpot_s
    # the streamed baseline is the shared placement model: the same as --place kv=nvme:1
    placed = Scenario(model="llama-2-13b", hardware="rtx-a6000-csd", workload=CSD["workload"],
                      place=("kv=nvme:1",)).run(with_max_batch=False)
    assert flexgen.tpot_s == pytest.approx(placed.tpot_s)
    faster = run(["instinfer:internal_bandwidth=22.4"], **CSD)
    sparse = run(["instinfer:read_share=0.125"], **CSD)
    assert sparse.tpot_s < faster.tpot_s < inst.tpot_s


def test_instinfer_pcie_carries_only_queries_new_kv_and_outputs():
    short = run(["instinfer"], **CSD)
    long = run(["instinfer"], **{**CSD, "workload": Workload(16, 3072, 256)})
    model = Scenario(model="llama-2-13b").resolve()[0]
    per_token = model.num_heads * model.head_dim * 2 * 2 + 2 * model.num_kv_heads * model.head_dim * 2  # q, o, k, v
    for e in (short, long):
        p2p = [t for t in e.decode.op_times if t.op.name in ("instinfer_send_q_kv", "instinfer_recv_output")]
        assert sum(link_bytes(t) for t in p2p) == pytest.approx(16 * per_token)
        assert not [t for t in e.decode.op_times if t.op.op_class == "attention_decode"]
        assert not [t for t in e.decode.op_times if t.op.name.startswith("kv_fetch")]
    assert link_bytes(decode_op(long, "instinfer_attention")) > 2 * link_bytes(decode_op(short, "instinfer_attention"))


def test_instinfer_holds_no_kv_in_hbm_and_checks_the_drive():
    inst = run(["instinfer"], max_batch=True, **CSD)
    base = run([], max_batch=True, **CSD)
    hbm = inst.memory.budgets[0]
    assert hbm.name == "hbm" and hbm.kv_share == 0
    assert inst.memory.tiers["instinfer-csd"] == pytest.approx(inst.memory.kv_cache_bytes)
    assert inst.max_batch > 10 * base.max_batch
    with pytest.raises(WhatifError, match="kv=nvme"):
        run(["instinfer"])   # a bare GPU has no drive to hold the KV


# ---------------------------------------------------------------- lamina
LAMINA = {"model": "llama-2-13b", "hardware": "h100-lamina", "workload": Workload(8, 2048, 512), "price_per_hour": 3.0}


def test_lamina_moves_the_kv_off_the_gpu_and_raises_the_batch():
    base, lam = run([], max_batch=True, **LAMINA), run(["lamina"], max_batch=True, **LAMINA)
    assert lam.memory.budgets[0].kv_share == 0
    assert lam.memory.tiers["hbm"] < base.memory.tiers["hbm"] - 0.9 * base.memory.kv_cache_bytes
    assert lam.max_batch > 2 * base.max_batch
    assert not [t for t in lam.decode.op_times if t.op.op_class == "attention_decode"]
    # the pool's capacity bounds the batch: twice the devices, about twice the sequences
    one = Scenario(model="llama-2-13b", workload=LAMINA["workload"], techniques=("lamina:attention_devices=1",),
                   add_tiers=("h20-hbm3-96gb:1",)).run()
    two = Scenario(model="llama-2-13b", workload=LAMINA["workload"], techniques=("lamina",),
                   add_tiers=("h20-hbm3-96gb:2",)).run()
    assert two.max_batch == pytest.approx(2 * one.max_batch, rel=0.02)


def test_lamina_cost_includes_the_devices():
    lam = run(["lamina:device_price=1.5"], max_batch=True, **LAMINA)
    assert lam.price.usd_per_hour == pytest.approx(3.0 + 2 * 1.5)
    cheap = run(["lamina:device_price=0"], max_batch=True, **LAMINA)
    assert lam.max_batch_cost_per_mtok == pytest.approx(cheap.max_batch_cost_per_mtok * 6.0 / 3.0)


def test_lamina_faster_network_and_devices_lower_tpot():
    tpot = [run([f"lamina:network_bandwidth={g}"], **LAMINA).tpot_s for g in (25, 100, 400)]
    assert tpot == sorted(tpot, reverse=True) and tpot[0] > tpot[-1]
    assert run(["lamina:network_latency=50"], **LAMINA).tpot_s > run(["lamina"], **LAMINA).tpot_s
    assert run(["lamina:device_bandwidth=8000"], **LAMINA).tpot_s < run(["lamina"], **LAMINA).tpot_s


# ---------------------------------------------------------------- errors and claims
@pytest.mark.parametrize("spec, key", [
    ("sentencekv:sentence_budget=0", "sentence_budget"), ("sentencekv:sentence_tokens=0.5", "sentence_tokens"),
    ("sentencekv:sink=-1", "sink"), ("fastswitch:block_tokens=0", "block_tokens"),
    ("fastswitch:preemptions_per_step=1.5", "preemptions_per_step"), ("instinfer:drives=0", "drives"),
    ("instinfer:internal_bandwidth=0", "internal_bandwidth"), ("instinfer:read_share=0", "read_share"),
    ("instinfer:in_storage=false,read_share=0.5", "read_share"), ("lamina:attention_devices=0", "attention_devices"),
    ("lamina:network_bandwidth=0", "network_bandwidth"), ("lamina:device_price=-1", "device_price"),
])
def test_parameter_errors_name_the_key(spec, key):
    with pytest.raises(WhatifError, match=f"{spec.partition(':')[0]}:{key}="):
        parse_technique(spec)


def test_lamina_and_instinfer_cannot_share_the_kv_placement():
    with pytest.raises(WhatifError, match="cannot be combined"):
        run(["lamina", "instinfer"], **LAMINA)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.technique}-{c.metric}")
def test_claims_run_and_banded_ones_hold(claim):
    out = evaluate(claim)
    assert out.gain > 0
    if claim.band:
        assert out.in_band, (claim.paper, out.gain)
