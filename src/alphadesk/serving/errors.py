"""What a client is told when the server refuses or fails: a typed refusal, and the one
way its text is made fit to show (no secret, no long echo of the client's input, no path
of this machine)."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from alphadesk.store.redact import redact

__all__ = [
    "ErrorBody",
    "ErrorDetail",
    "Refusal",
    "bounded",
    "clean",
    "error_json",
    "shown",
    "without_paths",
]

_ECHO_CHARS = 64  # of a client's input quoted in an error
_MAX_MESSAGE = 1_000
_LONG_WORD = re.compile(rf"[^\s'\"`,;]{{{_ECHO_CHARS + 1},}}")  # quotes stay around it
# An absolute path of two parts or more, not inside a URL (alphadesk://runs/x); whether it
# names a file (/home/me/x) or a route (/runs/abc/report) its first part tells.
_POSIX_PATH = re.compile(r"(?<![\w:/.~-])(~/|/)([\w.~@+-]+)((?:/[\w.~@+-]+)+/?)")
# One part alone (/tmp, /srv) is a path only when this machine's root holds that name: a
# route such as /runs or /openapi.json is not hidden.
_ONE_PART = re.compile(r"(?<![\w:/.~-])/([\w.~@+-]+)/?(?![\w.~@+/-])")
_WINDOWS_PATH = re.compile(r"(?<![\w])[A-Za-z]:\\(?:[^\\\s'\"]+\\)*[^\\\s'\"]*")
PATH_SHOWN = "<path>"


class Refusal(Exception):
    """A request the server refuses, with the HTTP status and the typed error it answers
    (the MCP server says ``message; hint``)."""

    def __init__(self, status: int, type_: str, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.status, self.type, self.message, self.hint = status, type_, message, hint

    def said(self) -> str:
        """The message and its hint in one sentence."""
        return f"{self.message}; {self.hint}" if self.hint else self.message


class ErrorDetail(BaseModel):
    type: str
    message: str
    hint: str | None = None


class ErrorBody(BaseModel):
    """What every error response holds."""

    error: ErrorDetail


def _roots() -> list[str]:
    """This machine's folders a message may name, longest first: the environment and the
    home, working and temporary folders (their own paths are no business of a client)."""
    found = {sys.prefix, sys.base_prefix, tempfile.gettempdir()}
    for where in (os.getcwd, Path.home):
        try:
            found.add(str(where()))
        except (OSError, RuntimeError):  # a working folder deleted, no home
            continue
    return sorted((root for root in found if len(root) > 1), key=len, reverse=True)


def without_paths(text: str) -> str:
    """``text`` with every file system path in it replaced by ``<path>``: an error that
    names where the data lives (a database that would not open, a file that went away)
    tells a client nothing it can act on, and tells an attacker the layout of the disk."""
    for root in _roots():
        if root in text:
            text = re.sub(
                r"(?<![\w.-])" + re.escape(root) + r"(?![\w.-])(?:[/\\][^\s'\"`,;:]*)?",
                PATH_SHOWN,
                text,
            )
    text = _WINDOWS_PATH.sub(PATH_SHOWN, text)
    if _POSIX_PATH.search(text) is None and _ONE_PART.search(text) is None:
        return text
    top = _top_folders()
    text = _POSIX_PATH.sub(lambda m: PATH_SHOWN if m[1] == "~/" or m[2] in top else m[0], text)
    return _ONE_PART.sub(lambda m: PATH_SHOWN if m[1] in top else m[0], text)


def _top_folders() -> set[str]:
    """The names at this machine's file system root (/home, /tmp, /var...)."""
    try:
        return set(os.listdir("/"))
    except OSError:
        return set()


def bounded(text: str) -> str:
    """``text`` with every long run of non-space characters (a client's id, symbol or
    value quoted back) cut to its first 64 characters and "…", and at most 1,000 in all:
    an error never echoes a client's input whole."""
    text = _LONG_WORD.sub(lambda m: m[0][:_ECHO_CHARS] + "…", text)
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"


def clean(text: str) -> str:
    """``text`` redacted of secrets and without paths: what any error a client sees says."""
    return without_paths(redact(text))


def shown(text: str) -> str:
    """``text`` as an HTTP error says it: :func:`clean`, and :func:`bounded`."""
    return bounded(clean(text))


def error_json(type_: str, message: str, hint: str | None = None) -> dict[str, Any]:
    """The typed error body; message and hint as :func:`shown`."""
    detail = ErrorDetail(
        type=type_, message=shown(message), hint=None if hint is None else shown(hint)
    )
    return ErrorBody(error=detail).model_dump()
