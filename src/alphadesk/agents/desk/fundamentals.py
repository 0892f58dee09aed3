"""The fundamentals analyst: growth, margins, cash flow, balance sheet and valuation, as
filed by the instant (SEC company facts, each from its filing's acceptance)."""

from __future__ import annotations

from alphadesk.agent import Agent
from alphadesk.agents.desk.deps import DeskDeps
from alphadesk.agents.desk.figures import fundamentals_figures
from alphadesk.agents.desk.models import FundamentalsReport
from alphadesk.agents.desk.scoring import Tally, collect_missing, signal_of
from alphadesk.agents.desk.tasks import FundamentalsTask
from alphadesk.agents.desk.validators import fundamentals_match_filings
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.fundamentals import FUNDAMENTALS_TOOLS

__all__ = ["FUNDAMENTALS", "fundamentals_policy"]


def _gather(t: Transcript) -> list[PlannedCall]:
    return [("get_fundamentals", {"symbol": t.task_as(FundamentalsTask).symbol})]


def _growth(tally: Tally) -> None:
    for name in ("revenue_growth_pct", "revenue_annual_change_pct", "revenue_quarter_change_pct"):
        growth = tally.figures.get(name)
        if growth is not None:
            weight = 0.25 if growth >= 15 else 0.1 if growth >= 5 else -0.2 if growth < 0 else 0.0
            tally.add(name, weight, f"revenue {growth:+g}% over a year")
            break
    for name in ("eps_growth_pct", "eps_diluted_annual_change_pct"):
        eps = tally.figures.get(name)
        if eps is not None:
            weight = 0.1 if eps >= 10 else -0.15 if eps <= -10 else 0.0
            tally.add(name, weight, f"EPS {eps:+g}% over a year")
            break


def _quality(tally: Tally) -> None:
    margin = tally.figures.get("net_margin_pct")
    if margin is not None:
        weight = 0.1 if margin >= 15 else -0.2 if margin < 0 else 0.0
        tally.add("net_margin_pct", weight, f"net margin {margin:g}%")
    cash = tally.figures.get("fcf_margin_pct")
    if cash is not None:
        weight = 0.05 if cash >= 10 else -0.1 if cash < 0 else 0.0
        tally.add("fcf_margin_pct", weight, f"free cash flow {cash:g}% of revenue")
    ratio = tally.figures.get("current_ratio")
    if ratio is not None:
        tally.add("current_ratio", -0.1 if ratio < 1 else 0.0, f"current ratio {ratio:g}")
    leverage = tally.figures.get("debt_to_equity")
    if leverage is not None:
        tally.add("debt_to_equity", -0.1 if leverage > 2 else 0.0, f"debt/equity {leverage:g}")


def _valuation(tally: Tally) -> None:
    """A rich multiple tempers the case, a modest one supports it (none: not weighed)."""
    pe = tally.figures.get("pe_ratio")
    if pe is not None:
        weight = -0.1 if pe > 40 else 0.05 if pe < 15 else 0.0
        tally.add("pe_ratio", weight, f"P/E {pe:g} on trailing EPS")
    ev = tally.figures.get("ev_to_ebitda")
    if ev is not None and pe is None:
        tally.add("ev_to_ebitda", -0.1 if ev > 25 else 0.0, f"EV/EBITDA {ev:g}")


def _decide(t: Transcript) -> FundamentalsReport:
    report = t.facts("get_fundamentals")
    if not report.get("available"):
        return FundamentalsReport(
            signal="neutral",
            score=0.0,
            confidence=0.0,
            summary="No financial statements at the analysis date: fundamentals unknown.",
            missing=collect_missing(report),
            fundamentals_available=False,
        )
    tally = Tally(fundamentals_figures(report))
    _growth(tally)
    _quality(tally)
    _valuation(tally)
    score = tally.score
    points = "; ".join(e.reading for e in tally.evidence) or "no figure stands out"
    return FundamentalsReport(
        signal=signal_of(score),
        score=score,
        confidence=round(min(1.0, 0.3 + abs(score)), 2),
        figures=tally.figures,
        evidence=tally.evidence,
        summary=f"As filed by {report.get('last_filed')} ({report.get('last_form')}): {points}.",
        missing=collect_missing(report),
        fundamentals_available=True,
        last_filed=report.get("last_filed"),
    )


fundamentals_policy = RulesPolicy(plan=[_gather], decide=_decide, name="fundamentals")

FUNDAMENTALS: AgentSpec[DeskDeps, FundamentalsReport] = AgentSpec(
    agent=Agent(
        name="fundamentals",
        max_tokens=1200,
        instructions=load_prompt("alphadesk.agents.desk", "fundamentals_system").template,
        output_type=FundamentalsReport,
        toolset=FUNDAMENTALS_TOOLS,
        output_validators=(fundamentals_match_filings,),
    ),
    policy=fundamentals_policy,
    turns={"quick": 2, "standard": 4, "deep": 8},
)
