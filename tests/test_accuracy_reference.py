"""The shipped default efficiency model is reproducible from the public Vidur timings, and its
held-out GEMM error stays within the project's target (median < 10%, MAPE < 15%). Skipped where
the Vidur folder is absent (an installed package without the checkout's reference/ copy)."""

import numpy as np
import pytest

from whatif.roofline.efficiency import DEFAULT_FILE
from whatif.specs.profiles import read_yaml
from whatif.validate.reference import TRAIN_MODELS, vidur_measurements
from whatif.validate.vidur import load_network_samples, load_samples
from tests.benchmark_module import load_benchmark

bench = load_benchmark("accuracy_reference")

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not bench.VIDUR_DIR.is_dir(), reason=f"no Vidur data at {bench.VIDUR_DIR}")]


@pytest.fixture(scope="module")
def samples():
    return load_samples(bench.VIDUR_DIR)


@pytest.fixture(scope="module")
def network():
    return load_network_samples(bench.VIDUR_DIR)


def test_refit_reproduces_the_shipped_default_model(samples, network):
    shipped = read_yaml(DEFAULT_FILE)
    assert shipped["train_models"] == list(TRAIN_MODELS)
    refit = bench.refit(samples, network)
    assert set(refit) == set(shipped["gpus"])
    for gpu, entry in refit.items():
        for cls, params in entry["classes"].items():
            for key, value in params.items():
                assert shipped["gpus"][gpu]["classes"][cls][key] == pytest.approx(value, rel=1e-6, abs=1e-12), \
                    (gpu, cls, key)


def test_network_sizes_are_bytes(network):
    """Vidur's `size` column is bytes: its smallest all-reduce is 1024 elements of fp16 = 2048 bytes."""
    sizes = sorted({s.op.shape.bytes for s in network})
    assert sizes[0] == 2048 and all(s % 2 == 0 for s in sizes)


def test_held_out_models_are_not_in_the_fit(samples):
    models = {s.model for s in samples}
    held_out = models - set(TRAIN_MODELS)
    assert len(held_out) >= 3 and set(TRAIN_MODELS) <= models


def test_held_out_gemm_error_meets_target():
    rows = bench.report(vidur_measurements(bench.VIDUR_DIR, kernel_models=False))
    for gpu in ("a100-sxm-80gb", "h100-sxm"):
        errs = np.abs([m.error for m in rows[(gpu, "held-out", "class", "gemm")]])
        assert len(errs) > 1000
        assert np.median(errs) < bench.GEMM_TARGET["median"], gpu
        assert errs.mean() < bench.GEMM_TARGET["mape"], gpu


# The default's GEMM and all-reduce kernel models, fitted on the aiconfigurator corpus, predicting every Vidur row
# (an independent data set: older engine versions, in-layer profiling). Pinned at what they reach (+1.5 points), so
# a change that makes them worse fails; they run 12-17% faster than Vidur's compute-bound GEMMs (see the README).
CROSS_DATASET_MAPE = {("a100-sxm-80gb", "gemm"): 0.14, ("h100-sxm", "gemm"): 0.20,
                      ("a100-sxm-80gb", "comm"): 0.28, ("h100-sxm", "comm"): 0.31}


def test_kernel_models_on_vidur_stay_pinned():
    stats = bench.cross_dataset(bench.report(vidur_measurements(bench.VIDUR_DIR, kernel_models=True)))
    for key, limit in CROSS_DATASET_MAPE.items():
        assert stats[key]["mape"] < limit, (key, stats[key])
