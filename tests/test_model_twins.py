"""benchmarks/model_twins.py: load bands, the run a row records, and twins (the same measurement under two model
names) on made-up rows (the committed table is not read here)."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

mt = load_benchmark("model_twins")


def test_bands_cover_every_client_count_and_reject_none():
    assert [mt.band_of(c) for c in (1, 4, 5, 16, 17, 64, 65, 512)] == \
        ["1-4", "1-4", "5-16", "5-16", "17-64", "17-64", "65+", "65+"]
    with pytest.raises(ValueError, match="concurrency"):
        mt.band_of(0)


def test_the_run_is_the_release_and_the_measurement_day():
    src = "db-dump/2026-04-27; config_id=177; silicon_concurrency=64; measured=2025-12-15T00:00:00.000Z"
    assert mt.image_and_date(src, "1.1.0rc2.post2") == "1.1.0rc2.post2 2025-12-15"
    assert mt.image_and_date("measured=2025-11-02T00:00:00.000Z", float("nan")) == "unversioned 2025-11-02"
    assert mt.image_and_date("", None) == "unversioned ?"


def _row(rid, model, ttft, predicted, version="1.2.0rc6.post2"):
    return {"id": rid, "model": model, "engine": "trtllm", "system": "b200_sxm", "mode": "agg", "isl": 1024,
            "osl": 1024, "concurrency": 4.0, "tp": 8, "attention_dp": 1, "ep": 1, "gemm_quant": "nvfp4",
            "measured_ttft_ms": ttft, "measured_tpot_ms": 7.0, "predicted_ttft_ms": predicted, "version": version}


def test_twins_are_the_same_measurement_under_another_name_only():
    frame = pd.DataFrame([_row("a", "deepseek-ai/DeepSeek-V3", 159.0, 50.0),
                          _row("b", "deepseek-ai/DeepSeek-R1", 159.0, 50.0),
                          _row("c", "deepseek-ai/DeepSeek-R1", 159.0, 50.0),     # R1's own copy: not a twin of b
                          _row("d", "deepseek-ai/DeepSeek-R1", 210.0, 59.0, "1.2.0rc6.post3")])
    d = mt.annotate(frame, {"a": "measured=2026-01-29T00", "b": "measured=2026-01-29T00"})
    assert list(d["twin_in"]) == ["DeepSeek-R1", "DeepSeek-V3", "DeepSeek-V3", ""]
    assert d["ratio"].iloc[0] == pytest.approx(50.0 / 159.0)
    text = mt.summary(d)
    assert "1.2.0rc6.post3 ?" in text and "1.2.0rc6.post2 2026-01-29" in text
