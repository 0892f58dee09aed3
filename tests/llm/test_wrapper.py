"""The model wrapper base: what a wrapper does not change, it passes to its inner model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from alphadesk.llm.base import Model, RateLimited, StreamingModel, stream_response
from alphadesk.llm.cache import CachedModel, ResponseCache
from alphadesk.llm.chaos import ChaosModel
from alphadesk.llm.journal import Journal, JournaledModel
from alphadesk.llm.messages import RequestSettings, UserMessage
from alphadesk.llm.retrying import RetryingModel
from alphadesk.llm.testing import ScriptedModel
from alphadesk.llm.wrapper import ModelWrapper

MESSAGES = [UserMessage(content="how is SPY?")]
SETTINGS = RequestSettings()

Wrap = Callable[[Model, Path], Model]
WRAPPERS: dict[str, Wrap] = {
    "base": lambda inner, _: ModelWrapper(inner),
    "chaos": lambda inner, _: ChaosModel(inner, failure_rate=0.0),
    "retrying": lambda inner, _: RetryingModel(inner),
    "cached": lambda inner, path: CachedModel(inner, ResponseCache(path / "c.db"), "record"),
    "journaled": lambda inner, _: JournaledModel(inner, Journal([], lambda key, r: None)),
}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=list(WRAPPERS))
async def test_a_wrapper_has_its_inner_models_name_capabilities_and_answer(
    wrap: Wrap, tmp_path: Path
) -> None:
    inner = ScriptedModel(["calm, near its high"], name="local/small", capabilities={"tools"})
    model = wrap(inner, tmp_path)
    assert model.name == "local/small"
    assert model.supports("tools") and not model.supports("vision")
    response = await model.request(MESSAGES, [], SETTINGS)
    assert response.message.content == "calm, near its high"
    assert [r.messages for r in inner.requests] == [tuple(MESSAGES)]
    assert repr(model).startswith(f"{type(model).__name__}({inner!r}")


async def test_wrappers_stack_down_to_the_model_that_answers(tmp_path: Path) -> None:
    inner = ScriptedModel(["one", "two"], name="deep")
    model = RetryingModel(ChaosModel(ModelWrapper(inner), failure_rate=0.0))
    assert model.name == "deep"
    assert [(await model.request(MESSAGES, [], SETTINGS)).message.content for _ in "ab"] == [
        "one",
        "two",
    ]
    inner.assert_consumed()


async def test_a_stream_through_a_wrapper_that_does_not_stream_goes_through_its_request() -> None:
    # The inner model streams; the chaos wrapper does not, so a stream must still meet its
    # injected failure rather than reach the inner model's stream around it.
    inner = ScriptedModel(["a long answer in several words"])
    assert isinstance(inner, StreamingModel)
    chaos = ChaosModel(inner, failure_rate=1.0, failures=["rate_limit"], seed=3)
    assert not isinstance(chaos, StreamingModel)
    with pytest.raises(RateLimited):
        async for _ in stream_response(chaos, MESSAGES, [], SETTINGS):
            pass
    assert inner.requests == [] and chaos.failed == 1
