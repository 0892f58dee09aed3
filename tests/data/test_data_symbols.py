"""Symbol normalisation and validation: the one gate before files, URLs and cache keys."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alphadesk.data import InvalidSymbol, normalize_symbol
from alphadesk.data.symbols import MAX_SYMBOL_LENGTH, close_matches


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        (" aapl ", "AAPL"),
        ("^gspc", "^GSPC"),
        ("brk.b", "BRK.B"),
        ("BRK-B", "BRK-B"),
        ("eurusd=x", "EURUSD=X"),
        ("btc-usd", "BTC-USD"),
        ("0700.HK", "0700.HK"),
    ],
)
def test_real_tickers_normalise(raw: str, canonical: str) -> None:
    assert normalize_symbol(raw) == canonical


@pytest.mark.parametrize(
    "bad",
    [
        "../etc/passwd",
        "..",
        ".",
        "AAPL/../../x",
        "a\\b",
        "AAPL;ls",
        "$(rm)",
        "`id`",
        "A B",
        "A|B",
        "A&B",
        "A>B",
        "AA\nPL",
        "AAPL\x00",
        "-rf",
        "",
        "   ",
        "ÄPPLE",
        "X" * (MAX_SYMBOL_LENGTH + 1),
        "A..B",
        "*",
        "~root",
    ],
)
def test_traversal_and_shell_metacharacters_are_refused(bad: str) -> None:
    with pytest.raises(InvalidSymbol) as caught:
        normalize_symbol(bad)
    assert "ticker" in str(caught.value) or "empty" in str(caught.value)


def test_non_strings_are_refused() -> None:
    with pytest.raises(InvalidSymbol, match="string"):
        normalize_symbol(42)


@given(st.text(max_size=40))
def test_whatever_passes_is_safe_as_a_file_name(text: str) -> None:
    try:
        symbol = normalize_symbol(text)
    except InvalidSymbol:
        return
    assert 1 <= len(symbol) <= MAX_SYMBOL_LENGTH
    assert "/" not in symbol and "\\" not in symbol and ".." not in symbol
    assert symbol[0] not in ".-="
    assert all(c.isascii() and (c.isalnum() or c in "^.-=") for c in symbol)
    assert normalize_symbol(symbol) == symbol  # idempotent


def test_close_matches() -> None:
    universe = ["AAPL", "AMZN", "GOOG", "^GSPC", "MSFT"]
    assert close_matches("APPL", universe)[0] == "AAPL"
    assert close_matches("GOOGL", universe)[0] == "GOOG"
    assert close_matches("ZZZZZZ", universe) == []
