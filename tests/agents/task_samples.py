"""One sample task of every agent template, built the way the pipelines build them.

``rendered_tasks.json`` holds the text each sample rendered to before tasks were typed
data; a task object must still render exactly that text for an LLM.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from alphadesk.agents.algo.tasks import (
    AlgoTask,
    FailureTask,
    GateTask,
    LeaderTask,
    StrategistTask,
    SubagentTask,
    SynthesizerTask,
    TrajectoryTask,
)
from alphadesk.agents.assistant.models import Classification
from alphadesk.agents.assistant.tasks import (
    AnswerTask,
    ClassifierTask,
    IterateTask,
    RouterTask,
    ThinkerTask,
)
from alphadesk.agents.csp import CspDeps
from alphadesk.agents.csp.models import ChartAnalysis, CspConstraints
from alphadesk.agents.csp.tasks import ChartTask, NarrativeTask, OptionsTask, ResearchTask
from alphadesk.data.providers.bundled import BundledProvider

AS_OF = datetime(2024, 11, 29, 21, tzinfo=UTC)
FACTS = {"close": 138.25, "sma_50": 140.0, "rsi_14": 55.5, "pe_ratio": 52.1, "beta": 1}
BRIEFING = {"market": {"stance": "bullish", "summary": "Above the 200-day average."}}
MEMORIES = [{"lesson": "Trim into strength.", "return_pct": -2.5, "similarity": 0.81}]
PLAN = {"recommendation": "buy", "rationale": "Momentum and margins.", "confidence": 0.7}
PROPOSAL = {"action": "buy", "entry": 138.25, "stop_loss": 129.0, "take_profit": None}
CHART = {
    "recommendation": "bullish",
    "trend_direction": "up",
    "trend_quality": "strong",
    "current_price": 138.25,
    "support_levels": [{"price": 131.5, "strength": "strong", "type": "50-day average"}],
    "resistance_levels": [],
    "extension_risk": "moderate",
    "chart_notes": "Trend intact above support.",
}
VARIANTS = [{"variant_id": "v1", "score": 0.42, "passed": False, "error": None}]


class _Decision(BaseModel):
    symbol: str
    decision: str
    run_id: str
    agents: list[str]
    reason: str | None = None
    put: dict[str, Any] | None = None


def _csp(name: str) -> Callable[[], Any]:
    deps = CspDeps(
        market=BundledProvider(),
        symbol="NVDA",
        constraints=CspConstraints(dte_max=30, delta_max=0.25),
        chart=ChartAnalysis.model_validate(CHART),
    )
    tasks: dict[str, Callable[[], Any]] = {
        "chart": lambda: ChartTask(symbol=deps.symbol, as_of=AS_OF),
        "options": lambda: OptionsTask(
            symbol=deps.symbol,
            as_of=AS_OF,
            constraints=deps.constraints,
            chart_context=deps.chart,
        ),
        "research": lambda: ResearchTask(
            symbol=deps.symbol, as_of=AS_OF, horizon_days=deps.horizon_days
        ),
    }
    return tasks[name]


def _narrative() -> Any:
    decision = _Decision(symbol="NVDA", decision="sell", run_id="r1", agents=["chart"])
    return NarrativeTask(symbol="NVDA", as_of=AS_OF, decision=decision)


def _desk(name: str, *, task: str | None = None, **context: Any) -> Callable[[], Any]:
    from alphadesk.agents.desk import tasks

    kind = {
        "market": tasks.MarketTask,
        "sentiment": tasks.SentimentTask,
        "news": tasks.NewsTask,
        "fundamentals": tasks.FundamentalsTask,
        "bull": tasks.ResearcherTask,
        "bear": tasks.ResearcherTask,
        "rebuttal": tasks.RebuttalTask,
        "manager": tasks.ManagerTask,
        "trader": tasks.TraderTask,
        "safe": tasks.RiskTask,
        "risk_rebuttal": tasks.RiskRebuttalTask,
        "judge": tasks.JudgeTask,
    }[task or name]
    return lambda: kind(symbol="NVDA", as_of=AS_OF, facts=FACTS, **context)


def _algo(kind: type[AlgoTask], **context: Any) -> Callable[[], Any]:
    return lambda: kind(symbol="AAPL", as_of=AS_OF, **context)


CLASSIFICATION = Classification.model_validate(
    {
        "question_type": "stock_specific",
        "symbols": ["NVDA"],
        "categories": ["deep_analysis"],
        "asset_class": "stock",
        "unresolved": [{"text": "Nvidiaa", "close_matches": ["NVDA"]}],
    }
)
QUESTION = {
    "history": "user: Hi — how's the market?\nassistant: Calm; the VIX is 13.",
    "question": "Should I buy Nvidiaa before earnings?",
    "as_of": AS_OF,
    "as_of_note": "Prices are as of the last close.",
    "classification": CLASSIFICATION,
}
RESULTS = [{"tool": "get_market_overview", "arguments": {}, "ok": True, "result": {"spy": 602.55}}]

SAMPLES: dict[str, Callable[[], Any]] = {
    "assistant.classifier": lambda: ClassifierTask(
        history=QUESTION["history"], question=QUESTION["question"]
    ),
    "assistant.router": lambda: RouterTask(
        question=QUESTION["question"], classification=CLASSIFICATION
    ),
    "assistant.answer": lambda: AnswerTask(**QUESTION, results=RESULTS),
    "assistant.iterate": lambda: IterateTask(**QUESTION, turns=4),
    "assistant.thinker": lambda: ThinkerTask(
        query="Is NVDA stretched?", context='{"rsi_14": 71.2}'
    ),
    "csp.chart": _csp("chart"),
    "csp.options": _csp("options"),
    "csp.research": _csp("research"),
    "csp.narrator": _narrative,
    "desk.market": _desk("market"),
    "desk.sentiment": _desk("sentiment"),
    "desk.news": _desk("news"),
    "desk.fundamentals": _desk("fundamentals"),
    "desk.bull": _desk(
        "bull",
        round=2,
        rounds=2,
        stance="bull",
        opponent="bear",
        briefing=BRIEFING,
        opponent_turn={"speaker": "bear", "argument": "Valuation is stretched."},
        memories=MEMORIES,
    ),
    "desk.bear": _desk(
        "bear",
        round=1,
        rounds=1,
        stance="bear",
        opponent="bull",
        briefing=BRIEFING,
        opponent_turn=None,
        memories=[],
    ),
    "desk.rebuttal": _desk(
        "bear",
        task="rebuttal",
        round=1,
        rounds=2,
        stance="bear",
        opponent="bull",
        own_turn={"speaker": "bear", "argument": "Valuation is stretched."},
        opponent_turn={"speaker": "bull", "argument": "Growth."},
    ),
    "desk.manager": _desk(
        "manager", briefing=BRIEFING, debate=[{"speaker": "bull", "argument": "Growth."}]
    ),
    "desk.trader": _desk("trader", plan=PLAN, memories=MEMORIES),
    "desk.safe": _desk(
        "safe",
        round=1,
        rounds=1,
        persona="safe",
        proposal=PROPOSAL,
        briefing=BRIEFING,
        others={"risky": {"view": "Size up."}},
    ),
    "desk.risk_rebuttal": _desk(
        "safe",
        task="risk_rebuttal",
        round=1,
        rounds=1,
        persona="safe",
        proposal=PROPOSAL,
        own_view={"speaker": "safe", "view": "Keep the stop."},
        others={"risky": {"view": "Size up."}, "neutral": {"view": "Hold the size."}},
    ),
    "desk.judge": _desk(
        "judge",
        proposal=PROPOSAL,
        plan=PLAN,
        risk_debate=[{"speaker": "safe", "view": "Keep the stop."}],
        memories=MEMORIES,
    ),
    "algo.research": _algo(SubagentTask, directive="find an edge for: beat buy and hold"),
    "algo.synthesizer": _algo(
        SynthesizerTask, domain="technical", reports=[{"domain": "technical", "finding": "trend"}]
    ),
    "algo.leader": _algo(
        LeaderTask,
        goal="beat buy and hold",
        sheets=[{"domain": "technical", "approaches": ["trend"]}],
        feedback=None,
    ),
    "algo.strategist": _algo(
        StrategistTask,
        iteration=2,
        goal="beat buy and hold",
        n=3,
        brief={"approaches": ["trend"], "summary": "Follow the trend."},
        last={"decision": "refine", "reasoning": "Overfit."},
        tried={"sma_cross": [{"fast": 10, "slow": 50}]},
        library=[{"template": "sma_cross", "parameters": {"fast": [5, 10]}}],
    ),
    "algo.failure": _algo(
        FailureTask,
        iteration=1,
        iterations=3,
        goal="beat buy and hold",
        variants=VARIANTS,
        history=[],
        trials={"trials": 6, "deflated_sharpe": 0.902, "pbo": 0.824, "refused": "overfitting"},
    ),
    "algo.trajectory": _algo(TrajectoryTask, trajectory={"shape": "rising", "scores": [0.2, 0.4]}),
    "algo.gate": _algo(
        GateTask,
        iteration=2,
        iterations=3,
        goal="beat buy and hold",
        variants=VARIANTS,
        failure={"root_cause": "too few trades"},
        trajectory=None,
        trials={"trials": 6, "deflated_sharpe": 0.902, "pbo": 0.824, "refused": "overfitting"},
        refinements=1,
    ),
}
