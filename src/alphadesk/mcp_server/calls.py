"""One MCP tool call: the arguments checked by the tool's own validator, the instant
resolved (``as_of``), the tool run with the server's dependencies, and its value turned
into MCP content (text, images, structured content). A failure the caller can fix is an
error result that says what went wrong; nothing in a result carries a secret."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from mcp import types
from pydantic import BaseModel, ValidationError

from alphadesk.agent import ModelRetry, RunContext, Tool, ToolReturn
from alphadesk.agent.events import EventSink
from alphadesk.data.base import MarketData
from alphadesk.data.calendar import close_on_or_before
from alphadesk.data.current import resolve_as_of
from alphadesk.data.errors import DataError
from alphadesk.data.symbols import InvalidSymbol, normalize_symbol
from alphadesk.mcp_server.schemas import AS_OF
from alphadesk.store.redact import redact, redact_json
from alphadesk.tools.assistant.deps import ChatDeps
from alphadesk.tools.catalog import CatalogEntry

__all__ = ["CallError", "ToolCaller"]

# For a tool without a symbol, "the last close the data covers" is this symbol's.
_REFERENCE_SYMBOL = "SPY"


class CallError(Exception):
    """A call the client can fix: the message says what was wrong and what to do."""


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
    return [_REFERENCE_SYMBOL]


def _content(value: Any) -> tuple[list[types.ContentBlock], Any]:
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


@dataclass(frozen=True)
class ToolCaller:
    """Runs catalogue tools for MCP clients with one set of dependencies.

    Attributes:
        market: The market data every tool reads.
        deps: The tools' dependencies for one call, given who follows its events (the
            desks' runs report to it).
    """

    market: MarketData
    deps: Callable[[EventSink], ChatDeps]

    def as_of(self, raw: Any, symbols: list[str]) -> tuple[datetime, str]:
        """The instant to run at and a sentence saying which it is."""
        day = _as_of_day(raw)
        if day is not None:
            try:
                instant = close_on_or_before(day)
            except ValueError as exc:
                raise CallError(f"as_of {day}: {exc}") from None
            return instant, f"As of the close of {instant.date()}."
        instant, note = resolve_as_of(self.market, None, symbols, datetime.now(UTC))
        return instant, note or f"As of now ({instant.isoformat(timespec='seconds')})."

    async def call(
        self, entry: CatalogEntry, arguments: dict[str, Any], on_event: EventSink
    ) -> types.CallToolResult:
        """Run the tool, its events (and its desk runs' events) to ``on_event``; a mistake
        the caller can fix raises :class:`CallError`."""
        arguments = dict(arguments)
        raw_as_of = arguments.pop(AS_OF, None)
        kwargs = _validated(entry.tool, arguments)
        instant, said = self.as_of(raw_as_of, _symbols(kwargs))
        deps = self.deps(on_event)
        ctx = RunContext(deps=deps, as_of=instant, run_id="mcp", agent="mcp", emit=on_event)
        try:
            value = await entry.tool.call(ctx, kwargs)
        except (ModelRetry, DataError, InvalidSymbol) as exc:
            raise CallError(f"{entry.name}: {exc}") from None
        content, structured = _content(value)
        content.append(types.TextContent(text=said))
        return types.CallToolResult(
            content=content,
            structured_content=structured,
            _meta={"alphadesk/as_of": instant.isoformat()},
        )


def _validated(item: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's keyword arguments, checked by its own validator; symbols normalised."""
    try:
        kwargs = item.validate(json.dumps(arguments))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
        )
        raise CallError(f"invalid arguments for {item.name}: {problems}") from None
    except ValueError as exc:
        raise CallError(f"invalid arguments for {item.name}: {exc}") from None
    if isinstance(kwargs.get("symbol"), str):
        try:
            kwargs["symbol"] = normalize_symbol(kwargs["symbol"])
        except InvalidSymbol as exc:
            raise CallError(str(exc)) from None
    return kwargs
