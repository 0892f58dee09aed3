"""Fixtures of the assistant tests: settings in a temporary folder, the bundled market data
and a pipeline on the rules model (agents can be swapped for scripted models)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from alphadesk.agent.events import BaseEvent
from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.llm.base import Model
from alphadesk.pipelines.assistant import AssistantPipeline, ChatRequest, ChatResult

Make = Callable[..., AssistantPipeline]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "alphadesk")


@pytest.fixture(scope="session")
def market(tmp_path_factory: pytest.TempPathFactory) -> MarketData:
    return build_provider(Settings(data_dir=tmp_path_factory.mktemp("market")))


@pytest.fixture
def make(settings: Settings, market: MarketData) -> Make:
    def build(models: dict[str, Model] | None = None, **kwargs: Any) -> AssistantPipeline:
        return AssistantPipeline(settings, market, model="rules", models=models, **kwargs)

    return build


async def ask(
    pipeline: AssistantPipeline, question: str, **request: Any
) -> tuple[ChatResult, list[BaseEvent]]:
    events: list[BaseEvent] = []
    result = await pipeline.ask(ChatRequest(question=question, **request), events.append)
    return result, events


def states(events: list[BaseEvent]) -> list[str]:
    return [e.state for e in events if e.kind == "state"]  # type: ignore[attr-defined]
