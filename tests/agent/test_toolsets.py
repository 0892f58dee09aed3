"""Toolsets combine and filter; names stay unique and unknown names are errors."""

from __future__ import annotations

import pytest

from alphadesk.agent import Toolset, tool


def _make(name: str):  # type: ignore[no-untyped-def]
    async def fn(x: int) -> int:
        """Return x.

        Args:
            x: A number.
        """
        return x

    fn.__name__ = name
    return tool(fn)


A, B, C = _make("alpha"), _make("beta"), _make("gamma")


def test_combine_filter_and_select() -> None:
    first, second = Toolset.of("one", [A, B]), Toolset.of("two", [C])
    both = first + second
    assert both.name == "one+two" and both.names == ["alpha", "beta", "gamma"]
    assert [s.name for s in both.specs] == both.names
    assert both.only("gamma", "alpha").names == ["alpha", "gamma"]
    assert both.filter(lambda t: t.name.startswith("b")).names == ["beta"]
    assert "beta" in both and "delta" not in both and len(both) == 3
    assert both.get("gamma") is C and both.get("delta") is None


def test_duplicates_and_unknown_names_are_errors() -> None:
    with pytest.raises(ValueError, match="two tools named 'alpha'"):
        Toolset.of("one", [A]) + Toolset.of("two", [A])
    with pytest.raises(KeyError, match="no tools \\['delta'\\]"):
        Toolset.of("one", [A, B]).only("alpha", "delta")
