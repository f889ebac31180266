"""benchmarks/first_token_parts.py: a request's front / wait / step parts sum to its client TTFT, and a row's
breakdown carries the measured and predicted TTFT of that row."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import first_token_parts as ftp  # noqa: E402
from whatif.simulator.request import Record, Request  # noqa: E402


class _Frontend:
    def seconds(self, prompt: int) -> float:
        return 0.004 + 1e-6 * prompt


def _record(sent_s, arrival_s, scheduled_s, first_s, prompt=1000):
    req = Request(0, arrival_s, prompt, 16).sent(sent_s, arrival_s) if sent_s is not None else \
        Request(0, arrival_s, prompt, 16)
    return Record(req, first_scheduled_s=scheduled_s, first_token_s=first_s)


def test_parts_sum_to_the_served_ttft_sent_or_not():
    for rec in (_record(1.000, 1.005, 1.050, 1.120), _record(None, 2.0, 2.030, 2.100)):
        parts = ftp.request_parts(rec, _Frontend())
        assert sum(parts.values()) == pytest.approx(rec.served_ttft_s(_Frontend()))
    parts = ftp.request_parts(_record(1.000, 1.005, 1.050, 1.120), _Frontend())
    assert parts["front"] == pytest.approx(0.005) and parts["wait"] == pytest.approx(0.045)
    assert parts["step"] == pytest.approx(0.070)
    assert ftp.request_parts(_record(None, 2.0, 2.030, 2.100), _Frontend())["front"] == pytest.approx(0.005)


def test_mean_parts_skips_requests_without_a_first_token():
    recs = [_record(None, 0.0, 0.010, 0.030), _record(None, 0.0, 0.020, 0.060), _record(None, 0.0, None, None)]
    means = ftp.mean_parts(recs, None)
    assert means == pytest.approx({"front": 0.0, "wait": 0.015, "step": 0.030})


@pytest.mark.slow
def test_one_row_breakdown_matches_the_committed_prediction():
    rows = ftp.selected("id == 'dsr1_b200_sglang_fp8_agg_1024x1024_c4_cfg87'", 1)
    assert len(rows) == 1
    rec = ftp.row_parts(rows[0])
    assert rec["measured"] == pytest.approx(183.180, abs=0.01)
    # session 73 K, M: SGLang's fused add + RMSNorm and fp8 as the checkpoint's 128x128 blocks (72 F2: 102.146;
    # 67 A: 102.330; 65 M: 100.133; 64 N: 110.142)
    assert rec["pred"] == pytest.approx(102.997, rel=1e-3)
    assert rec["front"] + rec["wait"] + rec["step"] == pytest.approx(rec["pred"], rel=0.15)
    assert rec["pass_gpu"] > 0 and rec["pass_host"] > 0 and rec["gap"] == pytest.approx(rec["measured"] - rec["pred"])


def test_main_skips_a_row_the_mapping_no_longer_expresses(monkeypatch, capsys, tmp_path):
    import serving_reference as sr
    rows = [{"id": "cold"}, {"id": "warm"}]
    rec = {c: 0 for c in ftp.COLUMNS}

    def parts(row):
        if row["id"] == "cold":
            raise sr.NotExpressible("measured on a cold server")
        return dict(rec, id=row["id"])

    monkeypatch.setattr(ftp, "selected", lambda query, every: rows)
    monkeypatch.setattr(ftp, "row_parts", parts)
    monkeypatch.setattr(ftp, "fmt", lambda r: r["id"])
    out = tmp_path / "parts.csv"
    assert ftp.main(["--query", "x", "--out", str(out)]) == 0
    assert "cold: skipped, not expressible: measured on a cold server" in capsys.readouterr().out
    assert [line.split(",")[0] for line in out.read_text().splitlines()[1:]] == ["warm"]
