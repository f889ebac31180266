"""The search's simulator re-check marks the predicted rate of a frontier row the steady-state model already finds
missing the SLOs. Before session 75 D, Kimi-K2.5 on 16 H200 (disaggregated) listed "1P [tp8 dp-attn] + 1D [tp8
dp-attn] batch 128: predicted 2.46 req/s, goodput 0.481 req/s", a 5x disagreement to a reader, where 2.46 req/s
was that row's full load at a TPOT of 45.5 ms > 30 ms (the search's own verdict: misses SLO)."""
from __future__ import annotations

from whatif.cli import main


def test_a_missing_row_says_its_predicted_rate_is_not_a_goodput(capsys):
    assert main(["search", "--model", "llama-3.1-8b", "--hardware", "h100-sxm", "--gpus", "1", "--prompt", "1000",
                 "--output", "200", "--slo-ttft", "1s", "--slo-tpot", "15ms", "--batches", "8,64,256",
                 "--simulate-top", "1", "--sim-requests", "100", "--no-progress", "--jobs", "1"]) == 0
    rows = {line.split(" chunk")[0].strip(): line for line in capsys.readouterr().out.splitlines()
            if "req/s" in line and line.startswith("1x [")}
    assert "misses SLO" in rows["1x [tp1 pp1 wbf16 kvbf16] batch 256"]
    assert "misses SLO" not in rows["1x [tp1 pp1 wbf16 kvbf16] batch 64"]
