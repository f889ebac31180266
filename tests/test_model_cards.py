"""Each new shipped profile's parameter count and KV bytes per token against its model card (the figure is quoted
in the profile's comment). KV per token is what a long sequence adds per token over the whole model in bf16 (full
attention layers; sliding and chunked layers stop growing, recurrent layers keep a constant state)."""
import pytest

from whatif.specs.models import load_model

B = 1e9
# profile: (card total, which count the card gives, card active or None, tolerance, KV B/token in bf16)
# "total": all decoder parameters; "no-embedding": the card's active figure leaves out the input embedding
# (gpt-oss counts the unembedding only); "non-embedding": both embedding tables left out (MiniMax, Qwen3-Next).
CARDS = {
    "gpt-oss-120b": (116.83 * B, 5.13 * B, "no-embedding", 0.005, 36_864),
    "gpt-oss-20b": (20.91 * B, 3.61 * B, "no-embedding", 0.005, 24_576),
    "qwen3-8b": (8.2 * B, None, "total", 0.01, 147_456),
    "qwen3-14b": (14.8 * B, None, "total", 0.01, 163_840),
    "qwen3-32b": (32.8 * B, None, "total", 0.01, 262_144),
    "qwen3-30b-a3b": (30.5 * B, 3.3 * B, "total", 0.02, 98_304),
    "qwen3-235b-a22b": (235 * B, 22 * B, "total", 0.01, 192_512),
    "minimax-m2.5": (229 * B, 10 * B, "non-embedding", 0.02, 253_952),
    "qwen3.5-397b-a17b": (397 * B, 17 * B, "with-encoder", 0.02, 30_720),
    "qwen3.5-27b": (27 * B, None, "with-encoder", 0.02, 65_536),
    "qwen3.5-35b-a3b": (35 * B, 3 * B, "with-encoder", 0.05, 20_480),
    "glm-5": (744 * B, 40 * B, "non-embedding", 0.02, 89_856 + 10_296),
    "deepseek-v3.2": (671 * B, 37 * B, "no-embedding", 0.02, 70_272 + 8_052),
    "kimi-k2": (1000 * B, 32 * B, "total", 0.03, 70_272),
    "kimi-k2.5": (1000 * B, 32 * B, "total", 0.03, 70_272),
    "llama-4-scout": (109 * B, 17 * B, "total", 0.02, 49_152),
    "llama-4-maverick": (400 * B, 17 * B, "total", 0.02, 49_152),
    "mixtral-8x22b": (141 * B, 39 * B, "total", 0.01, 229_376),
    "mixtral-8x22b-instruct": (141 * B, 39 * B, "total", 0.01, 229_376),
    "qwen3-235b-a22b-thinking-2507": (235 * B, 22 * B, "total", 0.01, 192_512),
    "qwen3-30b-a3b-thinking-2507": (30.5 * B, 3.3 * B, "total", 0.02, 98_304),   # qwen3-30b-a3b's card
    "nemotron-h-56b": (56 * B, None, "total", 0.01, 40_960),
    "nemotron-h-8b": (8 * B, None, "total", 0.02, 16_384),       # "8B" (Megatron-Bridge docs; no exact count read)
    "mistral-7b-v0.3": (7.248023552 * B, None, "total", 1e-9, 131_072),   # keras-hub mistral_0.3_7b_en count
    "nemotron-3-nano-30b-a3b": (31.6 * B, 3.6 * B, "total", 0.01, 6_144),
    "qwen3-next-80b-a3b": (80 * B, 3 * B, "non-embedding", 0.02, 24_576),
    "gemma-3-27b": (27 * B, None, "total", 0.02, 81_920),
    "gemma-2-9b": (9.241705984 * B, None, "total", 1e-6, 172_032),   # keras-hub's gemma2_9b_en count
    "gemma-3-12b": (11.765788416 * B, None, "total", 2e-5, 65_536),   # keras-hub's gemma3_12b_text count (profile)
    "gemma-2-2b": (2.614341888 * B, None, "total", 1e-9, 53_248),   # keras-hub's gemma2_instruct_2b_en count
    "gemma-3-1b": (0.999885952 * B, None, "total", 2e-5, 4_096),   # keras-hub's gemma3_instruct_1b (less q/k norms)
    "gemma-2-27b": (27.22712832 * B, None, "total", 1e-9, 188_416),   # keras-hub's gemma2_27b_en count
    # the checkpoint's tensor count (gogongxt/python report) less FP8 scales, router bias and q/k norms
    "minimax-m2.7": (228.689304576 * B, None, "total", 1e-9, 253_952),
    "glm-4.5": (355 * B, 32 * B, "non-embedding", 0.05, 376_832),
    "kimi-k2-thinking": (1000 * B, 32 * B, "total", 0.03, 70_272),
    "glm-4.7": (358 * B, 32 * B, "non-embedding", 0.05, 376_832),   # 358B with the MTP layer (not counted)
    # "30B-A3B" (basis unstated): ours 29.94B; active 3.26B without the embedding and head (3.90B with them)
    "glm-4.7-flash": (30 * B, 3 * B, "non-embedding", 0.01, 54_144),
    # "30.7B" (the decoder; the ~550M vision encoder apart); global layers 4 KV heads of 512, K and V both cached
    "gemma-4-31b": (30.7 * B, None, "total", 0.002, 81_920),
    # GLM-5's card (its architecture; GLM-5.2's own card not read); the indexer keys on 21 layers of 78 (IndexShare)
    "glm-5.2": (744 * B, 40 * B, "non-embedding", 0.02, 89_856 + 2_772),
    # "48B-A3B" (the release's name; the card page not read): ours 49.12B = the checkpoint's tensors less router bias;
    # only the 7 MLA layers grow (576 latents each), the 20 KDA layers keep a constant state
    "kimi-linear-48b-a3b": (48 * B, 3 * B, "total", 0.03, 7 * 576 * 2),
}


def kv_growth(m) -> float:
    long = 1 << 20
    return m.sequence_cache_bytes(long + 1, 2) - m.sequence_cache_bytes(long, 2)


@pytest.mark.parametrize("name", sorted(CARDS))
def test_profile_matches_its_model_card(name):
    total, active, basis, tol, kv = CARDS[name]
    m = load_model(name)
    embed, head = m.vocab_size * m.hidden_size, m.lm_head_params()
    ours_total = m.total_params() + (m.encoder_params() if basis == "with-encoder" else 0)
    assert ours_total == pytest.approx(total, rel=tol)
    if active is not None:
        ours = m.active_params_per_token()
        ours -= {"no-embedding": embed, "non-embedding": embed + head}.get(basis, 0)
        assert ours == pytest.approx(active, abs=rounding(active) + tol * active)
    assert kv_growth(m) == pytest.approx(kv, rel=1e-9)


def rounding(figure: float) -> float:
    """Half a unit of a card figure's last digit (cards round active counts: '17B', '3B', '5.13B')."""
    text = f"{figure / B:g}"
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10 ** -decimals * B


def test_the_profile_comment_quotes_the_card():
    from whatif.specs.profiles import MODEL_DIR
    for name in CARDS:
        head = (MODEL_DIR / f"{name}.yaml").read_text().split("\nname:")[0]
        assert "card" in head.lower(), name
