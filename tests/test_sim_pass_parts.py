"""The step pricer's pass prices from parts (roofline/step_price/parts.py) equal roofline's whole-pass figures:
bit for bit under CUDA graphs (summed in the same order), to float rounding in eager mode (the launch
queue in closed form), for dense and MoE models, tensor and pipeline parallelism, with and without an
engine spec."""
from __future__ import annotations

import random

import pytest

from whatif.roofline.config import ForwardBatch, Parallelism, Precision
from whatif.roofline.forward_pass import engine_step, time_pass
from whatif.roofline.pass_setup import pass_setup
from whatif.scenario import Scenario
from whatif.roofline.step_price.parts import PassParts, splittable


def setup_of(sc: Scenario, engine: bool = True):
    model, system, par, eff = sc.resolve()
    return pass_setup(model, system, par, sc.precision, eff, sc.utilization(), sc.technique_set(), sc.placement(),
                      engine_spec=sc.engine_spec() if engine else None)


def batches(seed: int, n: int) -> list[tuple]:
    """Random decode groups and prefill chunks, as the scheduler forms them."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        groups = [(1, rng.randint(1, 6000), rng.randint(1, 256))] if rng.random() < 0.8 else []
        groups += [(rng.randint(1, 2048), rng.choice([0, rng.randint(1, 4000)]), 1) for _ in range(rng.randint(0, 3))]
        out.append(tuple(groups) or ((rng.randint(1, 64), 0, 1),))
    return out


SCENARIOS = [Scenario(), Scenario(hardware="dgx-h100", parallel=Parallelism(tp=2)),
             Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2)),
             Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=4)),
             # TensorRT engines: RoPE and KV append inside attention, fp8 GEMM inputs quantized by their producers
             Scenario(hardware="dgx-h100", parallel=Parallelism(tp=2), precision=Precision("fp8", "fp8", "fp8"),
                      kernel_engine="trtllm-engine"),
             # precision per module class: fp8-block layers, W4A16 experts, 16-bit attention projections
             Scenario(model="mixtral-8x7b", hardware="dgx-h100", parallel=Parallelism(tp=2),
                      precision=Precision("fp8", "fp8", "bf16", quantization="fp8-block", expert_quantization="w4a16",
                                          modules={"attention": "none"}))]


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda s: f"{s.model}-{s.parallel}")
def test_parts_price_a_pass_as_time_pass_does(sc):
    setup = setup_of(sc)
    assert splittable(setup)
    parts = PassParts(setup)
    for groups in batches(1, 60):
        graphs = parts.time_s(groups, 0, True)
        assert graphs == time_pass(setup, ForwardBatch(groups), True).time_s       # the same sums, same order
        eager = parts.time_s(groups, 0, False)
        assert eager == pytest.approx(time_pass(setup, ForwardBatch(groups), False).time_s, rel=1e-12)
        for cuda_graphs in (True, False):
            assert parts.step_s(groups, 0, cuda_graphs) == pytest.approx(
                engine_step(setup, ForwardBatch(groups), cuda_graphs)[1], rel=1e-12)


def test_parts_without_an_engine_spec_and_with_verify_logits():
    setup = setup_of(Scenario(), engine=False)
    parts = PassParts(setup)
    for groups in batches(2, 30):
        logits = sum(q * n for q, _, n in groups)      # every new token needs logits (a verify pass)
        assert parts.step_s(groups, logits, True) == pytest.approx(
            engine_step(setup, ForwardBatch(groups, logits), True)[1], rel=1e-12)


def test_the_number_of_priced_parts_is_bounded_by_the_token_counts_seen():
    parts = PassParts(setup_of(Scenario()))
    for groups in batches(3, 200) + batches(3, 200):   # each batch twice
        parts.time_s(groups, 0, False)
    tokens = {sum(q * n for q, _, n in g) for g in batches(3, 200)}
    # (vLLM: counts above its capture sizes are priced by the graphless sibling, graphless_step.py)
    assert len(parts.bodies) + len(parts.graphless.bodies if parts.graphless else {}) == len(tokens)


def test_a_technique_that_does_not_declare_a_split_or_mla_is_priced_whole():
    assert splittable(setup_of(Scenario(techniques=("kivi",))))
    assert not splittable(setup_of(Scenario(techniques=("snapkv",))))   # evicts: attended tokens change
    assert not splittable(setup_of(Scenario(techniques=("kivi", "snapkv"))))
    assert not splittable(setup_of(Scenario(model="deepseek-v3", hardware="hgx-h200", parallel=Parallelism(tp=8))))


def splitting_techniques() -> list[str]:
    from whatif.roofline.techniques.registry import all_techniques
    return [name for name, cls in all_techniques().items() if cls.splits]


def test_a_technique_that_splits_changes_no_hook_that_moves_ops_between_parts():
    """Technique.splits: no placement, eviction, selection, sparse pairs, prefill units, decoding rounds."""
    from whatif.roofline.techniques.compose import overrides
    from whatif.roofline.techniques.registry import technique_class
    assert "kivi" in splitting_techniques()
    for name in splitting_techniques():
        cls = technique_class(name)
        t = cls()
        assert not (cls.evicts or cls.shares_prefix or cls.gathers or cls.decodes), name
        for hook in ("stored_tokens", "read_tokens", "pair_fraction", "prefill_units", "transform_placement"):
            assert not overrides(t, hook), (name, hook)


def grid() -> list[tuple]:
    """Decode batches over a grid of batch sizes and contexts (below, at and above KIVI's 16-bit residual),
    prefill chunks after a cached prefix, and mixed passes."""
    out = [((1, c, b),) for b in (1, 3, 64, 256) for c in (1, 50, 96, 97, 128, 1000, 8000)]
    out += [((q, c, 1),) for q in (17, 512, 2048) for c in (0, 95, 96, 4000)]
    out += [((1, c, b), (q, c2, 1)) for b in (1, 100) for c in (10, 3000) for q, c2 in ((2048, 0), (700, 300))]
    return out + batches(7, 20)


@pytest.mark.parametrize("name", splitting_techniques())
@pytest.mark.parametrize("sc", [Scenario(), Scenario(hardware="dgx-h100", parallel=Parallelism(pp=2)),
                                Scenario(model="llama-3.1-70b", hardware="dgx-h100", parallel=Parallelism(tp=4),
                                         precision=Precision("fp8", "fp8", "fp8"))],
                         ids=lambda s: f"{s.model}-{s.parallel}")
def test_a_technique_that_splits_is_priced_from_parts_as_whole(name, sc):
    """Every technique declaring Technique.splits: its passes and steps from parts equal the whole pass's
    (bit for bit under CUDA graphs, 1e-12 relative in eager mode, as the plain setups above), so declaring it
    on a technique whose rewrites break the split fails here."""
    from dataclasses import replace
    setup = setup_of(replace(sc, techniques=(name,)))
    assert splittable(setup)
    parts = PassParts(setup)
    for groups in grid():
        batch = ForwardBatch(groups)
        assert parts.time_s(groups, 0, True) == time_pass(setup, batch, True).time_s
        assert parts.time_s(groups, 0, False) == pytest.approx(time_pass(setup, batch, False).time_s, rel=1e-12)
        for cuda_graphs in (True, False):
            assert parts.step_s(groups, 0, cuda_graphs) == pytest.approx(
                engine_step(setup, batch, cuda_graphs)[1], rel=1e-12)


def test_attention_sums_equal_the_built_op():
    """attention_work (the sums the kernel model reads) is attention_op's op to the bit: same FLOPs, HBM
    bytes, class and every shape field kernel_timing reads."""
    from whatif.roofline.attention import attention_op
    from whatif.roofline.step_price.attention import attention_work
    setup = setup_of(Scenario())
    parts = PassParts(setup)
    parts.time_s(((64, 0, 1),), 0, True)
    old = next(iter(parts.bodies.values()))[0].attention[0]
    prec, sh = setup.precision, old.shape
    mixed = 0
    for groups in batches(4, 300):
        op = attention_op(groups, heads=int(sh.heads), kv_heads=int(sh.kv_heads), d_qk=int(sh.d_qk), d_v=int(sh.d_v),
                          act_bytes=prec.act_bytes, kv_bytes=prec.kv_bytes, kv_width=parts.kv_width, count=old.count,
                          dtype=old.dtype, role=old.role)
        # a mixed pass's op is its prefill and decode kernels (attention.mixed_op): each part is one kind's sums
        kinds = [tuple(g for g in groups if (g[0] > 16) == prefill) for prefill in (True, False)]
        pairs = list(zip(kinds, op.shape.parts)) if op.shape.parts else [(groups, op)]
        mixed += bool(op.shape.parts)
        for kind_groups, built in pairs:
            work = attention_work(kind_groups, old, prec.act_bytes, prec.kv_bytes, parts.kv_width)
            assert (work.op_class, work.flops, work.hbm_bytes) == (built.op_class, built.flops, built.hbm_bytes)
            assert work.dtype == built.dtype
            for name in ("pairs", "heads", "kv_heads", "d_qk", "d_v", "max_context", "sequences", "kv_bytes",
                         "queries", "kv_element_bytes"):
                assert getattr(work.shape, name) == getattr(built.shape, name), name
    assert mixed > 0


def test_an_engine_version_without_gqa_sharing_prices_the_rewritten_op():
    """An engine whose decode kernel reads the cache per query head (engine_ops rewrites the op) takes the
    built op's path."""
    sc = Scenario(kernel_engine="trtllm-0.6")
    setup = setup_of(sc)
    assert not setup.engine_spec.gqa_decode_shares_kv
    parts = PassParts(setup)
    for groups in batches(5, 20):
        assert parts.time_s(groups, 0, True) == time_pass(setup, ForwardBatch(groups), True).time_s


def test_launch_queue_lines_from_a_layers_first_repeat_are_all_its_repeats_lines():
    """queue_lines reads a GPU-bound layer's first repeat only; the envelope is the one from every repeat,
    for launch-bound and GPU-bound layers, with and without attention in a run."""
    from whatif.roofline.step_price.parts import queue_lines
    rng = random.Random(11)
    for _ in range(300):
        runs, seconds, attention, i = [], [], [], 0
        for _ in range(rng.randint(1, 4)):
            k, reps = rng.randint(1, 12), rng.choice([1, 2, 5, 32])
            for o in range(k):
                if rng.random() < 0.2:
                    attention.append(i + o)
                    seconds.append(None)
                else:
                    seconds.append(rng.uniform(0.0, 3e-5))
            runs.append((i, i + k, reps))
            i += k
        launch, gap = rng.choice([0.0, 2e-6, 8e-6, 3e-5]), rng.choice([0.0, 1e-6])
        assert queue_lines(runs, seconds, attention, launch, gap) == \
            queue_lines(runs, seconds, attention, launch, gap, every_repeat=True)


def test_the_check_fails_a_technique_whose_extra_ops_read_the_groups(monkeypatch):
    """MiKV's importance update scales with every cached token (extra_ops read the groups): declared as splitting,
    its parts miss the batch's context, so the equality above would fail (it is refused: splits is False)."""
    from whatif.roofline.techniques.kv_compression import MiKV
    assert not MiKV.splits
    monkeypatch.setattr(MiKV, "splits", True)
    setup = setup_of(Scenario(techniques=("mikv",)))
    parts = PassParts(setup)
    assert any(parts.time_s(g, 0, True) != pytest.approx(time_pass(setup, ForwardBatch(g), True).time_s, rel=1e-9)
               for g in grid())
