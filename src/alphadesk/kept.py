"""A bounded, thread-safe least-recently-used cache: the one kind of process-wide cache.

The house keeps no global mutable state, save caches that only spare recomputing what is
already determined by their keys (a compiled graph by its shape, an indented JSON by its
compact form, a tool's answer by its step and arguments). Each is a :class:`Kept`, named
at its module with a comment saying why it is shared by the process; a hit returns what
a miss would have computed, so no result depends on what a cache holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar, overload

__all__ = ["Kept"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")


class Kept(Generic[K, V]):
    """At most ``size`` values by key, the least recently used dropped first; safe across
    the threads tools run in.

    Raises:
        ValueError: ``size`` below 1.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a cache keeps at least 1 value, not {size}")
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    @overload
    def get(self, key: K) -> V | None: ...
    @overload
    def get(self, key: K, default: D) -> V | D: ...
    def get(self, key: K, default: object = None) -> object:
        """The value kept for ``key`` (now the most recently used), else ``default``.

        Raises:
            TypeError: ``key`` cannot be hashed.
        """
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``, dropping the least recently used beyond ``size``."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Drop every value."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
