"""Files inside the package (shipped profiles, fit tables) are parsed by libyaml's loader and not walked
for the limits (start-up speed): each gives the same mapping as the limited loader gives a user's file,
and is within the limits; a user's file keeps them."""
from pathlib import Path

import pytest

from whatif.errors import WhatifError
from whatif.specs import profiles
from whatif.specs.safe_yaml import MAX_ALIASES, _check_tree, parse_yaml, read_text

SHIPPED = sorted(p for d in ("hardware_profiles", "model_profiles", "engine_profiles")
                 for p in (profiles.PACKAGE_DIR / d).glob("*.yaml"))
EVERY_FILE = sorted(profiles.PACKAGE_DIR.rglob("*.yaml"))


def test_there_are_shipped_profiles():
    assert len(SHIPPED) > 10


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_fast_loader_reads_a_shipped_profile_as_the_limited_one(path: Path):
    text = read_text(path)
    assert parse_yaml(text, str(path), shipped=True) == parse_yaml(text, str(path))


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: str(p.relative_to(profiles.PACKAGE_DIR)))
def test_every_file_in_the_package_is_within_the_limits(path: Path):
    data = profiles.read_yaml(path)
    _check_tree(data, str(path), int_keys=path.parent == profiles.SHIPPED_DATA_DIR)


def test_a_users_file_keeps_the_limits(tmp_path: Path):
    lines = ["a: &x 1"] + [f"k{i}: *x" for i in range(MAX_ALIASES + 1)]
    user = tmp_path / "many_aliases.yaml"
    user.write_text("\n".join(lines) + "\n")
    with pytest.raises(WhatifError, match="aliases"):
        profiles.read_yaml(user)
