"""benchmarks/accuracy_moe.py --by-shape: the in-sample ratio by expert shape x moe_tp x token band, EP 1 rows only."""
import pandas as pd
import pytest

from tests.benchmark_module import load_benchmark

am = load_benchmark("accuracy_moe")


def _out():
    rows = []
    for tp, ratio in ((1, 1.0), (8, 0.5)):
        for tokens in (1, 4, 4096):
            for ep in (1, 4):
                rows.append(dict(hidden_size=2880, num_experts=128, moe_tp_size=tp, moe_ep_size=ep,
                                 num_tokens=tokens, latency_s=1e-4, insample_s=1e-4 * (ratio if ep == 1 else 9.0)))
    return pd.DataFrame(rows)


def test_by_shape_medians_per_moe_tp_and_band_over_ep1_rows():
    table = am.by_shape(_out())
    assert list(table.index.get_level_values("moe_tp_size")) == [1, 8]
    assert table.loc[(2880, 128, 1)].dropna().tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert table.loc[(2880, 128, 8)].dropna().tolist() == pytest.approx([0.5, 0.5, 0.5])   # EP 4's x9 left out


def test_by_shape_names_an_unknown_fit(capsys):
    assert am.main(["--by-shape", "nope/fp4", "--corpus", "/nonexistent"]) == 2
    assert "--by-shape: 'nope/fp4' is not a fit" in capsys.readouterr().err
