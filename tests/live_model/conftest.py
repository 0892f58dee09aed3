"""Real local models for the live tier: llama.cpp's ``llama-server`` on a free loopback port.

One server per model and session: SmolLM2-135M-Instruct (a tiny chat model that calls
tools) and Gemma 3 270M base (never stops talking: the tests of limits). The binary is the
one ``python scripts/llama_server.py build`` (run by ``python3 dev.py setup``) keeps in the
user's cache; without it, or without the model packages (the ``live`` extra), the tests
skip and say why.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("llama_server", ROOT / "scripts/llama_server.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("llama_server", module)
    spec.loader.exec_module(module)
    return module


llama = _script()


@dataclass(frozen=True)
class LiveServer:
    """A running llama-server: where it listens and the model string that reaches it."""

    name: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        return f"openai/{self.name}"

    def env(self, data_dir: Path, **extra: str) -> dict[str, str]:
        """The environment that points the alphadesk CLI at this server, tightly bounded."""
        return {
            **os.environ,
            "PYTHONPATH": str(ROOT / "src"),
            "ALPHADESK_DATA_DIR": str(data_dir),
            "ALPHADESK_MODELS__QUICK": self.model,
            "ALPHADESK_MODELS__DEEP": self.model,
            "ALPHADESK_MODELS__API_BASE": self.api_base,
            "ALPHADESK_MODELS__API_KEY": "sk-local-dummy",
            "ALPHADESK_MODELS__MAX_TOKENS": "256",
            "ALPHADESK_MODELS__TIMEOUT_S": "40",
            "ALPHADESK_MODELS__FIRST_TOKEN_TIMEOUT_S": "30",
            "ALPHADESK_MODELS__MAX_RETRIES": "1",
            "ALPHADESK_MEMORY__ENABLED": "false",
            **extra,
        }


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_healthy(server: LiveServer, log: Path, within_s: float = 120.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"llama-server exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{server.port}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"llama-server not healthy after {within_s:g} s: {log.read_text()[-2000:]}")


def _serve(name: str, tmp: Path) -> Iterator[LiveServer]:
    binary = llama.cached_binary()
    if binary is None:
        why = "cmake or a C++ compiler is missing" if llama.missing_build_tools() else "not built"
        pytest.skip(f"llama-server {llama.VERSION} {why}: run `python3 dev.py setup`")
    try:
        gguf = llama.model_path(name)
    except SystemExit as exc:
        pytest.skip(str(exc))
    port = _free_port()
    log = tmp / f"llama-server-{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            llama.serve_command(binary, gguf, port), stdout=out, stderr=subprocess.STDOUT
        )
    server = LiveServer(name, port, process)
    try:
        _wait_healthy(server, log)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def smollm2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _serve("smollm2", tmp_path_factory.mktemp("smollm2"))


@pytest.fixture(scope="session")
def gemma3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _serve("gemma3", tmp_path_factory.mktemp("gemma3"))
