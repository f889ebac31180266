"""benchmarks/nvfp4_context_families.py: the logged NVFP4 context steps family by family against the B200 tables."""
from pathlib import Path

import pytest

from tests.benchmark_module import load_benchmark

ncf = load_benchmark("nvfp4_context_families")
AIC = Path(__file__).resolve().parents[2] / "shared" / "reference" / "aiconfigurator"


def test_families_by_op_name():
    assert ncf.family("attention_mla") == "mla module"
    assert ncf.family("experts_down") == "routed moe"
    assert ncf.family("shared_expert_gate_up") == "dense gemms"
    assert ncf.family("mlp_allreduce") == "all-reduce"
    assert ncf.family("input_norm") == "rest"


def test_fit_routing_loads_and_order():
    # uniform routing gives EP4's mean share; the SGLang collector's grouped 'balanced' puts 3x it on rank 0
    ms_u, load_u = ncf.fit_at(7238, 4, "balanced", None)
    ms_g, load_g = ncf.fit_at(7238, 4, "balanced", ncf.GROUPED)
    ms_p, load_p = ncf.fit_at(7238, 4, "power_law_1.01", ncf.GROUPED)
    assert load_u == pytest.approx(1.0)
    assert load_g == pytest.approx(3.0, rel=0.01)
    assert 1.0 < load_p < load_g
    assert ms_u < ms_p < ms_g


@pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")
def test_fit_matches_the_trtllm_gen_table_at_its_own_routing():
    # the finding: at 7,238 tokens EP4 the fit reads the TRTLLM-Gen table within 10% at the table's routings, so
    # whatif's lower serving price is its uniform routing, not the fit's large-M regime
    import prefill_vs_kernels as pvk
    table = pvk.measured_moe_ms(AIC, 7238, 1, 4, "nvfp4")
    for dist in ("balanced", "power_law_1.01"):
        assert ncf.fit_at(7238, 4, dist, ncf.GROUPED)[0] / table[dist] == pytest.approx(1.0, abs=0.1)


@pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")
def test_report_names_every_family():
    import trtllm_iter_logs as til
    step = next(s for s in til.STEPS if s.prompt_tokens == 7238)
    text = ncf.report(step, AIC)
    for f in ncf.FAMILIES:
        assert f in text
    # the logged device span over whatif's GPU pass: x1.27 since session 73 K (the fused add + RMSNorm prices the
    # prompt pass higher), x1.29 before
    assert "x1.27" in text


def test_bad_root_is_one_line():
    assert ncf.main(["--root", "/nonexistent"]) == 2


@pytest.mark.skipif(not AIC.is_dir(), reason="shared kernel tables not present")
def test_tables_sum_to_whatifs_pass_and_the_queue_hides_rc10s_host():
    # the tables, family by family at uniform routing, sum within 5% of whatif's GPU pass; at rc10's host cost a
    # call the launch queue still finishes with the GPU: neither closes the logged x1.27-1.29
    import re
    import trtllm_iter_logs as til
    step = next(s for s in til.STEPS if s.prompt_tokens == 7238)
    text = ncf.report(step, AIC)
    tabled, whatif = map(float, re.search(r"uniform routing ([\d.]+) ms \(whatif ([\d.]+)", text).groups())
    assert tabled == pytest.approx(whatif, rel=0.05)
    assert float(re.search(r"a call ([\d.]+) ms", text).group(1)) == pytest.approx(whatif, rel=0.01)
