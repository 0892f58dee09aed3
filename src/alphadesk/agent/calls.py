"""What the loop makes of one turn's tool calls before it runs any of them.

Small models loop: one asked for the same filings 124 times in a turn, another sent 12 KB
of unterminated JSON that the server then refused to read back. So, per turn:

- identical calls (same tool, same arguments once canonicalised) run once; a repeat of a
  call made in an earlier turn of the run is answered with a pointer to that result;
- at most ``cap`` calls stay in the conversation; the rest are dropped and the model is
  told, so the history (and the next request) stays small;
- arguments that are not a JSON object, or are too long to be real arguments, are replaced
  by ``{}`` in the history: the server never reads them back, and the call is answered with
  what was wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from alphadesk.llm.messages import ToolCall

__all__ = ["MAX_ARGUMENT_CHARS", "CallLog", "TurnPlan", "call_key", "plan_turn"]

MAX_ARGUMENT_CHARS = 2_000
"""Longer arguments are not a tool call but a runaway generation (tools take short values)."""


def canonical_arguments(raw: str) -> str | None:
    """``raw`` as sorted, compact JSON; None when it is not a JSON object of sane size."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return None
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call_key(name: str, raw: str) -> tuple[str, str]:
    """What makes two calls identical: the tool and its canonical arguments."""
    canonical = canonical_arguments(raw)
    return name, canonical if canonical is not None else f"invalid:{raw[:200]}"


def argument_error(raw: str) -> str | None:
    """Why ``raw`` cannot be a tool's arguments, briefly; None when it can."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return (
            f"the arguments were {len(raw):,} characters long (at most "
            f"{MAX_ARGUMENT_CHARS:,}); a tool takes a few short values"
        )
    try:
        data = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        return f"the arguments were not valid JSON ({exc.msg} at char {exc.pos})"
    return None if isinstance(data, dict) else "the arguments must be a JSON object"


@dataclass
class CallLog:
    """The calls made so far in one run, by key: the id whose result answers a repeat."""

    made: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class TurnPlan:
    """One turn's calls, sorted out.

    Attributes:
        kept: The calls the history keeps, in the model's order (invalid ones with ``{}``).
        run: The calls to run now.
        invalid: Call id -> what was wrong with its arguments (answered, not run).
        repeated: Call id -> the earlier call id whose result answers it.
        duplicates: Identical calls within the turn that were dropped.
        over_cap: Calls beyond the per-turn cap that were dropped.
    """

    kept: list[ToolCall]
    run: list[ToolCall]
    invalid: dict[str, str]
    repeated: dict[str, str]
    duplicates: int
    over_cap: int

    def note(self, cap: int) -> str | None:
        """What the model is told about the calls it made that were dropped."""
        parts = []
        if self.duplicates:
            parts.append(
                f"{self.duplicates} repeated identical tool call(s) were dropped: "
                "each call with the same arguments runs once"
            )
        if self.over_cap:
            parts.append(f"{self.over_cap} call(s) beyond the limit of {cap} per turn were not run")
        if not parts:
            return None
        return "Note: " + "; ".join(parts) + ". Use the results above; call only what is missing."


def plan_turn(calls: list[ToolCall], log: CallLog, cap: int) -> TurnPlan:
    """Sort out ``calls`` against the run's ``log`` (which it updates) and the ``cap``."""
    kept: list[ToolCall] = []
    run: list[ToolCall] = []
    invalid: dict[str, str] = {}
    repeated: dict[str, str] = {}
    this_turn: set[tuple[str, str]] = set()
    duplicates = over_cap = 0
    for call in calls:
        key = call_key(call.name, call.arguments)
        if key in this_turn:
            duplicates += 1
            continue
        if len(kept) >= cap:
            over_cap += 1
            continue
        this_turn.add(key)
        error = argument_error(call.arguments)
        if error is not None:
            invalid[call.id] = error
            kept.append(call.model_copy(update={"arguments": "{}"}))
            continue
        kept.append(call)
        if key in log.made:
            repeated[call.id] = log.made[key]
        else:
            log.made[key] = call.id
            run.append(call)
    return TurnPlan(kept, run, invalid, repeated, duplicates, over_cap)
