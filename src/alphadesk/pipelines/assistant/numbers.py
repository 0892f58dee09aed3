"""Checking the figures of an answer against the tool results it was written from.

Every number in the answer is traced to a number in a tool result, the question or the
conversation, within the rounding the answer shows (``250.7`` matches ``250.69``; ``82%``
matches ``82.2`` or ``0.822``; ``$1.2M`` matches ``1,204,000``; a loss of ``$177`` matches
``-177.4``). Dates, times, years and small counts (0 to 10, the "2 expected moves" of
prose) are not figures. Whatever cannot be traced is flagged, as written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from alphadesk.pipelines.assistant.models import NumberCheck

__all__ = ["check_numbers", "figures"]

_NOISE = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}\b"
    r"|^\s*\d+[.)]\s",
    re.MULTILINE,
)
_FIGURE = re.compile(
    r"(?<![\w.])(?P<sign>[-−+])?\$?(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?P<dec>\.\d+)?"
    r"(?P<suffix>\s?(?:%|[kKmMbB](?![a-zA-Z])|bn\b|million\b|billion\b|thousand\b))?"
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "bn": 1e9, "thousand": 1e3, "million": 1e6,
          "billion": 1e9}  # fmt: skip
_SMALL = 10


class _Figure:
    __slots__ = ("percent", "text", "tolerance", "value")

    def __init__(self, text: str, value: float, tolerance: float, percent: bool) -> None:
        self.text, self.value, self.tolerance, self.percent = text, value, tolerance, percent


def figures(text: str) -> list[_Figure]:
    """The figures of ``text``: value, the tolerance its rounding allows, percent or not."""
    cleaned = _NOISE.sub(" ", text)
    found: list[_Figure] = []
    for match in _FIGURE.finditer(cleaned):
        digits = match["num"].replace(",", "")
        decimals = len(match["dec"]) - 1 if match["dec"] else 0
        value = float(digits + (match["dec"] or ""))
        suffix = (match["suffix"] or "").strip().lower()
        if not suffix and not decimals and (value <= _SMALL or 1900 <= value <= 2100):
            continue  # a count or a year, not a figure
        scale = _SCALE.get(suffix, 1.0)
        tolerance = 0.5 * 10.0**-decimals * scale * 1.0001 + 1e-9
        if match["sign"] in ("-", "−"):
            value = -value
        found.append(_Figure(match.group(0).strip(), value * scale, tolerance, suffix == "%"))
    return found


def _known(texts: Iterable[str]) -> list[float]:
    values: set[float] = set()
    for text in texts:
        for raw in _NUMBER.findall(text.replace(",", "")):
            try:
                number = float(raw)
            except ValueError:
                continue
            if math.isfinite(number):
                values.add(number)
    return sorted(values)


def _traced(figure: _Figure, known: list[float]) -> bool:
    value, tolerance = abs(figure.value), figure.tolerance
    # A percentage may be a decimal in the tool (82% / 0.82), and the other way round.
    other = (value / 100, tolerance / 100) if figure.percent else (value * 100, tolerance * 100)
    return any(abs(abs(k) - v) <= tol for v, tol in ((value, tolerance), other) for k in known)


def check_numbers(answer: str, sources: Iterable[str]) -> NumberCheck:
    """Trace every figure of ``answer`` to ``sources`` (tool results, the question...)."""
    known = _known(sources)
    found = figures(answer)
    unverified = [f.text for f in found if not _traced(f, known)]
    return NumberCheck(
        checked=len(found),
        traced=len(found) - len(unverified),
        unverified=list(dict.fromkeys(unverified)),
    )
