"""A memory of past situations and their lessons, in a persistent ChromaDB store.

A lesson is stored with the instant it was written; recall at ``as_of`` sees only lessons
written by then (point in time: a backtest never learns from its own future), and only
about the same symbol family.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel

from alphadesk.store.private import private_folder

__all__ = [
    "ChromaStores",
    "MemoryUnavailable",
    "Recollection",
    "SituationMemory",
    "symbol_family",
]

log = logging.getLogger(__name__)

_COLLECTION = "situations"
# Share classes and renamed tickers of one company: their lessons are shared.
_ALIASES = {
    "GOOGL": "GOOG",
    "BRK-B": "BRK-A",
    "BRK.B": "BRK-A",
    "BRK.A": "BRK-A",
    "META": "FB",
    "BTC": "BTC-USD",
    "XBT-USD": "BTC-USD",
}


def symbol_family(symbol: str) -> str:
    """The family whose lessons a symbol shares: its share classes and aliases, else itself."""
    upper = symbol.strip().upper()
    return _ALIASES.get(upper, upper)


class MemoryUnavailable(RuntimeError):
    """The store cannot be opened or read; the message says how to recover."""


class Recollection(BaseModel):
    """One past situation recalled, with what happened and the lesson drawn."""

    id: str
    family: str
    symbol: str
    situation: str
    lesson: str
    outcome: dict[str, Any]
    decided_at: AwareDatetime
    written_at: AwareDatetime
    distance: float


class SituationMemory:
    """Lessons by situation, embedded offline, persisted at ``path``.

    One store holds each pipeline's lessons in a collection of its own (the trading desk's
    ``situations``, the strategy lab's ``strategy_lessons``): a desk never recalls a lab's
    lesson as a past trade.
    """

    def __init__(
        self, path: Path, *, embedder: Any | None = None, collection: str = _COLLECTION
    ) -> None:
        self.path = Path(path)
        self.collection = collection
        self._embedder = embedder
        self._stores = _PROCESS_STORES
        self._collection: Any | None = None

    def remember(
        self,
        *,
        symbol: str,
        situation: str,
        lesson: str,
        outcome: dict[str, Any],
        decided_at: datetime,
        written_at: datetime,
        run_id: str | None = None,
    ) -> str:
        """Store a lesson; the same decision (symbol, instant, run) is stored once."""
        for name, value in (("decided_at", decided_at), ("written_at", written_at)):
            if value.tzinfo is None:
                raise ValueError(f"{name} must be timezone-aware")
        if written_at < decided_at:
            raise ValueError("a lesson cannot be written before the decision it is about")
        key = f"{symbol.upper()}|{decided_at.isoformat()}|{run_id or situation}"
        memory_id = hashlib.sha256(key.encode()).hexdigest()[:20]
        metadata = {
            "family": symbol_family(symbol),
            "symbol": symbol.upper(),
            "lesson": lesson,
            "outcome": json.dumps(outcome, sort_keys=True, default=str),
            "decided_at": decided_at.isoformat(),
            "written_at": written_at.isoformat(),
            "written_ts": written_at.timestamp(),
            "run_id": run_id or "",
        }
        self._open().upsert(ids=[memory_id], documents=[situation], metadatas=[metadata])
        return memory_id

    def recall(
        self, symbol: str, situation: str, *, as_of: datetime, k: int = 2
    ) -> list[Recollection]:
        """The ``k`` closest lessons of the symbol's family written by ``as_of``."""
        if as_of.tzinfo is None:
            raise ValueError("as_of must be timezone-aware")
        where = {
            "$and": [
                {"family": symbol_family(symbol)},
                {"written_ts": {"$lte": as_of.timestamp()}},
            ]
        }
        if self._never_written:
            return []  # nothing to recall: spares loading the store and its embedder
        collection = self._open()
        known = collection.get(where=where, include=[])["ids"]
        if not known or k < 1:
            return []
        found = collection.query(
            query_texts=[situation],
            n_results=min(k, len(known)),
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            _recollection(memory_id, document, metadata, distance)
            for memory_id, document, metadata, distance in zip(
                found["ids"][0],
                found["documents"][0],
                found["metadatas"][0],
                found["distances"][0],
                strict=True,
            )
        ]

    def forget(self) -> None:
        """Delete every lesson of this memory's collection, its index with them (deleted
        lessons left in an index could still change what a search finds)."""
        if self._never_written:
            return
        self._stores.drop(self.path, self.collection)
        self._collection = None

    def count(self, symbol: str | None = None) -> int:
        """How many lessons are stored (about one symbol's family, when given)."""
        if self._never_written:
            return 0
        collection = self._open()
        if symbol is None:
            return int(collection.count())
        return len(collection.get(where={"family": symbol_family(symbol)}, include=[])["ids"])

    @property
    def _never_written(self) -> bool:
        """Whether no store exists yet (the first lesson creates it)."""
        return self._collection is None and not self.path.exists()

    def _open(self) -> Any:
        if self._collection is None:
            embedder = self._embedder or _default_embedder()
            self._collection = self._stores.collection(self.path, self.collection, embedder)
        return self._collection


class ChromaStores:
    """The ChromaDB stores this process opened, one client per folder, each opened once,
    under a lock. Chroma keeps one system per folder per process in its own class-level
    cache, and building one is not thread-safe: two first opens at once (two desk runs
    starting in a fresh worker) broke both, so every open goes through here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[Path, Any] = {}

    def collection(self, path: Path, name: str, embedder: Any) -> Any:
        """The collection ``name`` of the store at ``path`` (made when new), embedding with
        ``embedder``. Raises MemoryUnavailable with how to recover."""
        if path.exists() and not path.is_dir():
            raise MemoryUnavailable(
                f"the memory path {path} is a file, not a folder; point memory.path at a "
                "folder or move the file aside"
            )
        with self._lock:
            try:
                client = self._clients.get(path.resolve()) or self._open(path)
                return client.get_or_create_collection(
                    name, embedding_function=embedder, metadata={"hnsw:space": "cosine"}
                )
            except Exception as exc:  # Chroma raises many kinds on a damaged store
                raise MemoryUnavailable(
                    f"the memory at {path} cannot be opened ({type(exc).__name__}: {exc}); "
                    "move the folder aside to start a new one, or set memory.enabled = false"
                ) from exc

    def drop(self, path: Path, name: str) -> None:
        """Delete the collection ``name`` of the store at ``path``, if there is one."""
        with self._lock:
            client = self._clients.get(path.resolve()) or self._open(path)
            if name in {collection.name for collection in client.list_collections()}:
                client.delete_collection(name)

    def _open(self, path: Path) -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        private_folder(path)  # lessons are the desk's: its owner's alone, like the data folder
        client = chromadb.PersistentClient(
            path=str(path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self._clients[path.resolve()] = client
        return client


# One per process, and only one: the state it guards (Chroma's cache of systems) is per
# process too, so a second holder could not keep two opens apart.
_PROCESS_STORES = ChromaStores()


def _default_embedder() -> Any:
    from alphadesk.memory.embedder import OfflineMiniLM

    return OfflineMiniLM()


def _recollection(
    memory_id: str, document: str | None, metadata: Any, distance: float
) -> Recollection:
    return Recollection(
        id=memory_id,
        family=metadata["family"],
        symbol=metadata["symbol"],
        situation=document or "",
        lesson=metadata["lesson"],
        outcome=json.loads(metadata["outcome"]),
        decided_at=datetime.fromisoformat(metadata["decided_at"]),
        written_at=datetime.fromisoformat(metadata["written_at"]),
        distance=float(distance),
    )
