"""The answering agent: writes the reply from the tool results, in the voice of a skill.

Skills are prompt templates per asset class (stock, crypto, mixed) chosen from the
classification. With DIRECT and PARALLEL the results arrive in the task; with ITERATIVE
the agent calls the tools itself, turn by turn. The ``rules`` policy writes a plain summary
(:mod:`.answer_rules`) and, for ITERATIVE, follows a plan: a discovery (:mod:`.discovery`:
screen on the question's conditions, the closest when none meets them, then the analyses
asked); or the market's state then deep reasoning on it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.assistant.answer_rules import write_answer
from alphadesk.agents.assistant.discovery import discovery_lead, discovery_step
from alphadesk.agents.assistant.models import AssetClass
from alphadesk.agents.assistant.tasks import AnswerTask, QuestionTask
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript

__all__ = ["ANSWER", "SKILLS", "answer_agent", "skill_for"]

_PROMPTS = "alphadesk.agents.assistant"
_TURNS = 3  # the longest rules loop (a discovery: screen, closest, analyses)
SKILLS: dict[str, str] = {"stock": "skill_stock", "crypto": "skill_crypto", "mixed": "skill_mixed"}


def skill_for(asset_class: AssetClass) -> str:
    """The skill prompt for an asset class (stocks when there are no symbols)."""
    return load_prompt(_PROMPTS, SKILLS.get(asset_class, "skill_stock")).template


def answer_agent(asset_class: AssetClass, toolset: Toolset, max_turns: int) -> Agent[Any, str]:
    """The answering agent for a question: its skill, its tools (ITERATIVE) and turns."""
    system = load_prompt(_PROMPTS, "answer_system").substitute(skill=skill_for(asset_class))
    return replace(ANSWER.agent, instructions=system, toolset=toolset, max_turns=max_turns)


def _results(t: Transcript) -> list[tuple[str, Any]]:
    """(tool, result or error text) of the planned calls, or of the loop's own calls."""
    task = t.task_as(QuestionTask)
    if isinstance(task, AnswerTask):
        return [(r["tool"], r["result"] if r["ok"] else r["error"]) for r in task.results]
    return [(tool, result) for tool, results in t.results.items() for result in results]


def _decide(t: Transcript) -> str:
    task = t.task_as(QuestionTask)
    c = task.classification
    unresolved = [u.text for u in c.unresolved]
    lead = ""
    if c.question_type == "screener":
        lead = discovery_lead(task.question, t.results.get("stock_screener", []))
    note = (task.as_of_note or "").strip()
    return write_answer(c.question_type, _results(t), unresolved, note, lead=lead)


def _deliberation(t: Transcript) -> list[PlannedCall]:
    """A question of whether to trade: the market's facts, then the deep model on them."""
    if t.turn == 0:
        return [("get_market_overview", {})]
    if t.turn > 1:
        return []
    overview = t.results.get("get_market_overview", [None])[-1]
    question = t.task_as(QuestionTask).question.strip()
    context = json.dumps(overview, default=str)[:4000]
    return [("think_deeply", {"query": question, "context": context})]


def _step(t: Transcript) -> list[PlannedCall]:
    """This turn's calls of the question's loop: a discovery, or a deliberation."""
    task = t.task_as(QuestionTask)
    if task.classification.question_type == "screener":
        return discovery_step(t, task.question)
    return _deliberation(t)


answer_policy = RulesPolicy(plan=[_step] * _TURNS, decide=_decide, name="answer")

ANSWER: AgentSpec[Any, str] = AgentSpec(
    agent=Agent(name="answer", instructions="", output_type=str, stream=True, max_tokens=1200),
    policy=answer_policy,
    turns={"quick": 2, "standard": 4, "deep": 6},
)
