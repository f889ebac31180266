"""The shipped default efficiency model is reproducible from the public Vidur timings, and its
held-out GEMM error stays within the project's target (median < 10%, MAPE < 15%)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from whatif.specs.profiles import read_yaml
from whatif.roofline.efficiency import DEFAULT_FILE
from whatif.roofline.vidur_reference import DEFAULT_DIR, load_network_samples, load_samples

pytestmark = pytest.mark.skipif(not DEFAULT_DIR.is_dir(), reason="reference data not in this checkout")

spec = importlib.util.spec_from_file_location(
    "accuracy_reference", Path(__file__).resolve().parents[1] / "benchmarks" / "accuracy_reference.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def samples():
    return load_samples()


@pytest.fixture(scope="module")
def network():
    return load_network_samples()


def test_refit_reproduces_the_shipped_default_model(samples, network):
    shipped = read_yaml(DEFAULT_FILE)["gpus"]
    refit = bench.refit(samples, network)
    assert set(refit) == set(shipped)
    for gpu, entry in refit.items():
        for cls, params in entry["classes"].items():
            for key, value in params.items():
                assert shipped[gpu]["classes"][cls][key] == pytest.approx(value, rel=1e-6, abs=1e-12), (gpu, cls, key)


def test_held_out_models_are_not_in_the_fit(samples):
    models = {s.model for s in samples}
    held_out = models - set(bench.TRAIN_MODELS)
    assert len(held_out) >= 3 and set(bench.TRAIN_MODELS) <= models


def test_held_out_gemm_error_meets_target(samples, network):
    rows = bench.report(samples, network)
    for gpu in ("a100-sxm-80gb", "h100-sxm"):
        errs = np.abs([e for e, _, _ in rows[(gpu, "held-out", "class", "gemm")]])
        assert len(errs) > 1000
        assert np.median(errs) < bench.GEMM_TARGET["median"], gpu
        assert errs.mean() < bench.GEMM_TARGET["mape"], gpu
