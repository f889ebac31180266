"""SGLang's DSA prefill on FlashMLA's sparse fp8 decode kernel (nsa_backend flashmla_kv): every prompt token a decode
row walking all index_topk slots of each 64-head group, at the kernel's documented ceiling, its rows read once a
sequence (kernel_models/mla_modules.flashmla_kv_prefill_part)."""
from pathlib import Path

import pytest

from whatif.roofline.kernel_models import mla_modules
from whatif.specs.hardware import load_component

H100 = load_component("h100-sxm", "gpu")
V32 = mla_modules.MlaDims(7168, 1536, 512, 128, 64, 128, 64, 128, 2048)
MODERN = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator" / "modern"


def test_only_sglangs_fp8_cache_prefill_off_blackwell_takes_the_decode_kernel():
    pick = mla_modules.sglang_flashmla_kv_prefill
    assert pick("sglang", "hopper", "prefill", None, "fp8")
    assert not pick("sglang", "hopper", "prefill", None, "bfloat16")   # flashmla_sparse, padded heads
    assert not pick("sglang", "blackwell", "prefill", None, "fp8")     # trtllm-gen
    assert not pick("sglang", "hopper", "prefill", None, "fp8", dense=True)
    assert not pick("sglang", "hopper", "decode", None, "fp8")        # topk_slots_part at the peak
    assert not pick("vllm", "hopper", "prefill", None, "fp8")
    assert pick("sglang", "hopper", "prefill", "sglang_dsa_indexer_flashmla_kv")
    assert pick("sglang", "hopper", "prefill", "sglang_dsa_skip_indexer_flashmla_kv")
    assert not pick("sglang", "hopper", "prefill", "sglang_dsa_indexer_flashmla_sparse", "fp8")
    assert not pick("sglang", "blackwell", "prefill", "sglang_dsa_indexer_trtllm", "fp8")


def test_its_work_is_every_slot_of_padded_head_groups_at_the_documented_ceiling_and_rows_read_once():
    c = mla_modules.ceilings(H100)
    kv = mla_modules.KV_BYTES["fp8"]

    def part(isl, past, heads):
        return mla_modules.flashmla_kv_prefill_part(2, isl, past, heads, V32, kv, c)
    slots = mla_modules.topk_slots_part(2, 1024, 0, 64, V32, kv, c)
    assert part(1024, 0, 64)[0] == pytest.approx(slots[0] / (410.0 / 989.0))
    # 2 visible keys cost what 2,048 do; 8 heads what 64 do; 65 heads two groups
    assert part(1024, 0, 8)[0] == part(1024, 65536, 64)[0] < part(1024, 0, 65)[0]
    # a sequence's gathered rows past L2 once (flashmla_sparse_read), not once a token and group
    once = mla_modules.flashmla_sparse_read(2, 4096, 8192, V32, kv, c)
    assert part(4096, 8192, 128)[1:] == once
    assert sum(once) < sum(mla_modules.topk_slots_part(2, 4096, 8192, 128, V32, kv, c)[1:]) / 100


def test_the_module_prices_hopper_fp8_prefill_with_it_and_nothing_else_with_it():
    c = mla_modules.ceilings(H100)
    kv = mla_modules.KV_BYTES["fp8"]
    parts, _ = mla_modules.dsa_module_work("prefill", 2, 4096, 8192, 16, V32, "fp8_block", "fp8", c, kv_prefill=True)
    assert parts[-1] == mla_modules.flashmla_kv_prefill_part(2, 4096, 8192, 16, V32, kv, c)
    fp8 = mla_modules.dsa_module_seconds("prefill", 2, 4096, 8192, 16, V32, H100, "sglang", "fp8_block", "fp8")
    bf16 = mla_modules.dsa_module_seconds("prefill", 2, 4096, 8192, 16, V32, H100, "sglang", "fp8_block", "bfloat16")
    assert fp8 != bf16 and fp8 > 0


@pytest.mark.slow
@pytest.mark.skipif(not MODERN.is_dir(), reason="needs ../shared/reference/aiconfigurator/modern")
def test_flashmla_kv_prefill_rows_fit_in_sample_under_20_percent():
    """Session 66 F: H100's flashmla_kv context rows read 28.7% (bf16 GEMMs) and 24.6% (fp8_block) in-sample with
    the sparse MLA priced per visible key at the bf16 peak; 15.0% and 14.9% with the decode kernel's own work."""
    from whatif.validate import modern_fit as mf
    from whatif.validate import modern_rows as mr
    rows = mr.all_rows(MODERN, ["sparse_attention__dsa_context_module_perf"])
    h100 = rows[(rows["engine"] == "sglang") & (rows["gpu"] == "h100_sxm")]
    p = mf.fit(h100)
    kv = h100[h100["kernel_source"].str.contains("flashmla_kv")]
    assert len(kv) > 20000
    assert mf.mape(kv, p) < 20.0


def test_vllm_runs_the_decode_kernel_for_an_fp8_cache_under_32_heads_only():
    """vLLM's FLASHMLA_SPARSE with an fp8 cache sends every token through FlashMLA's sparse fp8 decode kernel below
    MIN_HEADS_FOR_BF16_PREFILL (32) heads, the bf16 prefill kernel at or above it (flashmla_sparse.py
    fp8_use_mixed_batch); a bf16 cache, Blackwell's FLASHINFER_MLA_SPARSE and other engines never."""
    import numpy as np
    mixed = mla_modules.vllm_fp8_mixed_batch
    assert mixed("vllm", "hopper", "prefill", 16, "fp8") and not mixed("vllm", "hopper", "prefill", 32, "fp8")
    assert not mixed("vllm", "hopper", "prefill", 16, "bfloat16") and not mixed("vllm", "hopper", "decode", 16, "fp8")
    assert not mixed("sglang", "hopper", "prefill", 16, "fp8")
    assert not mixed("vllm", "blackwell", "prefill", 16, "fp8", "FLASHINFER_MLA_SPARSE")
    assert list(mixed("vllm", "hopper", "prefill", np.array([1, 16, 32, 128]), "fp8", "FLASHMLA_SPARSE")) == \
        [True, True, False, False]


def test_a_column_of_heads_takes_the_decode_kernel_row_by_row():
    """dsa_module_work with a kv_prefill column prices the mixed-batch rows as flashmla_kv_prefill_part and the rest
    as the padded sparse prefill kernel, row by row; vLLM's module prices 16 heads of an fp8 cache with it."""
    import numpy as np
    c = mla_modules.ceilings(H100)
    kv = mla_modules.KV_BYTES["fp8"]
    heads = np.array([16, 64])
    mixed = mla_modules.vllm_fp8_mixed_batch("vllm", "hopper", "prefill", heads, "fp8")
    parts, _ = mla_modules.dsa_module_work("prefill", 2, 4096, 0, heads, V32, "bfloat16", "fp8", c, head_pad=64,
                                           kv_prefill=mixed)
    decode = mla_modules.flashmla_kv_prefill_part(2, 4096, 0, 16, V32, kv, c)
    sparse = mla_modules.sparse_prefill_part(2, 4096, 0, 64, V32, kv, c, 64)
    assert parts[-1][0][0] == pytest.approx(decode[0])
    assert parts[-1][0][1] == pytest.approx(sparse[0])
    s16 = mla_modules.dsa_module_seconds("prefill", 2, 4096, 0, 16, V32, H100, "vllm", "bfloat16", "fp8")
    b16 = mla_modules.dsa_module_seconds("prefill", 2, 4096, 0, 16, V32, H100, "vllm", "bfloat16", "bfloat16")
    assert s16 != b16 and s16 > 0
