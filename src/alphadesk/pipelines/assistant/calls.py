"""Tools under the question's limits, and the DIRECT and PARALLEL way of calling them.

Every tool the assistant offers is wrapped: a call beyond ``max_tool_calls`` is refused, a
call longer than ``tool_timeout_s`` is stopped, and any failure is reported to the model
(``report_errors``) rather than ending the run, so the answer can say what it could not
get. DIRECT and PARALLEL run the router's calls concurrently, without a model turn, and
emit the engine's own tool events so every front end shows them alike.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from alphadesk.agent import RunContext, Tool, Toolset
from alphadesk.agent import events as ev
from alphadesk.agent.calls import call_key
from alphadesk.agent.errors import describe_invalid
from alphadesk.agent.tools import render_result
from alphadesk.llm.messages import text_of

__all__ = ["CallBudget", "PlannedCall", "ToolOutcome", "ToolTimeout", "limited", "run_planned"]

_ids = itertools.count(1)
_DISPLAY = 2_000


class ToolTimeout(Exception):
    """A tool took longer than the question allows."""


class ToolBudgetExhausted(Exception):
    """The question has used all the tool calls it may make."""


@dataclass
class CallBudget:
    """Tool calls left for one question, shared by every tool of it."""

    allowed: int
    used: int = 0

    def take(self, tool: str) -> None:
        if self.used >= self.allowed:
            raise ToolBudgetExhausted(
                f"{tool} not called: the limit of {self.allowed} tool calls per question is "
                "reached; answer with what you have"
            )
        self.used += 1


def _limited(item: Tool, budget: CallBudget, timeout_s: float) -> Tool:
    inner = item.function

    async def limited(*args: Any, **kwargs: Any) -> Any:
        budget.take(item.name)
        try:
            async with asyncio.timeout(timeout_s):
                return await inner(*args, **kwargs)
        except TimeoutError:
            raise ToolTimeout(
                f"{item.name} did not answer within {timeout_s:g} s; its data is missing"
            ) from None

    return replace(item, function=limited, report_errors=True)


def limited(toolset: Toolset, budget: CallBudget, timeout_s: float) -> Toolset:
    """``toolset`` with every tool under ``budget`` and ``timeout_s``, errors reported."""
    return Toolset(toolset.name, tuple(_limited(t, budget, timeout_s) for t in toolset))


@dataclass(frozen=True)
class PlannedCall:
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    """One executed call: the result as the model would see it, or the error."""

    tool: str
    arguments: dict[str, Any]
    ok: bool
    result: Any
    error: str | None
    seconds: float

    def as_json(self) -> dict[str, Any]:
        body = {"tool": self.tool, "arguments": self.arguments, "ok": self.ok}
        return body | ({"result": self.result} if self.ok else {"error": self.error})


async def _one(toolset: Toolset, ctx: RunContext[Any], call: PlannedCall) -> ToolOutcome:
    call_id = f"plan_{next(_ids)}"
    ids = {"run_id": ctx.run_id, "agent": ctx.agent, "call_id": call_id, "tool": call.tool}
    ctx.emit(ev.ToolStarted(**ids, arguments=json.dumps(call.arguments)))
    started = time.monotonic()
    item = toolset.get(call.tool)
    try:
        if item is None:
            raise KeyError(f"unknown tool {call.tool!r}")
        kwargs = item.validate(json.dumps(call.arguments))
        value = await item.call(replace(ctx, tool_name=item.name, tool_call_id=call_id), kwargs)
    except ValidationError as exc:
        return _failed(ctx, ids, call, f"invalid arguments: {describe_invalid(exc)}", started)
    except Exception as exc:  # reported, like report_errors tools in the loop
        return _failed(ctx, ids, call, f"{type(exc).__name__}: {exc}", started)
    text = text_of(render_result(value))
    seconds = round(time.monotonic() - started, 4)
    ctx.emit(ev.ToolFinished(**ids, result=text[:_DISPLAY], seconds=seconds))
    try:
        parsed: Any = json.loads(text)
    except json.JSONDecodeError:
        parsed = text
    return ToolOutcome(call.tool, call.arguments, True, parsed, None, seconds)


def _failed(
    ctx: RunContext[Any], ids: dict[str, str], call: PlannedCall, error: str, started: float
) -> ToolOutcome:
    ctx.emit(ev.ToolFailed(**ids, error=error, retry=False))
    seconds = round(time.monotonic() - started, 4)
    return ToolOutcome(call.tool, call.arguments, False, None, error, seconds)


async def run_planned(
    toolset: Toolset, ctx: RunContext[Any], calls: list[PlannedCall]
) -> list[ToolOutcome]:
    """Run ``calls`` concurrently, identical ones (as the agent loop judges them) once;
    every call ends as a result or an error, listed once, in order."""
    unique: dict[tuple[str, str], PlannedCall] = {}
    for call in calls:
        unique.setdefault(call_key(call.tool, json.dumps(call.arguments)), call)
    return list(await asyncio.gather(*(_one(toolset, ctx, call) for call in unique.values())))
