"""mypyc's class marks, as no-ops when run as plain Python (mypy_extensions is not a dependency).

mypy (and so mypyc) reads the TYPE_CHECKING branch and sees mypy_extensions.mypyc_attr; the interpreter takes the
other one. Used by the hot modules (modules.HOT): `@mypyc_attr(allow_interpreted_subclasses=True)` keeps a compiled
class subclassable by users' code (the scheduling policies), `native_class=False` compiles a class whose base is a
builtin (clock.Signal's list) as an ordinary Python class; `@trait` lets a native class take it as one of several
bases (the Scheduler's mixins)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr, trait
else:
    def mypyc_attr(*_args, **_marks):
        return lambda cls: cls

    def trait(cls):
        return cls

__all__ = ["mypyc_attr", "trait"]
