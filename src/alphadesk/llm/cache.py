"""A response cache for any ``Model``: record real answers once, replay them for free.

The key is the SHA-256 of the canonical JSON of everything that decides the answer: the
model name, the messages (images included), the tools and the request settings that reach
the model. Entries live in a ``model_cache`` table of one SQLite file (in the app, the run
store's file), in WAL mode with one short transaction per operation, so several tasks and
processes can share it. A cache keeps one connection open for all its operations: one
opened and closed per lookup and per answer stored cost 1.5 ms a model call beside a run
store's open connection, and 17 ms alone (closing a file's last connection checkpoints its
log, a sync to disk); kept, 0.2 ms.

A hit is returned with ``cached=True`` and no cost: the token counts are kept (they say what
the answer would have cost) but ``requests`` and ``cost_usd`` are zero.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from alphadesk.config import CacheMode
from alphadesk.kept import Kept
from alphadesk.llm.base import CacheMiss, Model, ModelError, StreamItem, stream_response
from alphadesk.llm.messages import (
    Message,
    ModelResponse,
    RequestSettings,
    SystemMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from alphadesk.llm.wrapper import ModelWrapper
from alphadesk.store import sqlite

__all__ = [
    "CacheEntryCorrupted",
    "CachedModel",
    "ResponseCache",
    "cache_key",
]

logger = logging.getLogger(__name__)

_KEY_VERSION = 1  # bump when the key's ingredients change, so old entries stop matching

_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created_at TEXT NOT NULL,
    response TEXT NOT NULL
);
"""


class CacheEntryCorrupted(ModelError):
    """A cached response could not be read back (damaged or written by another version)."""


def cache_key(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    settings: RequestSettings,
) -> str:
    """The cache key of one request: a hex SHA-256 of its canonical JSON.

    The canonical JSON of ``{"messages", "model", "settings", "tools", "v"}`` (keys sorted,
    compact), written piece by piece so that what repeats from request to request (an
    agent's system prompt and tools in every run, a run's task in every turn) is written
    once.
    """
    # The timeout changes when an answer arrives, never what it says.
    exact = settings.model_dump(mode="json", exclude={"timeout_s"})
    canonical = (
        f'{{"messages":[{",".join(_message_json(m) for m in messages)}],'
        f'"model":{_canonical(model)},"settings":{_canonical(exact)},'
        f'"tools":[{",".join(_tool_json(t) for t in tools)}],"v":{_KEY_VERSION}}}'
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# The canonical JSON of what repeats, shared by the process (every run's agents send the
# same system texts and tool specs): texts by role and text, tool specs by identity (the
# spec held, so its id is never another's). A hit is what writing it again would give.
_TEXTS: Kept[tuple[str, str], str] = Kept(512)
_TOOLS: Kept[int, tuple[ToolSpec, str]] = Kept(512)


def _message_json(message: Message) -> str:
    if not isinstance(message, SystemMessage | UserMessage) or not isinstance(message.content, str):
        return _canonical(message.model_dump(mode="json"))
    key = (message.role, message.content)  # all of such a message that is written
    written = _TEXTS.get(key)
    if written is None:
        written = _canonical(message.model_dump(mode="json"))
        _TEXTS.put(key, written)
    return written


def _tool_json(tool: ToolSpec) -> str:
    kept = _TOOLS.get(id(tool))
    if kept is None or kept[0] is not tool:
        kept = (tool, _canonical(tool.model_dump(mode="json")))
        _TOOLS.put(id(tool), kept)
    return kept[1]


class ResponseCache:
    """Model responses by request key, in the ``model_cache`` table of one SQLite file.

    A file found corrupt when first opened (garbage bytes, a truncated copy) is moved aside
    with a timestamp suffix and an empty cache is started, with a warning in the log: the
    answers can be recorded again, and a broken cache must never stop a run.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        sqlite.create(self.path, _SCHEMA, rebuild_if_corrupt=True)
        self._kept = sqlite.KeptConnection(self.path)

    def _connect(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._kept.transaction()

    def close(self) -> None:
        """Close the connection the cache keeps (it opens again when next used)."""
        self._kept.close()

    def get(self, key: str) -> ModelResponse | None:
        """The stored response, None when absent; ``CacheEntryCorrupted`` when unreadable."""
        with self._connect() as db:
            row = db.execute(
                "SELECT model, response FROM model_cache WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return None
        model, body = row
        try:
            return ModelResponse.model_validate_json(body)
        except (ValidationError, ValueError, TypeError) as exc:
            raise CacheEntryCorrupted(
                f"the cached response {key[:12]}… for {model} in {self.path} is unreadable "
                f"({type(exc).__name__}); record it again with cache mode `record`",
                model=model,
            ) from exc

    def put(self, key: str, model: str, response: ModelResponse) -> None:
        """Store (or replace) the response for ``key``."""
        stored = response.model_copy(update={"cached": False})
        row = (key, model, datetime.now(UTC).isoformat(), stored.model_dump_json())
        self._kept.write(
            lambda db: db.execute(
                "INSERT OR REPLACE INTO model_cache (key, model, created_at, response)"
                " VALUES (?, ?, ?, ?)",
                row,
            )
        )

    def delete(self, key: str) -> None:
        with self._connect() as db:
            db.execute("DELETE FROM model_cache WHERE key = ?", (key,))

    def clear(self, model: str | None = None) -> int:
        """Forget every entry (or those of one model); returns how many were removed."""
        with self._connect() as db:
            if model is None:
                return db.execute("DELETE FROM model_cache").rowcount
            return db.execute("DELETE FROM model_cache WHERE model = ?", (model,)).rowcount

    def __len__(self) -> int:
        with self._connect() as db:
            (count,) = db.execute("SELECT COUNT(*) FROM model_cache").fetchone()
        return int(count)


@dataclass
class _KeyLock:
    """One request key in flight in record mode, and how many tasks want it."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class CachedModel(ModelWrapper):
    """``inner`` behind ``cache``, as ``mode`` says.

    - ``off``: every request goes to ``inner``; the cache is neither read nor written.
    - ``record``: a hit is answered from the cache; a miss asks ``inner`` and stores the
      answer. An unreadable entry is logged and treated as a miss (and overwritten).
    - ``replay``: only the cache answers; a miss raises ``CacheMiss`` and an unreadable
      entry raises ``CacheEntryCorrupted``. ``inner`` is never called.

    Concurrent identical requests in record mode reach ``inner`` once; the others wait and
    are answered from the cache.
    """

    def __init__(self, inner: Model, cache: ResponseCache, mode: CacheMode | str) -> None:
        super().__init__(inner)
        self.cache = cache
        try:
            self.mode = CacheMode(mode)
        except ValueError:
            choices = ", ".join(m.value for m in CacheMode)
            raise ValueError(f"unknown cache mode {mode!r}; use one of: {choices}") from None
        self._locks: dict[str, _KeyLock] = {}

    def __repr__(self) -> str:
        return f"CachedModel({self.inner!r}, mode={self.mode.value!r})"

    async def request(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        if self.mode is CacheMode.OFF:
            return await self.inner.request(messages, tools, settings)
        key = cache_key(self.name, messages, tools, settings)
        if self.mode is CacheMode.REPLAY:
            return await self._replay(key)
        entry = self._locks.setdefault(key, _KeyLock())
        entry.users += 1
        try:
            async with entry.lock:
                return await self._record(key, messages, tools, settings)
        finally:
            entry.users -= 1
            if not entry.users:
                del self._locks[key]

    async def stream(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> AsyncIterator[StreamItem]:
        """A hit in one piece; a miss streamed from ``inner`` (and stored in record mode).
        Concurrent identical streams are not merged: each streams its own answer."""
        if self.mode is CacheMode.OFF:
            async for item in stream_response(self.inner, messages, tools, settings):
                yield item
            return
        key = cache_key(self.name, messages, tools, settings)
        if self.mode is CacheMode.REPLAY:
            hit: ModelResponse | None = await self._replay(key)
        else:
            try:
                hit = await asyncio.to_thread(self.cache.get, key)
            except CacheEntryCorrupted as exc:
                logger.warning("%s; asking %s again and overwriting it", exc, self.name)
                hit = None
        if hit is not None:
            hit = _as_hit(hit, hit.latency_s if hit.cached else 0.0)
            if hit.message.content:
                yield hit.message.content
            yield hit
            return
        async for item in stream_response(self.inner, messages, tools, settings):
            if isinstance(item, ModelResponse):
                await asyncio.to_thread(self.cache.put, key, self.name, item)
            yield item

    async def _replay(self, key: str) -> ModelResponse:
        started = time.monotonic()
        hit = await asyncio.to_thread(self.cache.get, key)
        if hit is None:
            raise CacheMiss(
                f"cache mode is replay and this request to {self.name} was never recorded "
                f"(key {key[:12]}… in {self.cache.path}). Run it once with cache mode "
                "`record` (e.g. ALPHADESK_CACHE=record) to store the answer.",
                model=self.name,
            )
        return _as_hit(hit, time.monotonic() - started)

    async def _record(
        self,
        key: str,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: RequestSettings,
    ) -> ModelResponse:
        started = time.monotonic()
        try:
            hit = await asyncio.to_thread(self.cache.get, key)
        except CacheEntryCorrupted as exc:
            logger.warning("%s; asking %s again and overwriting it", exc, self.name)
            hit = None
        if hit is not None:
            return _as_hit(hit, time.monotonic() - started)
        response = await self.inner.request(messages, tools, settings)
        await asyncio.to_thread(self.cache.put, key, self.name, response)
        return response


def _as_hit(response: ModelResponse, latency_s: float) -> ModelResponse:
    usage = Usage(
        requests=0,
        input_tokens=response.usage.input_tokens,
        output_tokens=response.usage.output_tokens,
        cost_usd=0.0,
    )
    return response.model_copy(update={"cached": True, "usage": usage, "latency_s": latency_s})
