"""An eagerly timed module's fitted floor is host launches: it scales with the host's measured eager launch
(roofline/kernel_models/eager_host.py), and only for the families timed eagerly."""
import pytest

from whatif.roofline.kernel_models.eager_host import family_host_x, host_x
from whatif.roofline.kernel_models.fitted_roofline import RooflineParams, fitted_seconds


def test_host_x_is_the_profiles_measured_launch_ratio():
    # sglang.yaml: 31.0 us on the H100 hosts (the reference), 29.3 us on the B200 hosts
    assert host_x("sglang", "blackwell") == pytest.approx(29.3 / 31.0)
    assert host_x("sglang", "hopper") == 1.0
    assert host_x("vllm", "blackwell") == 1.0   # V1's profile measures none


def test_only_eagerly_timed_families_scale():
    assert family_host_x("mla_module_prefill", "sglang", "blackwell") < 1.0
    assert family_host_x("dsa_module_prefill", "sglang", "blackwell") < 1.0
    assert family_host_x("mla_module_decode", "sglang", "blackwell") == 1.0   # graphed
    assert family_host_x("mla_module_prefill", "vllm", "blackwell") == 1.0    # graphed (collect_mla_module.py)
    assert family_host_x("mla_module_prefill", "trtllm", "blackwell") == 1.0


def test_host_scales_the_floor_and_nothing_else():
    p = RooflineParams(floor_s=500e-6, compute_eff=0.5, memory_eff=0.5, smooth=20.0, item_s=1e-6)
    parts = [(1e-4, 5e-5, 0.0)]
    base = fitted_seconds(parts, 148.0, 148, p)
    assert fitted_seconds(parts, 148.0, 148, p, host=0.9) == pytest.approx(base - 0.1 * 500e-6)


def test_host_scales_an_eager_ops_launches():
    p = RooflineParams(floor_s=500e-6, compute_eff=0.5, memory_eff=0.5, smooth=20.0, step_s=40e-6,
                       host_smooth=20.0)
    # host-bound: the launches (floor + 10 steps) dominate the ridge, so the time follows the host
    t = fitted_seconds([(1e-6, 1e-6, 0.0)], 0.0, 148, p, steps=10.0)
    assert fitted_seconds([(1e-6, 1e-6, 0.0)], 0.0, 148, p, steps=10.0, host=0.5) == pytest.approx(t / 2, rel=1e-3)
