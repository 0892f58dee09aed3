"""The data folder and what alphadesk writes there: folders 0700, files 0600, whatever the
umask, and a store an older version left open to others tightened when it is opened."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from alphadesk.store import ConversationStore, RunStore
from alphadesk.store.private import private_folder, write_private


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """The usual umask (022: files 0644, folders 0755), the one the store must not follow."""
    before = os.umask(0o022)
    yield
    os.umask(before)


def test_a_new_store_is_its_owners_alone_with_its_wal_and_shared_memory(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    outer.mkdir(mode=0o755)
    data = outer / "home" / "data"
    store = RunStore(data / "alphadesk.sqlite")
    store.start(kind="desk", title="NVDA", request={"symbol": "NVDA"})
    ConversationStore(data / "alphadesk.sqlite").new_session("NVDA?")
    assert mode(data) == 0o700 and mode(data.parent) == 0o700  # the folders it made
    assert mode(outer) == 0o755  # ... and only those
    files = {f.name: mode(f) for f in data.iterdir()}
    assert {"alphadesk.sqlite", "alphadesk.sqlite-wal", "alphadesk.sqlite-shm"} <= set(files)
    assert set(files.values()) == {0o600}, files


def test_a_store_left_open_by_an_older_version_is_tightened(tmp_path: Path) -> None:
    data = tmp_path / "data"
    RunStore(data / "alphadesk.sqlite").close()
    os.chmod(data, 0o755)
    for f in data.iterdir():
        os.chmod(f, 0o644)
    RunStore(data / "alphadesk.sqlite").start(kind="desk", title="t", request={})
    assert mode(data) == 0o700
    assert {f.name: mode(f) for f in data.iterdir()} == dict.fromkeys(
        ["alphadesk.sqlite", "alphadesk.sqlite-wal", "alphadesk.sqlite-shm"], 0o600
    )


def test_a_shared_sticky_folder_is_left_as_it_is(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # like /tmp
    RunStore(shared / "alphadesk.sqlite").close()
    assert mode(shared) == 0o1777
    assert mode(shared / "alphadesk.sqlite") == 0o600


def test_a_report_written_again_over_an_open_file_becomes_private(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text("old")
    os.chmod(report, 0o644)
    write_private(report, "# new report ✓")
    assert report.read_text(encoding="utf-8") == "# new report ✓" and mode(report) == 0o600
    write_private(tmp_path / "result.json", "{}")
    assert mode(tmp_path / "result.json") == 0o600


def test_a_private_folder_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x")
    with pytest.raises(NotADirectoryError, match="taken is not a folder"):
        private_folder(tmp_path / "taken")
    assert (tmp_path / "taken").read_text() == "x"  # lost nothing
