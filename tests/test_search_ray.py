"""`whatif search --backend ray`: a small search on a local Ray runtime returns exactly what the in-process search
returns (skipped when ray is not installed: it is the optional extra whatif[ray])."""
from __future__ import annotations

import pytest

import whatif

ray = pytest.importorskip("ray")

SPACE = dict(gpus=4, prompt=2000, output=200, ttft=0.3, tpot=0.02, tp=(1, 2, 4), pp=(1, 2), batches=(1, 16, 128),
             prefill_chunks=(8192, 1024))     # the chunks of an engine are priced in one task


def test_ray_backend_matches_in_process():
    local = whatif.search("llama-3.1-8b", "dgx-h100", **SPACE)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        remote = whatif.search("llama-3.1-8b", "dgx-h100", backend="ray", **SPACE)
    finally:
        ray.shutdown()
    assert remote.configs == local.configs
    assert remote.frontier == local.frontier
    assert remote.best == local.best
    assert remote.estimates == local.estimates
