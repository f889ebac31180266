"""The one exception type for errors a user can cause (bad names, bad YAML, impossible configs)."""


class WhatifError(Exception):
    """A user-facing error: the message names the file/field/value and what would be valid.

    The CLI prints it on one line without a traceback and exits non-zero.
    """


def closest(name: str, candidates) -> str:
    """A ' (did you mean X?)' hint for an unknown name, or '' when nothing is close."""
    import difflib

    match = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.5)
    return f" (did you mean '{match[0]}'?)" if match else ""


def check_mapping(raw, allowed, where: str) -> dict:
    """`raw` must be a mapping whose keys are all in `allowed`; returns it."""
    if not isinstance(raw, dict):
        raise WhatifError(f"{where}: expected a mapping, got {raw!r}")
    unknown = set(raw) - set(allowed)
    if unknown:
        raise WhatifError(f"{where}: unknown field(s) {sorted(unknown)}; valid: {', '.join(sorted(allowed))}")
    return raw


def positive_int(value, where: str) -> int:
    """`value` must be an int >= 1 (not a bool); `where` names the flag or field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WhatifError(f"{where}: {value!r} must be a positive integer")
    return value
