"""The Options Analyst: the put to sell (strike, expiration, premium, Greeks), or why none."""

from __future__ import annotations

from typing import Any

from alphadesk.agent import Agent
from alphadesk.agents.csp.deps import CspDeps
from alphadesk.agents.csp.models import AlternativeStrike, OptionsAnalysis
from alphadesk.agents.csp.tasks import OptionsTask
from alphadesk.agents.csp.validators import options_exist_in_chain
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import PlannedCall, RulesPolicy, Transcript
from alphadesk.tools.options import OPTIONS_TOOLS

__all__ = ["OPTIONS", "options_policy"]

_MAX_SPREAD_PCT = 25.0  # wider than this and the quoted premium is not a real price


def _scan(t: Transcript) -> list[PlannedCall]:
    task = t.task_as(OptionsTask)
    symbol, rules = task.symbol, task.constraints
    return [
        ("calculate_iv_hv", {"symbol": symbol, "target_dte": max(rules.dte_min, 7)}),
        (
            "filter_options",
            {
                "symbol": symbol,
                "option_type": "put",
                "dte_min": rules.dte_min,
                "dte_max": rules.dte_max,
                "delta_min": rules.delta_min,
                "delta_max": rules.delta_max,
                "min_weekly_roc": rules.min_weekly_roc,
                "max_spread_pct": _MAX_SPREAD_PCT,
                "sort_by": "weekly_roc",
                "limit": 10,
            },
        ),
    ]


def _price_best(t: Transcript) -> list[PlannedCall]:
    best = _ranked(t)
    if not best:
        return []
    top = best[0]
    return [
        (
            "calculate_roc",
            {
                "premium": top["mid"],
                "strike": top["strike"],
                "dte": top["dte"],
                "symbol": t.task_as(OptionsTask).symbol,
                "iv": top["iv"],
            },
        )
    ]


def _ranked(t: Transcript) -> list[dict[str, Any]]:
    """Matching puts, those at or below the chart's nearest support first, then by return."""
    found = t.facts("filter_options")
    contracts = [c for c in found.get("contracts", []) if c.get("mid")] if found else []
    chart = t.task_as(OptionsTask).chart_context
    supports = [level.price for level in chart.support_levels] if chart else []
    floor = max(supports) if supports else None

    def key(c: dict[str, Any]) -> tuple[int, float]:
        below = floor is not None and c["strike"] <= floor
        return (0 if below else 1, -(c.get("weekly_roc") or 0.0))

    return sorted(contracts, key=key)


def _decide(t: Transcript) -> OptionsAnalysis:
    rules, ranked = t.task_as(OptionsTask).constraints, _ranked(t)
    vol = t.facts("calculate_iv_hv")
    hv, ratio = vol.get("hv"), vol.get("iv_hv_ratio")
    if not ranked:
        found = t.facts("filter_options")
        failed = ", ".join(f"{k}: {v}" for k, v in found.get("rejected_by", {}).items())
        return OptionsAnalysis(
            recommendation="reject",
            hv=hv,
            iv_hv_ratio=ratio,
            rationale=(
                f"No put between {rules.dte_min} and {rules.dte_max} days with |delta| "
                f"{rules.delta_min}-{rules.delta_max} and at least {rules.min_weekly_roc}% a week"
                + (f" (contracts failing each test: {failed})" if failed else "")
            ),
            options_notes="; ".join(found.get("missing", []) + found.get("notes", [])),
        )
    best, alternatives = ranked[0], ranked[1:4]
    roc = t.results.get("calculate_roc", [{}])[-1] or {}
    pop = roc.get("probability_of_profit")
    return OptionsAnalysis(
        recommendation="select",
        best_strike=best["strike"],
        best_expiration=best["expiration"],
        dte=best["dte"],
        premium=best["mid"],
        weekly_roc=best["weekly_roc"],
        annualized_roc=best["annualized_roc"],
        delta=best["delta"],
        gamma=best["gamma"],
        theta=best["theta"],
        vega=best["vega"],
        iv=best["iv"],
        hv=hv,
        iv_hv_ratio=ratio,
        liquidity_score=_liquidity(best),
        alternative_strikes=[
            AlternativeStrike(
                strike=c["strike"],
                expiration=c["expiration"],
                weekly_roc=c["weekly_roc"],
                delta=c["delta"],
            )
            for c in alternatives
        ],
        rationale=(
            f"The {best['expiration']} {best['strike']:g} put: delta {best['delta']:.2f}, "
            f"{best['weekly_roc']:.2f}% a week on the cash secured"
            + (f", {pop:.0%} probability of profit" if pop is not None else "")
            + (f"; IV/HV {ratio:.2f} ({vol.get('assessment')})" if ratio is not None else "")
        ),
        options_notes=_source_note(t.facts("filter_options")),
    )


def _liquidity(contract: dict[str, Any]) -> Any:
    spread, interest = contract.get("spread_pct"), contract.get("open_interest") or 0
    if spread is None:
        return "poor"
    if spread <= 5 and interest >= 500:
        return "good"
    return "fair" if spread <= 12 else "poor"


def _source_note(found: dict[str, Any]) -> str:
    source = found.get("source") or {}
    note = f"chain from {source.get('provider', 'unknown')} ({source.get('origin', 'unknown')})"
    return "; ".join([note, *found.get("missing", [])])


options_policy = RulesPolicy(plan=[_scan, _price_best], decide=_decide, name="options")

OPTIONS: AgentSpec[CspDeps, OptionsAnalysis] = AgentSpec(
    agent=Agent(
        name="options",
        max_tokens=1000,
        instructions=load_prompt("alphadesk.agents.csp", "options_system").template,
        output_type=OptionsAnalysis,
        toolset=OPTIONS_TOOLS,
        output_validators=(options_exist_in_chain,),
    ),
    policy=options_policy,
    turns={"quick": 3, "standard": 6, "deep": 12},
)
