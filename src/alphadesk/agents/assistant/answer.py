"""The answering agent: writes the reply from the tool results, in the voice of a skill.

Skills are prompt templates per asset class (stock, crypto, mixed) chosen from the
classification. With DIRECT and PARALLEL the results arrive in the task; with ITERATIVE
the agent calls the tools itself, turn by turn. The ``rules`` policy writes a plain summary
(:mod:`.answer_rules`) and, for ITERATIVE, follows a fixed plan: screen then look closer;
the market's state then deep reasoning on it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from alphadesk.agent import Agent, Toolset
from alphadesk.agents.assistant.answer_rules import write_answer
from alphadesk.agents.assistant.models import AssetClass
from alphadesk.agents.assistant.tasks import AnswerTask, QuestionTask
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript

__all__ = ["ANSWER", "SKILLS", "answer_agent", "skill_for"]

_PROMPTS = "alphadesk.agents.assistant"
_TOP = 3  # screened symbols looked at more closely
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
    return write_answer(c.question_type, _results(t), unresolved, (task.as_of_note or "").strip())


def _first_step(t: Transcript) -> list[PlannedCall]:
    offered = " ".join(t.prompt.split())
    if "screener" in offered or "find" in offered.lower():
        return [("stock_screener", {"trend": "up", "limit": 10})]
    return [("get_market_overview", {})]


def _second_step(t: Transcript) -> list[PlannedCall]:
    if "stock_screener" in t.results:
        screen = t.results["stock_screener"][-1]
        rows = screen.get("results", []) if isinstance(screen, dict) else []
        return [("get_technical_indicators", {"symbol": r["symbol"]}) for r in rows[:_TOP]]
    overview = t.results.get("get_market_overview", [None])[-1]
    question = t.task_as(QuestionTask).question.strip()
    return [
        (
            "think_deeply",
            {
                "query": question,
                "context": json.dumps(overview, default=str)[:4000],
            },
        )
    ]


answer_policy = RulesPolicy(plan=[_first_step, _second_step], decide=_decide, name="answer")

ANSWER: AgentSpec[Any, str] = AgentSpec(
    agent=Agent(name="answer", instructions="", output_type=str, stream=True, max_tokens=1200),
    policy=answer_policy,
    turns={"quick": 2, "standard": 4, "deep": 6},
)
