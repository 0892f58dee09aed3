"""Tasks are typed data: an LLM reads exactly the text it read before, the cache keys stay
what the text alone makes them, and a rules policy reads named fields, not the text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alphadesk.agents.desk.tasks import MarketTask, TraderTask
from alphadesk.agents.desk.trader import TRADER
from alphadesk.agents.task import render_value
from alphadesk.llm.base import ModelError
from alphadesk.llm.cache import cache_key
from alphadesk.llm.messages import RequestSettings, SystemMessage, UserMessage
from alphadesk.llm.rules import RulesModel, Transcript
from tests.agents.task_samples import AS_OF, FACTS, MEMORIES, PLAN, SAMPLES

RENDERED = json.loads((Path(__file__).parent / "rendered_tasks.json").read_text("utf-8"))


def test_every_template_has_a_sample() -> None:
    assert sorted(SAMPLES) == sorted(RENDERED)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_a_task_renders_the_text_the_prompt_was_before_tasks_were_data(name: str) -> None:
    task = SAMPLES[name]()
    assert task.render() == RENDERED[name]
    message = task.message()
    assert message.content == RENDERED[name] and message.task is task


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_the_task_object_leaves_cache_and_journal_keys_unchanged(name: str) -> None:
    task = SAMPLES[name]()
    system = SystemMessage(content="Be precise.")
    plain = [system, UserMessage(content=RENDERED[name])]
    carried = [system, task.message()]
    settings = RequestSettings()
    assert cache_key("m", carried, [], settings) == cache_key("m", plain, [], settings)
    assert carried[1].model_dump_json() == plain[1].model_dump_json()


def test_a_field_its_template_does_not_show_is_never_rendered() -> None:
    # The market analyst's template shows the symbol and the date, not the fact sheet: a
    # sheet that cannot be written as JSON (it holds itself) costs nothing and breaks nothing.
    facts: dict[str, object] = {"market.current_price": 138.25}
    facts["itself"] = facts
    task = MarketTask(symbol="NVDA", as_of=AS_OF, facts=facts)  # type: ignore[arg-type]
    assert task.render() == MarketTask(symbol="NVDA", as_of=AS_OF).render()
    assert "$" not in task.render() and AS_OF.date().isoformat() in task.render()
    with pytest.raises(ValueError, match="Circular"):
        render_value(facts)


def test_a_policy_reads_the_fields_whatever_order_the_template_shows_them_in() -> None:
    """The trader's rules read plan, facts and memories by name: a text whose JSON blocks
    are in another order (or no text at all) changes nothing."""
    facts = {"market.current_price": 138.25, "market.atr_14": 3.1}
    plan = {"recommendation": "BUY", "confidence": 0.7, "rationale": "Momentum."}
    task = TraderTask(symbol="NVDA", as_of=AS_OF, facts=facts, plan=plan, memories=MEMORIES)
    assert isinstance(task, TraderTask)
    as_rendered = TRADER.policy.decide(Transcript(task.render(), {}, 0, task=task))
    blocks_reordered = json.dumps([MEMORIES, facts, plan])
    as_data = TRADER.policy.decide(Transcript(blocks_reordered, {}, 0, task=task))
    assert as_data == as_rendered
    assert as_data.action == "BUY" and as_data.entry == 138.25


def test_a_policy_does_not_alter_the_callers_task() -> None:
    task = TraderTask(symbol="NVDA", as_of=AS_OF, facts=FACTS, plan=PLAN, memories=MEMORIES)
    copy = Transcript("", {}, 0, task=task).task_as(TraderTask)
    assert copy == task and copy is not task
    copy.plan["recommendation"] = "SELL"
    copy.facts.clear()
    copy.memories[0].clear()
    assert task.plan["recommendation"] == PLAN["recommendation"]
    assert task.facts == FACTS and task.memories == MEMORIES and task.memories[0]


def test_a_value_shown_again_after_it_changed_shows_the_change() -> None:
    """A value is rendered as indented JSON, the same text however often it is shown, and
    from what it holds now, not what it held when first shown."""
    sheet: dict[str, object] = {"market.rsi_14": 61.2, "at": AS_OF, "nan": float("nan")}
    first = render_value(sheet)
    assert first == json.dumps(sheet, indent=1, default=str) == render_value(dict(sheet))
    sheet["market.rsi_14"] = 38.5
    assert render_value(sheet) == json.dumps(sheet, indent=1, default=str) != first
    assert render_value([1, "a"]) == render_value((1, "a")) == '[\n 1,\n "a"\n]'


async def test_a_policy_given_plain_text_or_another_agents_task_fails_saying_which() -> None:
    model = RulesModel(TRADER.policy)
    with pytest.raises(ModelError, match="needs a TraderTask task, got a plain-text prompt"):
        await model.request([UserMessage(content="NVDA as of 2024-11-29")], [], RequestSettings())
    market = MarketTask(symbol="NVDA", as_of=AS_OF)
    with pytest.raises(ModelError, match="needs a TraderTask task, got MarketTask"):
        await model.request([market.message()], [], RequestSettings())


def test_a_task_refuses_a_value_its_template_does_not_show() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'plan'"):
        MarketTask(symbol="NVDA", as_of=AS_OF, plan=PLAN)  # type: ignore[call-arg]
