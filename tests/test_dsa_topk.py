"""SGLang's DSA top-k as its own part (whatif/roofline/kernel_models/dsa_topk.py, sgl-kernel topk.cu)."""
import pytest

from whatif.roofline.kernel_models import dsa_topk, mla_modules
from whatif.specs.hardware import load_component

V32 = mla_modules.MlaDims(7168, 1536, 512, 128, 64, 128, 64, 128, 2048)


@pytest.fixture(scope="module")
def h100():
    return mla_modules.ceilings(load_component("h100-sxm", "gpu"))


def test_long_row_keys_counts_only_rows_past_topk():
    assert dsa_topk.long_row_keys(2048, 0, 2048) == 0          # every row fits: the naive path reads no logit
    assert dsa_topk.long_row_keys(1, 4096, 2048) == 4097       # one decode row of 4,097 keys
    # a 4,096-token prompt: rows 2,049 .. 4,096 keys are read
    assert dsa_topk.long_row_keys(4096, 0, 2048) == sum(range(2049, 4097))


def test_long_rows_read_their_logits_twice(h100):
    short = dsa_topk.sglang_topk_part(1, 1, 1000, 2048, h100)
    long = dsa_topk.sglang_topk_part(1, 1, 100_000, 2048, h100)
    t = sum(long[1:]) - sum(short[1:])   # same rows, the long one's logit reads only
    rows_in_flight = min(1.0, 1 / (h100.sms * dsa_topk.ROWS_AN_SM))
    expected = 100_001 * dsa_topk.LOGIT_BYTES * dsa_topk.ROW_READS / h100.hbm_bw / rows_in_flight
    assert t == pytest.approx(expected, rel=1e-9)


def test_fewer_rows_than_sms_take_one_wave(h100):
    one = sum(dsa_topk.sglang_topk_part(1, 1, 50_000, 2048, h100)[1:])
    full = sum(dsa_topk.sglang_topk_part(h100.sms * dsa_topk.ROWS_AN_SM, 1, 50_000, 2048, h100)[1:])
    assert one == pytest.approx(full, rel=1e-9)   # one CTA a row, ROWS_AN_SM an SM: a lone row gets its share


def test_module_moves_topk_read_out_of_the_indexer(h100):
    base, _ = mla_modules.dsa_module_work("prefill", 1, 8192, 0, 16, V32, "fp8_block", "fp8", h100)
    own, _ = mla_modules.dsa_module_work("prefill", 1, 8192, 0, 16, V32, "fp8_block", "fp8", h100,
                                         sglang_topk=True)
    assert len(own) == len(base) + 1
    pairs = 8192 * 8193 / 2
    assert base[:-2] == own[:-3] and base[-1] == own[-1]   # the part sits between the scoring pass and attention
    gone = sum(base[-2][1:]) - sum(own[-3][1:])   # the indexer's one logit read, taken out
    assert gone == pytest.approx(pairs * 4.0 / h100.hbm_bw, rel=1e-9)
    assert own[-2] == dsa_topk.sglang_topk_part(1, 8192, 0, 2048, h100)    # ... priced as two reads past 2,048


def test_only_sglangs_module_prices_its_topk(monkeypatch):
    h = load_component("h100-sxm", "gpu")
    calls = []
    real = mla_modules.sglang_topk_part
    monkeypatch.setattr(mla_modules, "sglang_topk_part", lambda *a: calls.append(a) or real(*a))
    mla_modules.dsa_module_seconds("prefill", 1, 16384, 0, 16, V32, h, engine="sglang")
    assert len(calls) == 1
    mla_modules.dsa_module_seconds("prefill", 1, 16384, 0, 16, V32, h, engine="trtllm")
    mla_modules.dsa_module_seconds("decode", 8, 1, 16384, 16, V32, h, engine="vllm")
    assert len(calls) == 1
