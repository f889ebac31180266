"""The one exception type for errors a user can cause (bad names, bad YAML, impossible configs)."""
from __future__ import annotations

import re

MAX_SHOWN = 80          # characters of a user's value quoted in a message
MAX_WORD = 120          # a longer unbroken run in a message is cut (a 5,000-digit number, a 10 kB name)


class WhatifError(Exception):
    """A user-facing error: the message names the file/field/value and what would be valid.

    The CLI prints it on one line without a traceback and exits non-zero: the message is made one line
    here (newlines escaped) and any unbroken run longer than MAX_WORD characters is cut to a prefix.
    """

    def __init__(self, message="", *args):
        super().__init__(one_line(str(message)), *args)


def _cut(match: re.Match) -> str:
    word = match.group(0)
    return f"{word[:MAX_SHOWN]}...({len(word):,} chars)"


def one_line(message: str) -> str:
    """`message` on one line, with over-long words shortened."""
    message = message.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\r")
    message = re.sub(r"[\x00-\x1f\x7f]", "?", message)
    return re.sub(rf"\S{{{MAX_WORD + 1},}}", _cut, message)


def shown(value) -> str:
    """A value as quoted in a message: its repr, cut to a short prefix saying how long it was."""
    try:
        text = repr(value) if not isinstance(value, (dict, list, tuple)) or len(value) <= 20 else None
    except (ValueError, RecursionError):   # an int too long for str(), a self-referencing structure
        text = None
    if text is None:
        if isinstance(value, int):
            return f"an integer of about {value.bit_length() * 0.30103:,.0f} digits"
        return f"a {type(value).__name__} of {len(value):,} items" if hasattr(value, "__len__") else "a value"
    if len(text) > MAX_SHOWN:
        return f"{text[:MAX_SHOWN]}...({len(text):,} chars)"
    return text


def closest(name: str, candidates) -> str:
    """A ' (did you mean X?)' hint for an unknown name, or '' when nothing is close or only itself.

    Case-insensitive: 'H100' suggests 'h100-sxm'; a name that starts a candidate ('h100' of 'h100-sxm', the
    family) is preferred over a merely similar one, and a candidate the name extends ('b200' of 'b200-sxm') is
    offered before it."""
    import difflib

    if not isinstance(name, str) or len(name) > 200:
        return ""
    names = [c for c in candidates if isinstance(c, str)]
    lower = name.lower()
    if any(c == name for c in names):
        return ""
    spelled = lower.replace("_", "-")   # 'fp8_block' / 'b200_sxm': the same name with the other separator
    exact = [c for c in names if c.lower().replace("_", "-") == spelled]
    family = sorted((c for c in names if c.lower().startswith(lower) and len(lower) >= 2), key=len)
    if exact or len(family) == 1:
        return f" (did you mean '{(exact or family)[0]}'?)"
    if family:   # 'h100' names a family: list its members
        listed = ", ".join(f"'{c}'" for c in sorted(family)[:6]) + (", ..." if len(family) > 6 else "")
        return f" (did you mean one of {listed}?)"
    by_lower = {c.lower(): c for c in names}
    match = difflib.get_close_matches(lower, list(by_lower), n=1, cutoff=0.5)
    similar = by_lower[match[0]] if match and by_lower[match[0]] != name else ""
    # 'b200-sxm' / 'b200_sxm' name 'b200' plus a suffix: offer that stem first, the similar spelling
    # ('h200-sxm', another GPU) after it, never alone
    stems = sorted((c for c in names if len(c) >= 2 and lower.startswith(c.lower()) and lower[len(c)] in "-_ "),
                   key=len)
    if stems and similar and similar != stems[-1]:
        return f" (did you mean '{stems[-1]}' or '{similar}'?)"
    if stems:
        return f" (did you mean '{stems[-1]}'?)"
    return f" (did you mean '{similar}'?)" if similar else ""


def check_mapping(raw, allowed, where: str) -> dict:
    """`raw` must be a mapping whose keys are all in `allowed`; returns it."""
    if not isinstance(raw, dict):
        raise WhatifError(f"{where}: expected a mapping, got {shown(raw)}")
    unknown = [k for k in raw if k not in set(allowed)]
    if unknown:
        listed = ", ".join(shown(k) for k in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise WhatifError(f"{where}: unknown field(s) {listed}; valid: {', '.join(sorted(allowed))}")
    return raw


def positive_int(value, where: str) -> int:
    """`value` must be an int >= 1 (not a bool); `where` names the flag or field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WhatifError(f"{where}: {shown(value)} must be a positive integer")
    return value
