"""The gathered-token attention efficiencies of roofline/gathered_attention.py, refitted from the kernel tables
(whatif/validate/gathered_attention.py), per GPU, engine and batch, with each GPU's value scored on the other.

    python benchmarks/gathered_attention_fit.py [--root DIR]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from whatif.roofline import gathered_attention as shipped  # noqa: E402
from whatif.validate import gathered_attention as g  # noqa: E402
from whatif.validate.modern_rows import DEFAULT_ROOT  # noqa: E402


def report(root) -> str:
    lines = []
    for phase, fn, engines, value in (("prefill", g.prefill_ratio, g.ENGINES, shipped.GATHERED_PREFILL_EFF),
                                      ("decode", g.decode_ratio, g.DECODE_ENGINES, shipped.GATHERED_DECODE_EFF)):
        lines.append(f"{phase}: sparse (gathered) / dense attention rate")
        for gpu in g.PAIRS:
            for e in engines:
                lines.append(f"  {gpu:9s} {e:7s} " + " ".join(f"{v:.3f}" for v in fn(root, gpu, e)))
        gpus = g.per_gpu(root, phase)
        for held, other in (g.PAIRS, g.PAIRS[::-1]):
            err = gpus[other] / gpus[held] - 1
            lines.append(f"  fitted on {other}: {gpus[other]:.3f}, measured on {held} {gpus[held]:.3f} ({err:+.0%})")
        lines.append(f"  pooled {g.pooled(root, phase):.3f} (shipped {value})")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=str(DEFAULT_ROOT), help="the modern/ folder of kernel tables")
    print(report(ap.parse_args().root))
