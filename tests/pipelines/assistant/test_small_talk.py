"""A greeting or thanks is answered without the classifier, the router or any tool."""

from __future__ import annotations

import pytest

from alphadesk.llm.testing import ScriptedModel
from alphadesk.pipelines.assistant.smalltalk import is_small_talk
from alphadesk.store import RunStore
from tests.pipelines.assistant.conftest import Make, ask, states

pytestmark = pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning")


@pytest.mark.parametrize(
    "text",
    ["hello", "Hi!", "hey there", "good morning", "Thanks a lot!", "thank you so much",
     "hello, how are you doing today?", "bye"],
)  # fmt: skip
def test_greetings_and_thanks_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    ["hello, how is AAPL doing?", "hi what's the market doing", "hey, buy 10 MSFT",
     "thanks, and the VIX?", "hello $TSLA", "hi ^GSPC", "how are you", "",
     "hello " * 12, "good", "what is a put option"],
)  # fmt: skip
def test_anything_about_markets_or_without_a_greeting_takes_the_full_path(text: str) -> None:
    assert not is_small_talk(text)


async def test_hello_is_one_short_answer_with_no_classifier_or_router(make: Make) -> None:
    classifier, router = ScriptedModel([]), ScriptedModel([])
    answer = ScriptedModel(["Hello! Ask me about a stock, an option or the market."])
    pipeline = make({"classifier": classifier, "router": router, "answer": answer})
    result, events = await ask(pipeline, "hello")
    assert result.status == "completed"
    assert result.answer.startswith("Hello!")
    assert classifier.requests == [] and router.requests == []
    assert len(answer.requests) == 1
    assert answer.requests[0].tools == () and answer.requests[0].settings.max_tokens <= 200
    assert result.tool_calls == []
    assert result.classification is not None
    assert result.classification.question_type == "greeting"
    assert states(events) == ["PLANNING", "RESPONDING", "IDLE"]
    reloaded = RunStore(pipeline.settings.store_path).get(result.run_id)  # recorded as any
    assert reloaded is not None and reloaded.status == "completed"


async def test_hello_on_the_rules_model_is_the_canned_greeting(make: Make) -> None:
    result, _ = await ask(make(), "hi there!")
    assert result.status == "completed" and result.answer.startswith("Hello!")
    assert result.route is not None and result.route.selected_tools == []
