"""A tool's answer kept for the rest of an agent's step.

An analyst's validator asks the tools the analyst called again, with the same arguments at
the same instant, to check the report's figures. Within one step (one set of tool
dependencies, one run, one instant) the data cannot change, so the second call gets a copy
of the first call's answer instead of reading and computing it all again. Nothing crosses
steps or runs (a replay is a run of its own), only answers are kept, never errors, and a
kept answer is given only when the market would have let the call read at its instant (a
look-ahead guard still refuses a call past the decision in progress).
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, ParamSpec, TypeVar

from pydantic import BaseModel

from alphadesk.agent import RunContext
from alphadesk.data.base import MarketData
from alphadesk.data.checked import check_read
from alphadesk.kept import Kept

__all__ = ["once_per_step"]

P = ParamSpec("P")
T = TypeVar("T")

# Shared by the process, not held by a step: a tool is a plain function that sees only its
# ``RunContext``, and the key names the step (its dependencies' identity, run and instant),
# so no step ever reads another's answer. Each answer sits beside a weak reference to its
# step's dependencies: a kept answer never keeps a finished run's recorder or ledger alive.
_ANSWERS: Kept[Hashable, tuple[weakref.ref[Any], Any]] = Kept(512)


def once_per_step(function: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """``function`` (a tool taking ``ctx`` first) answering a call it already answered with
    the same dependencies, run, instant and arguments from memory."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    async def kept(*args: P.args, **kwargs: P.kwargs) -> T:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        ctx, *rest = bound.arguments.values()
        if not isinstance(ctx, RunContext):  # called outside a run: no step to keep it for
            return await function(*args, **kwargs)
        deps = ctx.deps
        key = (function, id(deps), ctx.run_id, ctx.as_of, tuple(rest))
        try:
            found = _ANSWERS.get(key)
        except TypeError:  # an argument that cannot be a key: nothing to keep
            return await function(*args, **kwargs)
        if found is not None and found[0]() is deps:  # the same deps: their id not reused
            market: MarketData | None = getattr(deps, "market", None)
            if market is not None:
                symbol = str(rest[0]) if rest else ""
                check_read(market, f"{function.__name__} (answered before)", symbol, ctx.as_of)
            return _copy(found[1])
        answer = await function(*args, **kwargs)
        try:
            step = weakref.ref(deps)
        except TypeError:  # dependencies that cannot be referred to weakly: keep nothing
            return answer
        _ANSWERS.put(key, (step, _copy(answer)))  # the caller may change its answer
        return answer

    return kept


def _copy(answer: T) -> T:
    """A copy of an answer, so that what is kept and what is handed out are not shared:
    dumped and validated again, a new tree built by pydantic's core (a fourth of what a
    deep copy costs)."""
    if isinstance(answer, BaseModel):
        return type(answer).model_validate(answer.model_dump())
    return answer
