"""benchmarks/accuracy_modern.py --donor-cover: which cells over 15% leave-one-GPU-out the tables can test (the
left-out GPU's kernel and GEMM format also run on a donor GPU); --by-query: the query-length bands a donor ran."""
import math

import pandas as pd

from tests.benchmark_module import load_benchmark

am = load_benchmark("accuracy_modern")


def _row(gpu, source, gemm, loo_x):
    return dict(family="f", engine="e", gpu=gpu, kernel_source=source, gemm_type=gemm, latency_s=1.0,
                loo_s=loo_x if loo_x is not None else math.nan)


def test_donor_cover_flags_a_kernel_and_a_format_no_donor_ran():
    out = pd.DataFrame([_row("b200", "k_b200_only", "nvfp4", 1.5), _row("b200", "k_shared", "bf16", 1.3),
                        _row("b200", "k_shared", "bf16", 1.05), _row("h100", "k_shared", "bf16", 1.2),
                        _row("h100", "k_shared", "bf16", 1.2)])
    t = am.donor_cover(out).set_index(["gpu", "kernel_source", "gemm"])
    shared = ("b200", "k_shared", "bf16")
    assert set(t.index) == {("b200", "k_b200_only", "nvfp4"), shared, ("h100", "k_shared", "bf16")}
    assert not t.loc[("b200", "k_b200_only", "nvfp4"), "kernel_on_donor"]
    assert not t.loc[("b200", "k_b200_only", "nvfp4"), "format_on_donor"]
    assert t.loc[shared, "kernel_on_donor"] and t.loc[shared, "loo_mape"] == 17.5
    assert t.loc[("h100", "k_shared", "bf16"), "donors"] == "b200"


def test_donor_cover_keeps_only_cells_over_the_bar_and_no_unscored_gpu_is_a_donor():
    # l40s has no LOO figure (another collector release): its kernel k2 is no donor's
    out = pd.DataFrame([_row("b200", "k", "-", 1.1), _row("l40s", "k2", "-", None), _row("h100", "k2", "-", 1.3)])
    t = am.donor_cover(out)
    assert list(t["gpu"]) == ["h100"]   # b200's 10% is under 15%
    assert t.iloc[0]["donors"] == "b200" and not t.iloc[0]["kernel_on_donor"] and t.iloc[0]["format_on_donor"]


def _qrow(gpu, isl, loo_x):
    return dict(family="f", engine="e", gpu=gpu, isl=isl, latency_s=1.0, loo_s=loo_x, insample_s=1.0)


def test_by_query_counts_the_donors_that_ran_each_query_band():
    # h100 ran no short queries as prefills (vLLM sends them to a decode kernel): b200's short band has 1 donor of 2
    out = pd.DataFrame([_qrow("b200", 64, 1.5), _qrow("b200", 1024, 1.1), _qrow("l40s", 64, 1.2),
                        _qrow("l40s", 1024, 1.0), _qrow("h100", 1024, 0.9)])
    t = am.by_query(out).set_index(["gpu", "query"])
    assert t.loc[("b200", "2-255"), "donors_with_band"] == "1 of 2"
    assert t.loc[("b200", "256+"), "donors_with_band"] == "2 of 2"
    assert t.loc[("b200", "2-255"), "loo_mape"] == 50.0
    assert t.loc[("b200", "2-255"), "share_of_gpu_ape"] == round(100 * 50 / 60, 1)
    assert ("h100", "2-255") not in t.index
