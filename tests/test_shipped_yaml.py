"""Shipped profiles are parsed by libyaml's loader (start-up speed) to the same mappings as users' files
get through the limited loader; a user's file keeps the limits."""
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.specs import profiles
from whatif.specs.safe_yaml import MAX_ALIASES, parse_yaml, read_text

SHIPPED = sorted(p for d in ("hardware_profiles", "model_profiles", "engine_profiles")
                 for p in (profiles.PACKAGE_DIR / d).glob("*.yaml"))


def test_there_are_shipped_profiles():
    assert len(SHIPPED) > 10


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_fast_loader_reads_a_shipped_profile_as_the_limited_one(path: Path):
    text = read_text(path)
    assert parse_yaml(text, str(path), shipped=True) == parse_yaml(text, str(path))


def test_a_users_file_keeps_the_limits(tmp_path: Path):
    lines = ["a: &x 1"] + [f"k{i}: *x" for i in range(MAX_ALIASES + 1)]
    user = tmp_path / "many_aliases.yaml"
    user.write_text("\n".join(lines) + "\n")
    with pytest.raises(WhatifError, match="aliases"):
        profiles.read_yaml(user)
