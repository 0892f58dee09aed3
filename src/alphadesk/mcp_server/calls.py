"""One MCP tool call: the arguments checked by the tool's own validator, the instant
resolved (``as_of``), the tool run with the server's dependencies, and its value turned
into MCP content (text, images, structured content). A failure the caller can fix is an
error result that says what went wrong; nothing in a result carries a secret."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from mcp import types
from pydantic import BaseModel, ValidationError

from alphadesk.agent import ModelRetry, RunContext, Tool, ToolReturn
from alphadesk.agent.events import BaseEvent, EventSink
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before
from alphadesk.data.current import resolve_as_of
from alphadesk.data.errors import DataError
from alphadesk.data.symbols import InvalidSymbol, normalize_symbol
from alphadesk.mcp_server.guards import CallError, Guards
from alphadesk.mcp_server.schemas import AS_OF, MODEL
from alphadesk.store.redact import redact, redact_json
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import CatalogEntry

__all__ = ["Progress", "ToolCaller", "content_of", "instant", "problems"]

# Where a call reports what it does: a run's events, or a line a desk says itself.
Progress = Callable[[BaseEvent | str], None]

# For a tool without a symbol, "the last close the data covers" is this symbol's.
_REFERENCE_SYMBOL = "SPY"


def _as_of_day(raw: Any) -> date | None:
    if raw is None:
        return None
    try:
        return date.fromisoformat(str(raw))
    except ValueError:
        raise CallError(f"as_of {str(raw)[:40]!r} is not a date; pass YYYY-MM-DD") from None


def _symbols(kwargs: dict[str, Any]) -> list[str]:
    if isinstance(kwargs.get("symbol"), str):
        return [kwargs["symbol"]]
    listed = kwargs.get("symbols")
    if isinstance(listed, list) and listed:
        return [str(s) for s in listed]
    return []


def content_of(value: Any) -> tuple[list[types.ContentBlock], Any]:
    """The text (and images) a client reads, and the structured value when it is a model."""
    images: list[types.ContentBlock] = []
    if isinstance(value, ToolReturn):
        images = [
            types.ImageContent(
                data=base64.b64encode(image.data).decode(), mime_type=image.media_type
            )
            for image in value.images
        ]
        value = value.value
    if isinstance(value, BaseModel):
        structured = redact_json(value.model_dump(mode="json"))
        text = json.dumps(structured, ensure_ascii=False)
    else:
        structured = None
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    return [types.TextContent(text=redact(text)), *images], structured


def instant(market: MarketData, day: date | None, symbols: list[str]) -> tuple[datetime, str]:
    """The instant to run at (a day's close; without one, now or the last close the data
    covers for ``symbols``) and a sentence saying which it is."""
    if day is not None:
        try:
            at = close_on_or_before(day)
        except ValueError as exc:
            raise CallError(f"as_of {day}: {exc}") from None
        return at, f"As of the close of {at.date()}."
    at, note = resolve_as_of(market, None, symbols or [_REFERENCE_SYMBOL], datetime.now(UTC))
    return at, note or f"As of now ({at.isoformat(timespec='seconds')})."


def problems(exc: ValidationError) -> str:
    """A validation error in a line: each wrong argument and what was wrong with it."""
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
    )


@dataclass(frozen=True)
class ToolCaller:
    """Runs catalogue tools for MCP clients with one set of dependencies.

    Attributes:
        market: The market data every tool reads.
        deps: The tools' dependencies for one call, given who follows its events (the
            run tools' runs report to it) and the model a run tool's call asked for.
        guards: Which models a run tool's call may name, how many run at once and how long.
    """

    market: MarketData
    deps: Callable[[EventSink, str | None], ChatDeps]
    guards: Guards

    async def call(
        self, entry: CatalogEntry, arguments: dict[str, Any], on_event: EventSink
    ) -> types.CallToolResult:
        """Run the tool, its events (and its runs' events) to ``on_event``; a mistake
        the caller can fix raises :class:`CallError`."""
        arguments = dict(arguments)
        day = _as_of_day(arguments.pop(AS_OF, None))
        runs = entry.toolset == "desks"  # the desk tools are run tools: a call makes a run
        model = self.guards.model(arguments.pop(MODEL, None)) if runs else None
        kwargs = _validated(entry.tool, arguments)
        at, said = instant(self.market, day, _symbols(kwargs))
        deps = self.deps(on_event, model)
        ctx = RunContext(deps=deps, as_of=at, run_id="mcp", agent="mcp", emit=on_event)
        try:
            async with self.guards.run_call() if runs else nullcontext():
                value = await entry.tool.call(ctx, kwargs)
        except (ModelRetry, DataError, InvalidSymbol) as exc:
            raise CallError(f"{entry.name}: {exc}") from None
        content, structured = content_of(value)
        content.append(types.TextContent(text=said))
        return types.CallToolResult(
            content=content,
            structured_content=structured,
            _meta={"alphadesk/as_of": at.isoformat()},
        )


def _validated(item: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's keyword arguments, checked by its own validator; symbols normalised."""
    try:
        kwargs = item.validate(json.dumps(arguments))
    except ValidationError as exc:
        raise CallError(f"invalid arguments for {item.name}: {problems(exc)}") from None
    except ValueError as exc:
        raise CallError(f"invalid arguments for {item.name}: {exc}") from None
    if isinstance(kwargs.get("symbol"), str):
        try:
            kwargs["symbol"] = normalize_symbol(kwargs["symbol"])
        except InvalidSymbol as exc:
            raise CallError(str(exc)) from None
    return kwargs
