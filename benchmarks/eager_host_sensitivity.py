"""How far the light-load TTFT of a slice of serving rows moves if an engine's eager host time per launch were larger.

    python benchmarks/eager_host_sensitivity.py --filter dsr1_b200_trtllm --engine trtllm --arch blackwell \
        --scale 1 3.3 [--every 4] [--out /tmp/x.csv]
    python benchmarks/eager_host_sensitivity.py --query "engine=='trtllm' and mode=='agg'" --scale 1 3.3
    python benchmarks/eager_host_sensitivity.py --query "engine=='sglang' and model.str.contains('Qwen3.5')" \
        --engine sglang --scale 1 --compile-ms 52.67 90 110
    python benchmarks/eager_host_sensitivity.py --query "engine=='sglang' and tp==4 and ep==1 and concurrency>=16" \
        --seq-host-us 0 60 120

Reruns the rows of benchmarks/serving_reference.py whose id contains `--filter`, or that `--query` selects from the
committed table (every `--every`-th), with the engine's `kernels.eager_launch_s` on `--arch` hosts multiplied by
each `--scale` (the scenario field `launch_us`), and prints TTFT MAPE, median predicted/measured ratio, rows off by
more than 3x and TPOT MAPE, by concurrency band. `--compile-ms` reruns them at each value of the Gated DeltaNet
L2-norm's compile a new prefill token count pays where the mapping charges it (serving_reference.L2NORM_COMPILE_S,
52.67 ms from sgl-project/sglang PR #31558 on H200 hosts; #23448 reads ~90 ms on L20Y, #30403 bursts up to ~110 ms),
for every scale. `--seq-host-us` adds that many microseconds of host time per running sequence to every engine step
(EngineSpec.cpu.seconds; serial with the GPU where the engine does not overlap the two), for every scale: whether a
large-batch TPOT miss reads as a per-sequence host cost (a uniform one fits every load) or not.
A sensitivity, never a calibration: a scale that closes a slice is read off the serving rows, so no prediction may
take it (docs/accuracy.md, "TensorRT-LLM DeepSeek on B200 at light load ... session 56"). Scale 1 reproduces the
committed table.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

BANDS = ((1, 8), (9, 32), (33, 128), (129, 10**6))


@contextlib.contextmanager
def scaled_eager_host(engine: str, arch: str, scale: float):
    """whatif.api.simulate with the scenario's `launch_us` (the host time per eagerly launched kernel) set to
    `scale` x the engine's own `kernels.eager_launch_s` on the GPU's hosts, for runs of `engine` (a kernel engine
    name, or its family: "sglang" takes "sglang-0.5") on an `arch` GPU (restored on exit). At scale 1 the run is
    the committed one (the same host time, given explicitly)."""
    from whatif import api
    from whatif.roofline.engines import engine_spec
    from whatif.specs.hardware import load_system

    original = api.simulate

    def simulate(**kw):
        named = kw.get("kernel_engine") or ""
        # the serving mapping names a release ("sglang-0.5"): `engine` matches it whole or as its family
        if scale != 1 and engine in (named, named.split("-")[0]) and "launch_us" not in kw:
            gpu = load_system(kw["hardware"]).gpu
            host = engine_spec(named).on_host_of(gpu.arch).eager_launch_s
            if gpu.arch == arch and host:
                kw = {**kw, "launch_us": host * scale * 1e6}
        return original(**kw)

    api.simulate = simulate
    try:
        yield
    finally:
        api.simulate = original


@contextlib.contextmanager
def l2norm_compile(ms: float | None):
    """serving_reference's L2-norm compile per new prefill token count set to `ms` (None: as mapped), restored on
    exit. It reaches only rows the mapping charges it (sglang_l2norm_recompile: GDN models on SGLang <= 0.5.9)."""
    import serving_reference as sr

    original = sr.L2NORM_COMPILE_S
    if ms is not None:
        sr.L2NORM_COMPILE_S = ms * 1e-3
    try:
        yield
    finally:
        sr.L2NORM_COMPILE_S = original


@contextlib.contextmanager
def extra_host_per_sequence(us: float):
    """Every engine step's host time (whatif.specs.engines.CpuOverhead.seconds) plus `us` microseconds per running
    sequence, restored on exit; 0 leaves it alone. A step of a speculative round is one step: the term is per round."""
    from whatif.specs import engines

    original = engines.CpuOverhead.seconds
    if us:
        engines.CpuOverhead.seconds = lambda self, sequences: original(self, sequences) + us * 1e-6 * sequences
    try:
        yield
    finally:
        engines.CpuOverhead.seconds = original


def summary(points: list[tuple[int, float, float, float, float]]) -> str:
    """One line: TTFT MAPE, median ratio, off by 3x, TPOT MAPE of (clients, ttft pred, meas, tpot pred, meas)."""
    if not points:
        return "no rows"
    ratio = [p / m for _, p, m, _, _ in points]
    ttft = statistics.fmean(abs(r - 1) for r in ratio) * 100
    tpot = statistics.fmean(abs(p / m - 1) for _, _, _, p, m in points if m) * 100
    off3 = sum(r < 1 / 3 or r > 3 for r in ratio)
    return (f"n {len(points):3d}  TTFT {ttft:5.1f}%  x{statistics.median(ratio):.2f}  off3 {off3:2d}  "
            f"TPOT {tpot:5.1f}%")


def selected_rows(query: str | None, id_text: str | None, every: int) -> list[dict]:
    """The serving rows a sensitivity run reruns: those of a pandas query on the committed table (in its order), or
    whose id contains `id_text`; every `every`-th of them."""
    import serving_reference as sr

    by_id = {r["id"]: r for r in sr.load()}
    if query:
        import pandas as pd

        table = pd.read_csv(ROOT / "benchmarks" / "data" / "serving_reference.csv")
        ids = list(table.query(query, engine="python").id)
    else:
        ids = [i for i in by_id if id_text in i]
    return [by_id[i] for i in ids[::max(1, every)] if i in by_id]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--filter", help="rows whose id contains this text")
    which.add_argument("--query", help="a pandas query on benchmarks/data/serving_reference.csv's columns")
    ap.add_argument("--engine", default="trtllm")
    ap.add_argument("--arch", default="blackwell")
    ap.add_argument("--scale", type=float, nargs="+", default=[1.0])
    ap.add_argument("--compile-ms", type=float, nargs="+", default=[None],
                    help="the GDN L2-norm compile per new prefill token count (ms) where mapped; default as mapped")
    ap.add_argument("--seq-host-us", type=float, nargs="+", default=[0.0],
                    help="extra host time per running sequence of every engine step (us); default 0")
    ap.add_argument("--every", type=int, default=1, help="run every N-th matching row")
    ap.add_argument("--out", help="CSV of id, scale, compile_ms, seq_host_us, clients, TTFT/TPOT")
    args = ap.parse_args(argv)

    import serving_reference as sr

    rows = selected_rows(args.query, args.filter, args.every)
    out = []
    for seq_us in args.seq_host_us:
        for compile_ms in args.compile_ms:
            for scale in args.scale:
                points = []
                with scaled_eager_host(args.engine, args.arch, scale), l2norm_compile(compile_ms), \
                        extra_host_per_sequence(seq_us):
                    for row in rows:
                        res = sr.run_row(row)
                        if not res.scored:
                            continue
                        meas_ttft, meas_tpot = float(row["silicon_ttft_ms"]), float(row["silicon_tpot_ms"])
                        points.append((sr.concurrency(row), res.ttft_ms, meas_ttft, res.tpot_ms, meas_tpot))
                        out.append((row["id"], scale, compile_ms, seq_us, *points[-1]))
                label = "" if compile_ms is None else f", compile {compile_ms:g} ms"
                label += f", +{seq_us:g} us/sequence" if seq_us else ""
                print(f"scale {scale:g}{label}: {summary(points)}")
                for lo, hi in BANDS:
                    band = [p for p in points if lo <= p[0] <= hi]
                    if band:
                        print(f"  {lo}-{hi if hi < 10**6 else '+'} clients: {summary(band)}")
    if args.out:
        with open(args.out, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["id", "scale", "compile_ms", "seq_host_us", "clients", "predicted_ttft_ms", "measured_ttft_ms",
                        "predicted_tpot_ms", "measured_tpot_ms"])
            w.writerows(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
