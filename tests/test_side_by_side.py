"""benchmarks/side_by_side.py: the same command against this checkout and a baseline, in turn, as ratios."""
import pytest

from tests.benchmark_module import load_benchmark

sbs = load_benchmark("side_by_side")


def test_no_baseline_and_a_folder_baseline(tmp_path):
    with sbs.baseline_tree(None) as tree:
        assert tree is None
    with sbs.baseline_tree(str(tmp_path)) as tree:
        assert tree == tmp_path.resolve()


def test_a_baseline_that_is_neither_a_commit_nor_a_folder_is_a_one_line_error():
    with pytest.raises(SystemExit, match="--baseline: 'no-such-commit-xyz' is not a commit"):
        with sbs.baseline_tree("no-such-commit-xyz"):
            pass


def test_runs_alternate_and_the_ratio_is_baseline_over_this():
    trees = {"this": sbs.ROOT, "baseline": sbs.ROOT}
    results = sbs.alternate(trees, ["-c", "print('ok')"], runs=2, warmup=False)
    assert all(len(r.cpu) == 2 and len(r.wall) == 2 and r.out.strip() == "ok" for r in results.values())
    row = sbs.ratio_row("a command", results)
    assert row[0] == "a command" and row[5].endswith("x") and row[6].endswith("x")
    assert sbs.table([row]).splitlines()[0].startswith("command")
    alone = sbs.ratio_row("a command", {"this": results["this"]})
    assert alone[3:] == ["-", "-", "-", "-"]


def test_a_failing_command_names_the_tree():
    with pytest.raises(SystemExit, match="failed in"):
        sbs.run_once(sbs.ROOT, ["-c", "raise SystemExit(3)"])
