"""The GEMM and collective kernel models on plain floats equal their numpy evaluation bit for bit (the estimate
and the simulator take the float path without importing numpy; the fitters pass numpy columns)."""
import random

import numpy as np

from whatif.roofline.kernel_models import collectives as coll
from whatif.roofline.kernel_models import gemm
from whatif.roofline.kernel_models.elementwise import Arrays
from whatif.roofline.kernel_models.params import Ceilings, GemmParams


def test_gemm_parts_floats_equal_numpy():
    rng = random.Random(7)
    params = [GemmParams(), GemmParams(eff_small=0.41, max_split=4.0, min_tile_n=128.0, quant_s=3e-6),
              GemmParams(eff_tiny=0.33, eff_mid=0.61, eff_large=0.77, mem_eff=0.9, tile_s=7e-7, max_split=16.0)]
    for _ in range(3000):
        m = float(rng.choice([1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1023, 1024, 1025, 4096, 16384])
                  if rng.random() < 0.6 else rng.randint(1, 20000))
        n, k = float(rng.choice([128, 1024, 4096, 6144, 14336, 28672, 128256])), float(rng.choice([512, 4096, 8192]))
        in_bytes = rng.choice([2.0, 1.0, 0.5625])
        c = Ceilings("g", "a", {}, rng.choice([3.35e12, 2.0e12, 8e12]), rng.choice([132.0, 108.0, 148.0]), 0.0)
        p = rng.choice(params)
        peak = rng.choice([989e12, 1979e12, 312e12])
        fast = gemm.gemm_parts(m, n, k, in_bytes, peak, c, p)
        assert all(type(x) is float for x in fast)
        slow = gemm._gemm_parts(Arrays, m, n, k, in_bytes, peak, c, p)
        assert all(float(a) == float(b) for a, b in zip(fast, slow)), (m, n, k, in_bytes, p)


def test_collective_time_floats_equal_numpy():
    rng = random.Random(3)
    links = ["nvlink-4", "nvlink-3", "nvlink-5", "pcie-gen4-x16"]
    for _ in range(1500):
        link = rng.choice(links)
        nccl, engine, _ = coll.collective_params(link)
        op = rng.choice(["all_reduce", "all_gather", "reduce_scatter", "all_to_all"])
        nbytes = float(rng.choice([0, 1024, 65536, 1 << 20, 8 << 20, 64 << 20]) if rng.random() < 0.5
                       else rng.uniform(1, 1e9))
        gpus = rng.choice([1, 2, 3, 4, 8, 16])
        bw, lat = rng.choice([450e9, 300e9, 32e9]), rng.choice([2e-6, 5e-6])
        nvswitch, graphed = rng.random() < 0.5, rng.random() < 0.7
        eng = engine if rng.random() < 0.8 else None
        fast = coll.collective_time(op, nbytes, gpus, bw, lat, nvswitch, nccl, eng, graphed)
        assert type(fast) is float
        slow, = coll._collective_time(Arrays, op, nbytes, gpus, bw, lat, nvswitch, nccl, eng, graphed)
        assert fast == float(slow), (op, nbytes, gpus, link, nvswitch, graphed)
        column = coll.collective_time(op, np.array([nbytes, nbytes]), gpus, bw, lat, nvswitch, nccl, eng, graphed)
        assert float(column[1]) == fast
