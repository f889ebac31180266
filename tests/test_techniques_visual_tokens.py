"""The multimodal front end (family E): a CLIP ViT-L/14-336 encoder producing LLaVA-1.5's image tokens,
and visual-token pruning at the language model's input."""
import pytest

from whatif.errors import WhatifError
from whatif.roofline.techniques.registry import parse_technique
from whatif.roofline.techniques.visual_tokens import PATCHES
from whatif.scenario import build_scenario


def run(techniques, prompt=640, output=16, prefill_chunk=0):
    workload = {"batch": 1, "prompt": prompt, "output": output, **({"prefill_chunk": prefill_chunk} if prefill_chunk
                                                                    else {})}
    return build_scenario({"model": "vicuna-7b", "hardware": "a100-sxm-80gb", "techniques": techniques},
                          {"workload": workload}).run()


def ops(e, prefix):
    return [t for p, n in e.prefill for t in p.op_times for _ in range(n) if t.op.name.startswith(prefix)]


def test_image_tokens_come_from_the_encoder_config():
    assert PATCHES == 576                      # (336 / 14)^2, LLaVA-1.5's image tokens
    p = parse_technique("visual_token_pruning:prompt=640")
    assert p.positions(640) == 640 - 288
    assert p.positions(100) == 50              # a prefix of the prompt holds only image tokens
    assert p.stored_tokens(640 + 10) == 352 + 10


def test_the_encoder_costs_once_per_request_and_changes_nothing_else():
    base, front = run([]), run(["vision_encoder"])
    assert front.ttft_s > base.ttft_s
    assert front.tpot_s == pytest.approx(base.tpot_s)
    assert front.memory.kv_cache_bytes == base.memory.kv_cache_bytes
    vit = [t for t in ops(front, "vision_") if t.op.name in ("vision_qkv_out", "vision_ffn")]
    # 2 x (4 d^2 + 8 d^2) FLOPs per ViT token per layer, d = 1024, 577 tokens (patches + CLS), 24 layers
    assert sum(t.op.flops * t.op.count for t in vit) == pytest.approx(577 * 2 * 12 * 1024 ** 2 * 24, rel=1e-6)
    # chunked prefill pays the same encoder in all
    chunked = run(["vision_encoder"], prefill_chunk=256)
    assert sum(t.op.flops * t.op.count for t in ops(chunked, "vision_")) == pytest.approx(
        sum(t.op.flops * t.op.count for t in ops(front, "vision_")), rel=0.02)


def test_a_speculative_verify_pass_does_not_run_the_encoder_again():
    # a draft tree's verify pass has more new tokens than a decode step but no prompt positions
    for spec in ("eagle", "medusa"):
        alone, front = run([spec]), run(["vision_encoder", spec])
        assert front.tpot_s == pytest.approx(alone.tpot_s)
        assert front.ttft_s > alone.ttft_s


def test_pruning_shrinks_prefill_and_cache_but_not_the_encoder():
    front, pruned = run(["vision_encoder"]), run(["visual_token_pruning"])
    assert front.memory.kv_cache_bytes / pruned.memory.kv_cache_bytes == pytest.approx((640 + 16) / (352 + 16),
                                                                                      rel=0.01)
    assert pruned.ttft_s < front.ttft_s
    encoder = [sum(t.total_s for t in ops(e, "vision_")) for e in (front, pruned)]
    assert encoder[1] == pytest.approx(encoder[0])
    without_selector = run(["visual_token_pruning:selector=false"])
    assert without_selector.ttft_s < pruned.ttft_s
    assert ops(pruned, "selector_") and not ops(without_selector, "selector_")


def test_front_ends_conflict_and_check_their_inputs():
    with pytest.raises(WhatifError, match="visual_token_pruning: cannot be combined with vision_encoder"):
        run(["vision_encoder", "visual_token_pruning"])
    with pytest.raises(WhatifError, match="visual_token_pruning:keep=0.0"):
        parse_technique("visual_token_pruning:keep=0")
    with pytest.raises(WhatifError, match="vision_encoder:images=0"):
        parse_technique("vision_encoder:images=0")
    with pytest.raises(WhatifError, match="vision_encoder: the prompt .* must hold"):
        run(["vision_encoder:images=2"], prompt=640)


def test_the_towers_attention_takes_the_encoder_fit_only_when_asked():
    """Off by default (no serving row checks a vision tower); on, vLLM's vision attention op costs what the
    encoder attention kernel fit says for its images of 577 patches, 16 heads of 64."""
    from whatif.roofline.kernel_models.encoder_attention import encoder_attention_seconds
    from whatif.specs.hardware import load_component

    def tower(technique):
        e = build_scenario({"model": "vicuna-7b", "hardware": "h100-sxm", "techniques": [technique]},
                           {"workload": {"batch": 1, "prompt": 640, "output": 16}}).run()
        return e, [t for p, _ in e.prefill for t in p.op_times if t.op.name.startswith("vision_attention")]
    base, plain = tower("vision_encoder")
    fitted, priced = tower("vision_encoder:attention_fit=true")
    assert all("encoder attention fit" not in t.op.formula for t in plain)
    assert priced and all("encoder attention fit" in t.op.formula for t in priced)
    images = priced[0].op.shape.sequences
    assert priced[0].time_s == pytest.approx(encoder_attention_seconds(images, 577, 16, 64,
                                                                       load_component("h100-sxm", "gpu"), "vllm"))
    assert fitted.ttft_s != base.ttft_s and fitted.tpot_s == pytest.approx(base.tpot_s)


def test_kimi_k25_runs_its_own_moonvit_tower():
    """Session 70 H: a model whose profile gives its tower's shape (Kimi-K2.5: MoonViT, 27 blocks of 1152, 16 heads
    of 72, 2x2 patch merger) runs that tower: image_tokens x 4 patches an image, no class token; with attention_fit
    its attention costs what the encoder attention fit says (head 72 is in the measured tables)."""
    from whatif.roofline.kernel_models.encoder_attention import encoder_attention_seconds
    from whatif.specs.hardware import load_component

    def tower(technique):
        e = build_scenario({"model": "kimi-k2.5", "hardware": "b200", "gpus": 8, "kernel_engine": "vllm",
                            "techniques": [technique]},
                           {"workload": {"batch": 1, "prompt": 2048, "output": 16}, "parallel": {"tp": 8}}).run()
        return e, [t for p, _ in e.prefill for t in p.op_times if t.op.name.startswith("vision")]
    base = build_scenario({"model": "kimi-k2.5", "hardware": "b200", "gpus": 8, "kernel_engine": "vllm"},
                          {"workload": {"batch": 1, "prompt": 2048, "output": 16}, "parallel": {"tp": 8}}).run()
    plain, ops = tower("vision_encoder:image_tokens=1024")
    attn = next(t.op for t in ops if "attention" in t.op.name)
    assert (attn.shape.max_context, attn.shape.heads, attn.shape.d_qk) == (4096, 16, 72)
    assert ops[0].op.name == "vision_patch_embed"
    fitted, priced = tower("vision_encoder:image_tokens=1024,attention_fit=true")
    t = next(t for t in priced if t.op.name.endswith("fitted"))
    assert t.time_s == pytest.approx(encoder_attention_seconds(1, 4096, 16, 72, load_component("b200", "gpu"),
                                                               "vllm"))
    assert base.ttft_s < plain.ttft_s and plain.ttft_s != fitted.ttft_s
    clip = build_scenario({"model": "vicuna-7b", "hardware": "h100-sxm", "techniques": ["vision_encoder"]},
                          {"workload": {"batch": 1, "prompt": 640, "output": 16}}).run()
    shapes = [t.op.shape for p, _ in clip.prefill for t in p.op_times if t.op.name == "vision_attention"]
    assert shapes and shapes[0].max_context == 577 and shapes[0].d_qk == 64     # CLIP unchanged: 576 + CLS


def test_a_prompt_other_than_the_workloads_is_refused():
    # session 70 DD: vision_encoder:prompt=100000000 under a 640-token workload priced ~0 of the tower, silently
    with pytest.raises(WhatifError, match=r"vision_encoder:prompt=100000000: differs from the workload's prompt "
                                          r"\(640 tokens\); valid: omit it, or 640"):
        run(["vision_encoder:prompt=100000000"])
    assert run(["vision_encoder:prompt=640"]).ttft_s == pytest.approx(run(["vision_encoder"]).ttft_s)
