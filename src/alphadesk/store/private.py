"""Folders and files only their owner can open: the data folder holds chat history, the
audit log, the paper portfolio and every run's report.

Folders alphadesk makes are 0700 and its files 0600, whatever the process's umask. An
existing store (a database, its ``-wal`` and ``-shm`` files, the folder holding it) made
looser by an older version is tightened when it is opened, if this user owns it; a shared
folder (sticky, like ``/tmp``) is never changed.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["FILE_MODE", "FOLDER_MODE", "private_file", "private_folder", "tighten", "write_private"]

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(path: Path) -> Path:
    """``path`` as a folder, made with its missing parents, each 0700. Returns ``path``."""
    missing: list[Path] = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            continue  # another process made it meanwhile: its mode is its maker's
        os.chmod(made, FOLDER_MODE)  # mkdir's mode is cut by the umask; make it exact
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder: move it aside or choose another")
    return path


def private_file(path: Path) -> Path:
    """``path`` created empty when missing, and 0600 (tightened when it is looser)."""
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
    tighten(path)
    return path


def write_private(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``, a file only its owner can read (0600)."""
    descriptor = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        if stat.S_IMODE(os.fstat(descriptor).st_mode) != FILE_MODE:
            os.fchmod(descriptor, FILE_MODE)  # it existed, looser, before this version
        file.write(text)
    return path


def tighten(path: Path) -> None:
    """Take group and other access off ``path`` (0700 for a folder, 0600 for a file) when
    this user owns it and it is not a shared sticky folder; nothing when it is missing."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(status.st_mode)
    shared = bool(mode & stat.S_ISVTX)
    if not mode & 0o077 or shared or status.st_uid != os.getuid():
        return
    os.chmod(path, FOLDER_MODE if stat.S_ISDIR(status.st_mode) else FILE_MODE)
