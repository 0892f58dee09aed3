"""Memory: past situations and the lessons drawn from them, recalled point in time.

Importing this package is cheap; ChromaDB and the embedder load on first use.
"""

from alphadesk.memory.situations import (
    MemoryUnavailable,
    Recollection,
    SituationMemory,
    symbol_family,
)

__all__ = ["MemoryUnavailable", "Recollection", "SituationMemory", "symbol_family"]
