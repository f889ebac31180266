"""benchmarks/row_at_concurrency.py: a row's simulate keywords moved to another client count."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import row_at_concurrency as rac  # noqa: E402


def test_clients_requests_and_batch_limit_follow_n_and_the_rest_is_kept():
    kw = {"model": "m", "max_num_seqs": 64, "traffic": {"concurrency": 64, "requests": 384, "seed": 1}}
    out = rac.at_concurrency(kw, 256)
    assert out["traffic"] == {"concurrency": 256, "requests": 1536, "seed": 1}
    assert out["max_num_seqs"] == 256 and out["model"] == "m"
    assert kw["traffic"]["concurrency"] == 64   # the row's own keywords untouched


def test_a_client_count_below_one_is_refused():
    with pytest.raises(ValueError, match="N: a client count"):
        rac.at_concurrency({"traffic": {"concurrency": 4, "requests": 24}}, 0)


def test_bad_arguments_print_usage_not_a_traceback(capsys):
    assert rac.main(["only-an-id"]) == 2
    assert "usage" in capsys.readouterr().err
