"""How the headline MI300X-vs-H200 answer moves with each figure of the CDNA family entry (measured or assumed).

    python benchmarks/amd_sensitivity.py

The headline: llama-3.1-70b, fp8 weights and KV, one GPU each (mi300x vs h200-sxm), prompt 1024 and output
1024 tokens, a closed loop of 1 and of 128 clients (whatif simulate --concurrency). Printed: MI300X's TPOT at
concurrency 1 and output tok/s at 128, and their ratio to H200's, with every figure of
whatif/roofline/data/cdna_family.yaml (cdna3) at its shipped value, then each set low and high in turn (the
others shipped). H200 is simulated once: its fits do not depend on these figures. Each MI300X variant runs in
its own process with the family file pointed at a modified copy (nothing shipped is changed).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# figure -> (low, high): the published spread of a measured figure widened a little (bf16: 0.511 MAMF ROCm 6.3,
# 0.542 AMD MAF, 0.598 MAMF ROCm 6.2; fp8: 0.443 Azure 8192^3, 0.487 AMD MAF; HBM: Azure copy 0.775, triad 0.772,
# mul 0.804), the plausible range of an assumed one (fixed costs)
RANGES = {"gemm_fraction": (0.45, 0.60), "gemm_fp8_fraction": (0.44, 0.55), "hbm_fraction": (0.70, 0.85),
          "fixed_cost_factor": (1.0, 2.5)}
POINTS = ((1, 10), (128, 384))   # (concurrency, requests)
ARGS = ["--model", "llama-3.1-70b", "--dtype", "fp8", "--kv-dtype", "fp8", "--prompt", "1024", "--output", "1024"]

RUNNER = """
import sys, json
from pathlib import Path
from whatif.roofline.kernel_models import cdna, collectives
if sys.argv[1] != '-':
    cdna.FAMILY_FILE = Path(sys.argv[1])
if sys.argv[2] != '-':   # the variant's xGMI blocks beside the shipped fits (the package reader takes no int keys)
    import yaml
    variant = yaml.safe_load(Path(sys.argv[2]).read_text())["links"]
    shipped = collectives._fit_table()
    collectives._fit_table = lambda: {**shipped, **variant}
from whatif.cli import main
sys.argv = ['whatif'] + sys.argv[3:]
sys.exit(main())
"""
# The 8-GPU question: tp=8 at batch 1 (whatif estimate), where the per-layer all-reduces cross xGMI
TP8 = ["estimate", "--model", "llama-3.1-70b", "--tp", "8", "--dtype", "fp8", "--kv-dtype", "fp8", "--prompt", "1000",
       "--output", "1000", "--batch", "1", "--no-ops", "--json"]
XGMI_SCALES = {"bandwidth efficiencies": (0.7, 1.3), "fixed costs (base_s)": (0.5, 2.0)}


def whatif(argv: list, family: str | None = None, xgmi: str | None = None) -> dict:
    cmd = [sys.executable, "-c", RUNNER, family or "-", xgmi or "-", *argv]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise SystemExit(f"whatif failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def run(hardware: str, family: str | None, concurrency: int, requests: int) -> dict:
    return whatif(["simulate", *ARGS, "--hardware", hardware, "--concurrency", str(concurrency),
                   "--requests", str(requests), "--json"], family)


def tp8_tpot(hardware: str, xgmi: str | None = None) -> float:
    return whatif([*TP8, "--hardware", hardware], xgmi=xgmi)["tpot_s"]


def xgmi_variant(what: str, scale: float, workdir: Path) -> str:
    """A copy of collective_xgmi.yaml with every bandwidth efficiency (capped at 1) or fixed cost x `scale`."""
    from whatif.roofline.kernel_models import collectives
    from whatif.specs.profiles import read_yaml
    import yaml
    data = read_yaml(collectives.ASSUMED_FILE)
    blocks = {id(b): b for b in data["links"].values()}   # one block under two names (a YAML alias): once
    for block in blocks.values():
        groups = list(block["nccl"][p] for p in ("LL", "LL128", "Simple")) + list(block["engines"].values())
        for g in groups:
            for key in list(g):
                if what.startswith("bandwidth") and key.endswith("bw_eff"):
                    g[key] = min(1.0, g[key] * scale)
                if what.startswith("fixed") and key.endswith("base_s"):
                    g[key] = g[key] * scale
    path = workdir / f"xgmi-{what[:5]}-{scale}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def headline(hardware: str, family: str | None = None) -> tuple[float, float]:
    """(mean TPOT in s at concurrency 1, output tok/s at concurrency 128)."""
    one = run(hardware, family, *POINTS[0])
    many = run(hardware, family, *POINTS[1])
    return one["latency"]["tpot_s"]["mean"], many["throughput"]["output_tok_s"]


def variant(figure: str, value: float, workdir: Path) -> str:
    """A copy of the family file with cdna3.<figure> set to `value`."""
    from whatif.roofline.kernel_models import cdna
    from whatif.specs.profiles import read_yaml
    import yaml
    data = read_yaml(cdna.FAMILY_FILE)
    data["families"]["cdna3"][figure]["value"] = value
    path = workdir / f"{figure}-{value}.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def main() -> int:
    from whatif.roofline.kernel_models import cdna
    shipped = cdna.family("cdna3")
    h_tpot, h_tok = headline("h200-sxm")
    print("llama-3.1-70b fp8 (KV fp8), 1 GPU, prompt 1024 / output 1024; H200 (fitted Hopper kernels): "
          f"TPOT {h_tpot * 1e3:.1f} ms at concurrency 1, {h_tok:,.0f} tok/s at 128\n")
    print(f"{'cdna3 figure':<20} {'value':<20}  {'MI300X TPOT@1':>13} {'H200/MI300X':>11}  "
          f"{'MI300X tok/s@128':>16} {'MI300X/H200':>11}")
    m_tpot, m_tok = headline("mi300x")
    print(f"{'(all shipped)':<20} {'':<20}  {m_tpot * 1e3:>10.1f} ms {h_tpot / m_tpot:>11.2f}  "
          f"{m_tok:>16,.0f} {m_tok / h_tok:>11.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for figure, values in RANGES.items():
            for value in values:
                t, tok = headline("mi300x", variant(figure, value, Path(tmp)))
                mark = f"{value:g} (shipped {shipped[figure]:g})"
                print(f"{figure:<20} {mark:<20}  {t * 1e3:>10.1f} ms {h_tpot / t:>11.2f}  "
                      f"{tok:>16,.0f} {tok / h_tok:>11.2f}")
    print("\nH200/MI300X: H200's TPOT over MI300X's (< 1: H200 ahead at concurrency 1); "
          "MI300X/H200: output tok/s at 128 (> 1: MI300X ahead)")
    h8 = tp8_tpot("hgx-h200")
    print("\n8-GPU platforms, tp=8, batch 1, prompt 1000 / output 1000 (whatif estimate): "
          f"hgx-h200 TPOT {h8 * 1e3:.2f} ms")
    print(f"{'xGMI collective terms (assumed)':<34} {'scale':>6}  {'mi300x-8x TPOT':>14} {'H200/MI300X':>11}")
    m8 = tp8_tpot("mi300x-8x")
    print(f"{'(as shipped)':<34} {'':>6}  {m8 * 1e3:>11.2f} ms {h8 / m8:>11.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for what, scales in XGMI_SCALES.items():
            for scale in scales:
                t = tp8_tpot("mi300x-8x", xgmi_variant(what, scale, Path(tmp)))
                print(f"{what:<34} {scale:>6g}  {t * 1e3:>11.2f} ms {h8 / t:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
