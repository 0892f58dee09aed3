"""TA-Lib, imported without polars.

TA-Lib wraps its functions for polars Series whenever it can import polars, and polars
costs a fifth of a second to import. alphadesk hands TA-Lib numpy arrays and pandas
Series only, and polars is no dependency of it (only of a data-building extra): TA-Lib is
imported here as it is where polars is not installed. Import it from this module.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["abstract", "talib"]


@contextmanager
def _without_polars() -> Iterator[None]:
    """``import polars`` fails inside (unless polars is loaded already: then it is paid)."""
    if "polars" in sys.modules:
        yield
        return
    sys.modules["polars"] = None  # type: ignore[assignment]  # None: import raises
    try:
        yield
    finally:
        del sys.modules["polars"]


with _without_polars():
    import talib
    from talib import abstract
