"""Intermediates shared by the computations over one frame of bars.

Levels, patterns and trends each start from the same swing points, ATR and support and
resistance zones. Inside ``shared_intermediates(memo)`` the functions marked ``@shared``
compute each of these once per frame and arguments; outside it they compute as usual (a
frame changed in place between calls is never served a stale result).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

__all__ = ["shared", "shared_intermediates"]

P = ParamSpec("P")
T = TypeVar("T")

_MEMO: ContextVar[dict[Hashable, tuple[object, Any]] | None] = ContextVar(
    "alphadesk_analytics_memo", default=None
)


@contextmanager
def shared_intermediates(memo: dict[Hashable, tuple[object, Any]]) -> Iterator[None]:
    """Within the block, ``@shared`` functions keep their results in ``memo`` (the caller
    promises not to change a frame it passes meanwhile; results are frozen or not mutated)."""
    token = _MEMO.set(memo)
    try:
        yield
    finally:
        _MEMO.reset(token)


def shared(func: Callable[P, T]) -> Callable[P, T]:
    """``func(bars, ...)``, kept per frame and arguments (defaults filled in) inside
    ``shared_intermediates``; errors are not kept."""
    signature = inspect.signature(func)
    kinds = {p.kind for p in signature.parameters.values()}
    # A call passing every parameter by position needs no binding (else -1: always bind).
    arity = len(signature.parameters) if kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD} else -1

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        memo = _MEMO.get()
        if memo is None:
            return func(*args, **kwargs)
        values: tuple[Any, ...] = args
        if kwargs or len(args) != arity:  # binding costs more than most lookups save
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = tuple(bound.arguments.values())
        bars, *rest = values
        key = (wrapper, id(bars), tuple(rest))
        try:
            kept = memo.get(key)
        except TypeError:  # an unhashable argument: nothing to share
            return func(*args, **kwargs)
        if kept is None or kept[0] is not bars:
            # The frame is kept with the result so that its id is not reused meanwhile.
            kept = memo[key] = (bars, func(*args, **kwargs))
        return kept[1]

    return wrapper
