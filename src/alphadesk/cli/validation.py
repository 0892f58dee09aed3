"""Pydantic validation errors in plain words, for every command.

``question: must not be empty`` rather than a pydantic dump with error codes, the input
echoed back and a documentation link. A command catches ``ValidationError`` and raises
``cli.common.fail_invalid(exc)``, which prints these words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

__all__ = ["validation_problems"]

# pydantic's opening words -> plain ones ("Input should be greater than 0" -> "must be ...")
_SHOULD = re.compile(r"^(?:Input|String|List|Value|Dictionary|Tuple|Set|Decimal) should ")


def validation_problems(exc: ValidationError, labels: Mapping[str, str] | None = None) -> str:
    """Every problem of ``exc`` as ``field: what is wrong``, joined by "; ".

    ``labels`` renames fields to what the user typed (e.g. ``{"price": "PRICE"}``).
    """
    labels = labels or {}
    problems = []
    for error in exc.errors(include_url=False):
        where = ".".join(labels.get(str(part), str(part)) for part in error["loc"])
        what = _plain(error)
        problems.append(f"{where}: {what}" if where else what)
    return "; ".join(dict.fromkeys(problems))  # the same problem once


def _plain(error: ErrorDetails) -> str:
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "missing":
        return "is required"
    if kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind == "value_error":
        return str(ctx.get("error") or error["msg"]).removeprefix("Value error, ")
    message = _SHOULD.sub("must ", str(error["msg"]))
    message = message.rstrip(".")
    value = error.get("input")
    if isinstance(value, int | float) and not isinstance(value, bool):
        message += f" (got {value:g})"
    elif kind in ("literal_error", "enum") and isinstance(value, str) and len(value) <= 40:
        message += f" (got {value!r})"  # a choice the user mistyped
    return message
