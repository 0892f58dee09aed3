"""The one place a symbol is normalised and validated.

Symbols end up in file names (local and bundled data), cache keys and URLs, so anything
that could escape a folder or a shell is refused here, before any provider sees it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .errors import InvalidSymbol

__all__ = ["MAX_SYMBOL_LENGTH", "SPY_PER_INDEX", "close_matches", "normalize_symbol"]

MAX_SYMBOL_LENGTH = 20
SPY_PER_INDEX = 0.1  # SPY is about a tenth of the S&P 500 index (^GSPC)
# Letters, digits and the punctuation real tickers use: ^GSPC, BRK.B, BRK-B, EURUSD=X.
# The first character may not be punctuation other than ^, so ".", "..", "-x" are refused.
_SYMBOL = re.compile(r"^[A-Z0-9^][A-Z0-9.\-=^]*$")


def normalize_symbol(symbol: object) -> str:
    """Upper-case, strip and validate a ticker symbol.

    Args:
        symbol: What the caller passed, e.g. ``" aapl "``, ``"^gspc"``, ``"brk.b"``.

    Returns:
        The canonical symbol, e.g. ``"AAPL"``.

    Raises:
        InvalidSymbol: Not a string, empty, too long, or with characters outside
            ``A-Z 0-9 ^ . - =`` (path separators, ``..``, spaces, shell metacharacters).
    """
    if not isinstance(symbol, str):
        raise InvalidSymbol(f"a symbol must be a string, got {type(symbol).__name__}")
    text = symbol.strip().upper()
    if not text:
        raise InvalidSymbol("the symbol is empty; pass a ticker such as AAPL or ^GSPC")
    if len(text) > MAX_SYMBOL_LENGTH:
        raise InvalidSymbol(
            f"symbol {text[:MAX_SYMBOL_LENGTH]!r}... is longer than {MAX_SYMBOL_LENGTH} "
            "characters; pass a ticker such as AAPL"
        )
    if not _SYMBOL.fullmatch(text) or ".." in text:
        raise InvalidSymbol(
            f"symbol {text!r} has characters a ticker cannot have; use letters, digits and "
            "^ . - = only (e.g. AAPL, BRK-B, ^GSPC, EURUSD=X)"
        )
    return text


def close_matches(symbol: str, universe: Iterable[str], n: int = 5) -> list[str]:
    """Symbols of ``universe`` that look like ``symbol`` (best first), for 'did you mean'."""
    choices = sorted(set(universe))
    matches = difflib.get_close_matches(symbol, choices, n=n, cutoff=0.5)
    # A prefix often means more than edit distance (GOOGL -> GOOG, ^SPX -> ^GSPC misses).
    prefixed = [
        c for c in choices if len(symbol) >= 3 and c.startswith(symbol[:3]) and c not in matches
    ]
    return (matches + prefixed)[:n]
