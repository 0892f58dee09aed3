"""The one bounded cache the process keeps: least recently used dropped first."""

from __future__ import annotations

import threading

import pytest

from alphadesk.kept import Kept


def test_the_least_recently_used_value_is_dropped_first() -> None:
    kept: Kept[str, int] = Kept(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # "a" is now the most recently used
    kept.put("c", 3)
    assert kept.get("b") is None
    assert (kept.get("a"), kept.get("c"), len(kept)) == (1, 3, 2)


def test_a_miss_gives_the_default_and_a_kept_none_is_told_apart() -> None:
    kept: Kept[str, int | None] = Kept(4)
    missing = object()
    kept.put("none", None)
    assert kept.get("none", missing) is None
    assert kept.get("other", missing) is missing


def test_putting_a_key_again_replaces_it_and_refreshes_it() -> None:
    kept: Kept[str, int] = Kept(2)
    kept.put("a", 1)
    kept.put("b", 2)
    kept.put("a", 10)
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c")) == (10, None, 3)


def test_clear_drops_everything() -> None:
    kept: Kept[int, int] = Kept(3)
    kept.put(1, 1)
    kept.clear()
    assert (len(kept), kept.get(1)) == (0, None)


def test_a_size_below_one_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Kept(0)


def test_an_unhashable_key_raises_type_error() -> None:
    kept: Kept[object, int] = Kept(2)
    with pytest.raises(TypeError):
        kept.get([1])  # type: ignore[arg-type]


def test_threads_never_grow_it_past_its_size() -> None:
    kept: Kept[tuple[int, int], int] = Kept(50)

    def fill(thread: int) -> None:
        for i in range(2000):
            kept.put((thread, i), i)
            kept.get((thread, i - 1))

    threads = [threading.Thread(target=fill, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(kept) == 50
