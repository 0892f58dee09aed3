"""What the rules policies take from past situations recalled from memory.

A recollection's outcome records how the stock moved over the decision's horizon. A
similar past situation in which the stock rose argues for buying now, one in which it fell
argues against; the policies weigh that modestly and say so.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MOVE_THRESHOLD", "contrary_lessons", "lesson_line", "past_move"]

MOVE_THRESHOLD = 2.0  # percent: a smaller move taught nothing about direction


def past_move(memory: dict[str, Any]) -> float:
    """+1 when the stock rose after the past situation, -1 when it fell, else 0."""
    move = (memory.get("outcome") or {}).get("return_pct")
    if not isinstance(move, int | float) or abs(move) < MOVE_THRESHOLD:
        return 0.0
    return 1.0 if move > 0 else -1.0


def lesson_line(memory: dict[str, Any]) -> str:
    outcome = memory.get("outcome") or {}
    when = str(memory.get("decided_at", ""))[:10]
    return (
        f"on {when} a similar {outcome.get('action', '?')} was followed by a "
        f"{outcome.get('return_pct', 0):+.1f}% move: {memory.get('lesson', '')}"
    )


def contrary_lessons(memories: list[dict[str, Any]] | None, action: str) -> list[str]:
    """Past similar situations in which the stock moved against ``action``."""
    sign = {"BUY": 1.0, "SELL": -1.0}.get(action, 0.0)
    return [lesson_line(m) for m in memories or [] if sign and past_move(m) == -sign]
