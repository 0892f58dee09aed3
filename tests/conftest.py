"""Test-wide guards: no test reaches the internet or a real model provider, and none reads
the shell it was started from."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fixtures"]  # the openai_server fixture

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

# Provider keys from the developer's shell must never reach a test.
_PROVIDER_KEYS = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "AZURE_API_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "COHERE_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "TAVILY_API_KEY",
]
for _key in _PROVIDER_KEYS:
    os.environ.pop(_key, None)
for _key in [k for k in os.environ if k.startswith("ALPHADESK_")]:
    os.environ.pop(_key)


class InternetAccessRefused(RuntimeError):
    """A test tried to open a connection that does not stay on this machine."""


def _is_local(address: object) -> bool:
    if not isinstance(address, tuple) or not address:
        return True  # unix sockets and the like
    host = str(address[0])
    if host in {"localhost", ""}:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _guarded_connect(self: socket.socket, address: object) -> None:
    if not _is_local(address):
        raise InternetAccessRefused(f"tests must not reach the internet (tried {address!r})")
    _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if not _is_local(address):
        raise InternetAccessRefused(f"tests must not reach the internet (tried {address!r})")
    return _real_connect_ex(self, address)  # type: ignore[arg-type]


def _guarded_getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
    if host not in (None, "localhost") and not _is_local((host,)):
        raise InternetAccessRefused(f"tests must not resolve external hosts (tried {host!r})")
    return _real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
socket.getaddrinfo = _guarded_getaddrinfo  # type: ignore[assignment]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A private alphadesk data directory for one test."""
    path = tmp_path / "alphadesk"
    path.mkdir()
    yield path


# What a developer's shell may export that changes what a command prints or where it reads
# and writes: the terminal's size and colours, and alphadesk's own settings.
_SHELL_SETTINGS = [
    "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES", "NO_COLOR", "FORCE_COLOR",
    "TTY_COMPATIBLE", "TTY_INTERACTIVE",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _no_shell_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts from the same environment, whatever the shell running pytest
    exports (``COLUMNS=200``, ``ALPHADESK_DATA_DIR=...``): a test gives a command the
    settings it needs itself."""
    for name in _SHELL_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    for name in [k for k in os.environ if k.startswith("ALPHADESK_")]:
        monkeypatch.delenv(name)
