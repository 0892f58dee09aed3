"""Pytest fixtures from ``tests.support``, registered by ``tests/conftest.py``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import OpenAIServer

__all__ = ["openai_server"]


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A scriptable OpenAI-compatible server on 127.0.0.1, stopped after the test."""
    with OpenAIServer() as server:
        yield server
