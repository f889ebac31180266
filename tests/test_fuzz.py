"""Bad input never crashes, hangs or prints nonsense (issues 19 and 22): a fuzz test over every command.

Each case runs one `whatif ...` command in-process (whatif.cli.main) with generated bad files and flags, one
generator per kind of bad input the issues list: files that are not UTF-8, have null or non-string keys, nest
deeply, hold huge integers, alias bombs or python tags; valid profiles, scenarios, calibrations, HF configs, traces
and measurement tables with one field made wrong (a wrong type, zero, tiny, huge, NaN, a 10 kB string); flags with
inf, nan, huge counts, empty values or units; unwritable output paths; degenerate workloads. A case fails on
- a traceback: any exception main() lets out (it turns user errors into a one-line message and exit status 2);
- a hang: a case running past CASE_TIMEOUT_S;
- a non-finite number in the output (nan / inf in text; JSON a strict parser refuses);
- an error that is not one line (or over MAX_ERROR_CHARS), or a degenerate result shown as a normal one.
Hypothesis runs CASES cases with derandomize=True: the same cases on every run, no example database.
"""
from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import signal
from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from whatif.cli import main  # noqa: E402

CASES = 300
CASE_TIMEOUT_S = 20.0       # far above any case's time (most take 10-100 ms): only a runaway loop reaches it
MAX_ERROR_CHARS = 2000      # an error quotes at most a short prefix of a value; valid-value lists stay under this
ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "whatif"

# ---------------------------------------------------------------- valid bases that the generators spoil


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


MODEL = _yaml(PACKAGE / "model_profiles" / "llama-3-8b.yaml")
GPU = _yaml(PACKAGE / "hardware_profiles" / "h100-sxm.yaml")
CALIBRATION = _yaml(PACKAGE / "validate" / "measurements" / "h100-sxm" / "calibration.yaml")
HF_CONFIG = json.loads((ROOT / "tests" / "data" / "hf_configs" / "llama-3-8b" / "config.json").read_text())
SCENARIO = {"model": "llama-3.2-1b", "hardware": "h100-sxm", "workload": {"batch": 2, "prompt": 64, "output": 16},
            "parallel": {"tp": 1}, "precision": {"weight": "bf16"}, "traffic": {"rate": 5, "requests": 20},
            "engine": {"max_batch": 16}, "cluster": {"replicas": 1}, "slo": {"ttft_s": 1.0}}
TRACE_CSV = "arrival_s,prompt_tokens,output_tokens\n0,64,16\n0.1,32,8\n0.5,128,4\n"
TABLE_LINES = (PACKAGE / "validate" / "measurements" / "h100-sxm" / "vidur-reference.csv").read_text().splitlines()
TABLE_HEADER, TABLE_ROWS = TABLE_LINES[0], TABLE_LINES[1:5]

# Values that are wrong somewhere: wrong types, zero, tiny, huge, non-finite, over-long, bool-like strings.
WEIRD = [0, -1, 1, 1.5, 10**400, 10**25, 1e300, 1e-300, float("nan"), float("inf"), -float("inf"), "no", "yes", "",
         "x" * 10000, "H100", None, True, False, [], [1, 2], {}, {"a": 1}, "1e12", "500ms"]
FLAG_VALUES = ["inf", "nan", "-inf", "0", "-1", "1", "2", "1e30", "9" * 30, "9" * 400, "", " ", "1e-300", "abc",
               "500ms", "0.5s", "2147483648", "x" * 5000, "1\n2", "1.5", "-0"]
BILLION_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
BAD_TEXTS = [
    b"\xff\xfe\x00not utf-8\n", b"name: \xe9t\xe9\n", b"null: 1\nname: x\n", b"~: 1\n", b"? [1, 2]\n: x\n",
    b"1: a\nb: 2\n", b"[" * 5000, b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", b"{a: " * 2000 + b"1" + b"}" * 2000,
    b"x: " + b"9" * 400 + b"\n", b"x: " + b"9" * 5000 + b"\n", BILLION_LAUGHS.encode(),
    b"!!python/object/apply:os.system ['echo owned']\n", b"a: !!python/name:os.system\n", b"a: .nan\nb: .inf\n",
    b"", b"- 1\n- 2\n", b"a: b: c\n", b"\x00\x01\x02", b"when: 2024-01-01\n", b"a: !!binary aGVsbG8=\n",
    b"a: " + b"x" * 200_000 + b"\n", b"a:\n  - b\n - c\n", b"\t\tkey: value\n", b"{\"a\": NaN}", b"{\"a\": 1e999}",
]


def _dump(data) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, width=10**6).encode()


def _spoiled(base: dict, path: tuple, value) -> dict:
    """A deep copy of `base` with the field at `path` set to `value` (None at the end: the field removed)."""
    data = json.loads(json.dumps(base))
    node = data
    for key in path[:-1]:
        node = node.setdefault(key, {}) if isinstance(node, dict) else node
    if isinstance(node, dict):
        if value is _REMOVE:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    return data


_REMOVE = object()
weird = st.sampled_from(WEIRD + [_REMOVE])

# ---------------------------------------------------------------- case generators (argv with @FILE placeholders)

FILE_FLAGS = [  # (argv before the file, file suffix, argv after)
    (["estimate", "--model"], ".yaml", []), (["estimate", "--model"], ".json", []),
    (["estimate", "--hardware"], ".yaml", []), (["estimate", "--scenario"], ".yaml", ["--json"]),
    (["simulate", "--scenario"], ".yaml", ["--requests", "10"]),
    (["estimate", "--efficiency", "calibrated", "--calibration"], ".yaml", []),
    (["kernel", "gemm", "--m", "8", "--n", "8", "--k", "8", "--calibration"], ".yaml", []),
    (["simulate", "--requests", "10", "--trace"], ".csv", []), (["simulate", "--trace"], ".jsonl", []),
    (["validate", "report"], ".csv", []), (["validate", "calibrate"], ".csv", []),
    (["report", "--no-sweep", "--out", "@OUT.html", "--validation", "--measurements"], ".csv", []),
    (["compare", "--systems"], ".yaml", []),
]


@st.composite
def bad_file(draw):
    """Any file-taking flag given a file that is broken as a file: encoding, keys, depth, size, aliases, tags."""
    before, suffix, after = draw(st.sampled_from(FILE_FLAGS))
    return [*before, "@F" + suffix, *after], {"F" + suffix: draw(st.sampled_from(BAD_TEXTS))}


MODEL_PATHS = [(k,) for k in MODEL] + [("moe",), ("moe", "num_experts"), ("mla",), ("parallel_block",),
                                       ("qkv_bias",), ("unknown_field",)]
GPU_PATHS = [(k,) for k in GPU] + [("hbm_bandwidth", "value"), ("hbm_capacity", "value"), ("peak", "bf16", "value"),
                                   ("peak", "bf16", "unit"), ("launch_overhead", "value"), ("sm_count", "value"),
                                   ("boost_clock", "value"), ("l2_size", "value"), ("achievable", "hbm_bandwidth"),
                                   ("peak", "bf16"), ("hbm_bandwidth", "provenance"), ("hbm_bandwidth", "source")]
SCENARIO_PATHS = [(k,) for k in SCENARIO] + [
    ("workload", "batch"), ("workload", "prompt"), ("workload", "output"), ("parallel", "tp"), ("precision", "kv"),
    ("traffic", "rate"), ("traffic", "arrival"), ("traffic", "requests"), ("traffic", "turns"),
    ("engine", "swap_space_gb"), ("cluster", "replicas"), ("cluster", "prefill_replicas"), ("slo", "ttft_s"),
    ("slo", "tpot_s"), ("horizon_s",), ("context_window",), ("price_per_hour",), ("memory_utilization",),
    ("cuda_graphs",), ("techniques",), ("place",), ("unknown_section",), ("workload", "unknown_key"),
    ("calibration",), ("launch_us",), ("gpus",), ("slo", "attainment"), ("engine", "batching"),
    ("traffic", "prompt"), ("traffic", "burstiness")]
CALIBRATION_PATHS = [("gpu",), ("classes",), ("kernel_gap_s",), ("provenance",), ("classes", "gemm"),
                     ("classes", "gemm", "compute_eff"), ("classes", "gemm", "memory_eff"),
                     ("classes", "gemm", "smooth"), ("classes", "gemm", "overhead_s"), ("classes", "norm", "speed"),
                     ("classes", "warp_drive"), ("classes", "norm", "memory_eff")]
HF_PATHS = [(k,) for k in HF_CONFIG] + [("num_local_experts",)]


@st.composite
def spoiled_file(draw):
    """A valid model, GPU, scenario, calibration or HF config with one field made wrong."""
    kind = draw(st.sampled_from(["model", "gpu", "scenario", "scenario-sim", "calibration", "hf"]))
    value = draw(weird)
    if kind == "model":
        data = _spoiled(MODEL, draw(st.sampled_from(MODEL_PATHS)), value)
        return ["estimate", "--model", "@F.yaml", "--json"], {"F.yaml": _dump(data)}
    if kind == "gpu":
        data = _spoiled(GPU, draw(st.sampled_from(GPU_PATHS)), value)
        return ["estimate", "--model", "llama-3.2-1b", "--hardware", "@F.yaml"], {"F.yaml": _dump(data)}
    if kind in ("scenario", "scenario-sim"):
        data = _spoiled(SCENARIO, draw(st.sampled_from(SCENARIO_PATHS)), value)
        argv = (draw(st.sampled_from([["estimate", "--json"], ["compare"]])) if kind == "scenario"
                else ["simulate", "--json"])
        return [*argv, "--scenario", "@F.yaml"], {"F.yaml": _dump(data)}
    if kind == "calibration":
        data = _spoiled(CALIBRATION, draw(st.sampled_from(CALIBRATION_PATHS)), value)
        flags = draw(st.sampled_from([["--efficiency", "calibrated"], []]))
        return ["estimate", "--model", "llama-3.2-1b", *flags, "--calibration", "@F.yaml", "--json"], \
            {"F.yaml": _dump(data)}
    data = _spoiled(HF_CONFIG, draw(st.sampled_from(HF_PATHS)), value)
    text = json.dumps(data).encode() if isinstance(value, (str, int, float, list, dict, type(None))) else b"{}"
    return ["estimate", "--model", "@config.json"], {"config.json": text}


NUMBER_COLUMNS = ("measured_s", "predicted_s", "flops", "hbm_bytes")
TEXT_CELLS = ["", "x" * 5000, "ok", "held-out", "H100", "\x00", "{", "{\"a\": NaN}", "[1, 2]"]
TRACE_CELLS = ["", "nan", "inf", "-1", "0", "1e30", "9" * 400, "x" * 5000, "1.5", "abc", "true", "1e-300"]


@st.composite
def bad_table(draw):
    """A trace or a measurement table with one cell made wrong."""
    cell = draw(st.sampled_from(TRACE_CELLS))
    if draw(st.booleans()):
        column = draw(st.integers(0, 2))
        rows = [line.split(",") for line in TRACE_CSV.splitlines()]
        rows[2][column] = cell
        text = "\n".join(",".join(r) for r in rows) + "\n"
        if draw(st.booleans()):
            return ["simulate", "--trace", "@T.csv", "--json"], {"T.csv": text.encode()}
        keys = ("arrival_s", "prompt_tokens", "output_tokens")
        value = draw(st.sampled_from(WEIRD))
        line = json.dumps({k: (value if i == column else 1) for i, k in enumerate(keys)}, allow_nan=True)
        return ["simulate", "--trace", "@T.jsonl"], {"T.jsonl": (line + "\n").encode()}
    column = draw(st.sampled_from(["measured_s", "predicted_s", "flops", "hbm_bytes", "status", "op_shape",
                                   "family", "gpu", "split"]))
    header = TABLE_HEADER.split(",")
    import csv as _csv
    rows = list(_csv.DictReader([TABLE_HEADER, *TABLE_ROWS]))
    text = TEXT_CELLS if column == "op_shape" else TEXT_CELLS[:6]   # NaN in a kernel's name is no number
    rows[1][column] = cell if column in NUMBER_COLUMNS else draw(st.sampled_from(text))
    out = io.StringIO()
    writer = _csv.DictWriter(out, fieldnames=header)
    writer.writeheader()
    writer.writerows(rows)
    command = draw(st.sampled_from([["validate", "report"], ["validate", "calibrate"],
                                    ["report", "--no-sweep", "--out", "@OUT.html", "--validation",
                                     "--measurements"]]))
    return [*command, "@M.csv"], {"M.csv": out.getvalue().encode()}


SCENARIO_FLAGS = ["--tp", "--pp", "--ep", "--gpus", "--batch", "--prompt", "--output", "--prefill-chunk",
                  "--weight-group-size", "--shared-prefix", "--memory-utilization", "--price-per-hour", "--launch-us",
                  "--context-window", "--dtype", "--weight-dtype", "--kv-dtype", "--model", "--hardware",
                  "--technique", "--place", "--add-tier", "--host-link", "--calibration", "--efficiency", "--engine"]
SIM_FLAGS = ["--rate", "--burstiness", "--requests", "--duration", "--turns", "--think-time", "--seed",
             "--max-batch", "--token-budget", "--block-size", "--watermark", "--swap-space", "--replicas",
             "--prefill-replicas", "--prefill-tp", "--kv-link", "--slo-ttft", "--slo-tpot", "--attainment",
             "--horizon", "--arrival", "--lengths", "--batching", "--priority", "--preemption", "--router",
             "--prefix-groups", "--prefix-tokens"]
COMMAND_FLAGS = {
    ("compare",): ["--systems", "--host-links", "--variant"],
    ("crossover",): ["--versus-gpus", "--batches"],
    ("size-tier",): ["--tier", "--max-count"],
    ("capacity", "--requests", "10", "--slo-ttft", "1s", "--hi", "4"): ["--lo", "--hi", "--rel-tol", "--variant"],
    ("kernel", "gemm", "--m", "64", "--n", "64", "--k", "64"): ["--m", "--n", "--k", "--dtype"],
    ("kernel", "attention", "--phase", "decode", "--batch", "1", "--heads", "8", "--kv-heads", "8", "--head-dim",
     "64", "--seq-len", "128"): ["--batch", "--heads", "--kv-heads", "--head-dim", "--seq-len"],
    ("kernel", "allreduce", "--bytes", "1024", "--gpus", "2"): ["--bytes", "--gpus"],
    ("validate", "run", "--dry-run", "--families", "nope"): ["--budget"],
    ("validate", "run", "--dry-run", "--budget", "-1"): ["--families"],
    ("show", "model"): [None], ("show", "hardware"): [None],
    ("search", "--model", "llama-3.2-1b", "--hardware", "h100-sxm", "--gpus", "1", "--batches", "1,8",
     "--no-progress"): ["--slo-ttft", "--slo-tpot", "--slo-e2e", "--prompt", "--output", "--gpus", "--tp",
                        "--batches", "--prefill-chunk", "--sim-requests"],
}
TECHNIQUE_SPECS = ["eagle:tree=64x64x64x64", "eagle:tree=999999x999999", "medusa:tree=", "kivi:bits=",
                   "h2o:heavy=nan", "quest:budget=inf", "kivi:bits=999999999999999999999", "eagle:tree=0",
                   "int4:group_size=-1", "=", ":", "kivi:", "kivi:=", "eagle:tree=1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1"]
PLACE_SPECS = ["activations=ddr5:", "kv=", "kv=cxl:nan", "kv=cxl:inf", "weights=host:1e30", "=", "kv=nvme:-1",
               "kv=ddr5:0.5:0.5"]


@st.composite
def bad_flag(draw):
    """One flag of one command given a bad value (inf, nan, huge, empty, over-long, with a newline)."""
    kind = draw(st.sampled_from(["scenario", "sim", "command", "technique", "place"]))
    value = draw(st.sampled_from(FLAG_VALUES))
    if kind == "scenario":
        command = draw(st.sampled_from([["estimate"], ["estimate", "--json"], ["compare"], ["crossover"],
                                        ["simulate", "--requests", "10"]]))
        return [*command, "--model", "llama-3.2-1b", f"{draw(st.sampled_from(SCENARIO_FLAGS))}={value}"], {}
    if kind == "sim":
        command = draw(st.sampled_from([["simulate", "--json"], ["simulate"]]))
        flag = draw(st.sampled_from(SIM_FLAGS))
        requests = [] if flag in ("--requests", "--duration") else ["--requests", "10"]
        return [*command, "--model", "llama-3.2-1b", *requests, f"{flag}={value}"], {}
    if kind == "technique":
        return ["estimate", "--model", "llama-3.2-1b", "--technique", draw(st.sampled_from(TECHNIQUE_SPECS))], {}
    if kind == "place":
        return ["estimate", "--model", "llama-3.2-1b", "--hardware", "gh200-144gb", "--place",
                draw(st.sampled_from(PLACE_SPECS))], {}
    command, flags = draw(st.sampled_from(sorted(COMMAND_FLAGS.items(), key=str)))
    flag = draw(st.sampled_from(flags))
    return [*command, value] if flag is None else [*command, f"{flag}={value}"], {}


OUT_FLAGS = [["estimate", "--report"], ["demo", "--out"], ["report", "--no-sweep", "--out"],
             ["simulate", "--requests", "5", "--csv-dir"], ["validate", "reference", "--gpu", "h100-sxm", "--out"],
             ["validate", "report", "--reference", "--gpu", "h100-sxm", "--csv"]]
OUT_PATHS = ["@DIR", "/proc/whatif.html", "/sys/whatif.html", "a" * 300 + ".html", "", "@DIR/missing/x.html",
             "/dev/null/x.html", "@F.yaml/x.html"]


@st.composite
def bad_output(draw):
    """An output path that cannot be written: a folder, under /proc or /sys, a 300-character name, empty."""
    return [*draw(st.sampled_from(OUT_FLAGS)), draw(st.sampled_from(OUT_PATHS))], {"F.yaml": b"a: 1\n"}


@st.composite
def degenerate(draw):
    """Inputs that are valid but degenerate: one output token (no decode step), tiny sizes, one request."""
    argv = draw(st.sampled_from([
        ["estimate", "--prompt", "1", "--output", "1"], ["estimate", "--prompt", "1", "--output", "1", "--json"],
        ["estimate", "--model", "llama-3.2-1b", "--batch", "1", "--prompt", "1", "--output", "2"],
        ["simulate", "--requests", "1", "--prompt", "1", "--output", "1"],
        ["kernel", "gemm", "--m", "1", "--n", "1", "--k", "1"], ["list", "models"], ["list", "hardware"],
        ["estimate", "--hardware", "H100"], ["estimate", "--hardware", "h100"], ["show", "hardware", "H100-SXM"],
        ["estimate", "--model", "LLAMA-3-8B"], ["estimate", "--model", "llama-3.2-1b", "--place", "kv=nvme"],
    ]))
    return argv, {}


cases = st.one_of(bad_file(), spoiled_file(), bad_table(), bad_flag(), bad_output(), degenerate())

# ---------------------------------------------------------------- running one case

NON_FINITE = re.compile(r"(?<![A-Za-z_])(nan|NaN|inf|-inf|Infinity)(?![A-Za-z_])")
DEGENERATE = re.compile(r"TPOT[^\n]*\s0 s$|decode throughput\s+0(\.0)? tok/s|(?<![\d.,])inf [PTGMk]?B/s", re.M)
STDERR_LINE = re.compile(r"^((whatif: )?(error|warning|note): |report: |wrote |$)")


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that no `except Exception` in the code under test swallows it."""


def _alarm(signum, frame):
    signal.setitimer(signal.ITIMER_REAL, 1.0)   # again in 1 s, should a callback (gc, a finalizer) swallow this one
    raise Hang(f"ran past {CASE_TIMEOUT_S} s")


def _strict_json(text: str):
    def refuse(name):
        raise ValueError(f"non-finite number {name} in JSON output")
    return json.loads(text, parse_constant=refuse)


def problems(argv: list[str]) -> list[str]:
    """What is wrong with running `whatif argv` (empty: nothing)."""
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, CASE_TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except Hang as exc:
        return [f"hang: {exc}"]
    except BaseException as exc:   # noqa: BLE001 - a traceback is exactly what this test looks for
        return [f"traceback: {type(exc).__name__}: {str(exc)[:300]}"]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    found = []
    stdout, stderr = out.getvalue(), err.getvalue()
    for line in stderr.splitlines():
        line = line.split("\r")[-1]   # a progress bar redraws its line
        if not STDERR_LINE.match(line):
            found.append(f"stderr line that is not a one-line message: {line[:200]!r}")
        if len(line) > MAX_ERROR_CHARS:
            found.append(f"stderr line of {len(line)} characters")
    if rc != 0 and "whatif: error: " not in stderr:
        found.append(f"exit status {rc} without a one-line error")
    if rc == 0:
        bad = [m for m in NON_FINITE.finditer(stdout) if not any(m.group(0) in a for a in argv)]  # not an echoed name
        if bad and "--json" not in argv:   # JSON: the strict parse below, where a string "nan" is no number
            found.append(f"non-finite number in the output: ...{stdout[max(0, bad[0].start() - 80):][:160]!r}")
        if "--json" in argv:
            try:
                _strict_json(stdout)
            except ValueError as exc:
                found.append(f"not strict JSON: {str(exc)[:200]}")
        if DEGENERATE.search(stdout):
            found.append(f"a degenerate result shown as normal: {DEGENERATE.search(stdout).group(0)!r}")
    return found


_counter = itertools.count()


def materialize(argv: list[str], files: dict[str, bytes], root: Path) -> list[str]:
    """Write the case's files into a fresh folder under `root` and put their paths into argv."""
    folder = root / f"case{next(_counter)}"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)

    def path(arg: str) -> str:
        return re.sub(r"@(DIR|OUT|F|T|M|config)", lambda m: str(folder / m.group(1)) if m.group(1) != "DIR"
                      else str(folder), arg)
    return [path(a) for a in argv]


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="the hang guard needs SIGALRM (POSIX)")
@settings(max_examples=CASES, derandomize=True, deadline=None, database=None, print_blob=False,
          suppress_health_check=list(HealthCheck))
@given(case=cases)
def test_bad_input_gives_one_line_errors_or_finite_results(fuzz_dir, case):
    argv, files = case
    argv = materialize(argv, files, fuzz_dir)
    found = problems(argv)
    shown = [a if len(a) < 80 else a[:60] + f"...({len(a)} chars)" for a in argv]
    assert not found, f"whatif {' '.join(shown)}: {'; '.join(found)}"


# ---------------------------------------------------------------- the residue of a fuzz run (issue 40), each a case

TRACE_HEAD = "arrival_s,prompt_tokens,output_tokens,prefix_id,prefix_tokens\n"
CALIBRATION_SMOOTH = _spoiled(CALIBRATION, ("classes", "gemm", "smooth"), -1)
TABLE_FAMILY = TABLE_HEADER + "\n" + "\n".join(
    ",".join("warp_drive" if i == TABLE_HEADER.split(",").index("family") else cell
             for i, cell in enumerate(row.split(","))) for row in TABLE_ROWS) + "\n"
RESIDUE = [  # (argv, files, what the one-line error names)
    (["estimate", "--model", "a" * 300 + ".yaml"], {}, "longer than the file system allows"),
    (["estimate", "--calibration", "@F.yaml"], {}, "--calibration: no such file"),
    *[([command, "--scenario", "@F.yaml", *extra], {"F.yaml": _dump({**SCENARIO, **section})}, name)
      for command, extra in (("estimate", []), ("compare", []), ("report", ["--out", "@OUT.html"]))
      for section, name in (({"slo": {"attainment": 2}}, "slo.attainment"), ({"horizon_s": 0}, "horizon_s"),
                            ({"engine": {"batching": ["static"]}}, "engine.batching"),
                            ({"traffic": {"arrival": ["gamma"]}}, "traffic.arrival"),
                            ({"traffic": {"prompt": 1.5}}, "traffic.prompt"),
                            ({"workload": {"prompt": 1.5}}, "workload.prompt"))],
    *[(["simulate", "--trace", "@T.csv"], {"T.csv": (TRACE_HEAD + row).encode()}, column)
      for row, column in (("0,64.5,16,,\n", "prompt_tokens"), ("0,64,x,,\n", "output_tokens"),
                          ("0,64,16,a,100\n", "prefix_tokens"))],
    (["estimate", "--calibration", "@F.yaml"], {"F.yaml": _dump(CALIBRATION_SMOOTH)}, "smooth"),
    (["validate", "report", "@M.csv"], {"M.csv": TABLE_FAMILY.encode()}, "family 'warp_drive'"),
    (["validate", "calibrate", "@M.csv"], {"M.csv": TABLE_FAMILY.encode()}, "family 'warp_drive'"),
    (["report", "--batches=", "--out", "@OUT.html"], {}, "--batches"),
]


@pytest.mark.parametrize("argv,files,named", RESIDUE, ids=range(len(RESIDUE)))
def test_fuzz_residue_is_a_one_line_error(fuzz_dir, capsys, argv, files, named):
    argv = materialize(argv, files, fuzz_dir)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("whatif: error: ") and named in err, err


def test_one_output_token_has_no_decode_figures(capsys):
    assert main(["estimate", "--prompt", "1", "--output", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["tpot_s"] is None and d["decode_throughput_tok_s"] is None and d["throughput_tok_s"] > 0
