"""How the rules policies weigh evidence: signed weights summed into a score."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from alphadesk.agents.bounds import at_most
from alphadesk.agents.desk.models import Evidence, Signal

__all__ = [
    "ANALYST_WEIGHTS",
    "SIGNAL_THRESHOLD",
    "Tally",
    "clamp",
    "collect_missing",
    "net_score",
    "signal_of",
]

# |score| below this is no signal: the evidence nets out.
SIGNAL_THRESHOLD = 0.15


def clamp(value: float, low: float = -1.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def signal_of(score: float) -> Signal:
    if score >= SIGNAL_THRESHOLD:
        return "bullish"
    if score <= -SIGNAL_THRESHOLD:
        return "bearish"
    return "neutral"


def collect_missing(*outputs: Any) -> list[str]:
    """The ``missing`` lines of tool outputs (JSON objects), in order, without repeats,
    within the answer's ceiling."""
    lines: list[str] = []
    for output in outputs:
        if isinstance(output, dict):
            lines += [str(m) for m in output.get("missing") or []]
    return at_most(list(dict.fromkeys(lines)))


@dataclass
class Tally:
    """Facts with signed weights; the score is their sum, clamped to [-1, 1]."""

    figures: dict[str, float]
    _items: list[tuple[float, Evidence]] = field(default_factory=list)

    def add(self, fact: str, weight: float, reading: str) -> None:
        """Count ``fact`` (a key of ``figures``) with ``weight`` (> 0 bullish)."""
        if fact not in self.figures:
            return
        lean: Signal = "bullish" if weight > 0 else "bearish" if weight < 0 else "neutral"
        item = Evidence(fact=fact, value=self.figures[fact], lean=lean, reading=reading)
        self._items.append((weight, item))

    @property
    def score(self) -> float:
        return round(clamp(sum(w for w, _ in self._items)), 2)

    @property
    def evidence(self) -> list[Evidence]:
        """Strongest first."""
        return [e for _, e in sorted(self._items, key=lambda pair: -abs(pair[0]))]


# How much each analyst's score counts in the desk's net view (times its confidence).
ANALYST_WEIGHTS = {"market": 1.0, "fundamentals": 0.8, "news": 0.6, "sentiment": 0.5}


def net_score(briefing: dict[str, Any]) -> float:
    """The analysts' scores averaged by weight and confidence; 0 when none could say."""
    total = weight = 0.0
    for analyst, report in briefing.items():
        w = ANALYST_WEIGHTS.get(analyst, 0.5) * float(report["confidence"])
        total += w * float(report["score"])
        weight += w
    return round(total / weight, 3) if weight else 0.0
