"""Op times remembered by op value, for a caller that prices many passes of one PassSetup (a search times each
replica setup at many batches, chunks and decode contexts): the ops a pass builds repeat across passes (a decode
step's projections, MLP, norms and collectives depend on its token count, not its context), so each distinct op is
priced once. Exact: a hit is the OpTime time_op gave an equal op on the same GPU, efficiency, link and tiers (the
memo is one setup's), re-labelled with the caller's op object (forward_pass keys gaps and launches by id(op))."""
from __future__ import annotations

from dataclasses import fields
from operator import attrgetter

from .ops import Op
from .timing import OpTime, time_op

_FIELDS = attrgetter(*(f.name for f in fields(Op) if f.name != "bytes"))   # (one C call: the key is most of a hit)


def op_key(op) -> tuple | None:
    """Every field of `op` (its bytes dict as items), or None where one is not hashable (a mixed pass's attention:
    its shape holds its two part ops) or `op` is not a plain Op."""
    if type(op) is not Op or getattr(op.shape, "parts", ()):
        return None
    return _FIELDS(op), tuple(op.bytes.items())


def memo_price(memo: dict):
    """time_op(op, *args) through `memo` ({op_key: OpTime}); the args are the setup's and fixed for the memo."""
    def price(op, *args) -> OpTime:
        key = op_key(op)
        if key is None:
            return time_op(op, *args)
        t = memo.get(key)
        if t is None:
            t = memo[key] = time_op(op, *args)
        elif t.op is not op:
            t = OpTime(op, t.time_s, t.compute_s, t.memory_s, t.overhead_s, t.bound)
        return t
    return price
