"""A Markdown report of a cash-secured-put decision: what was decided, why, and by whom."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from alphadesk.pipelines.csp.models import CspResult
from alphadesk.pipelines.reporting import agents_table

__all__ = ["render_report"]

_NEW_YORK = ZoneInfo("America/New_York")


def render_report(result: CspResult) -> str:
    """The report saved with the run and printed by ``alphadesk runs show``."""
    lines = [f"# {result.symbol}: {result.decision.upper()}", ""]
    when = result.as_of.astimezone(_NEW_YORK).strftime("%Y-%m-%d %H:%M New York time")
    lines.append(f"As of {when}" + (f", run `{result.run_id}`" if result.run_id else ""))
    lines.append("")
    if result.price_basis:
        lines += [f"Prices {result.price_basis}.", ""]
    if result.reason:
        lines += [f"**Reason:** {result.reason}", ""]  # the reason names the step
    if result.synthesis is not None:
        position = result.synthesis.suggested_position
        lines += [
            "## Suggested position",
            "",
            f"Sell 1 {result.symbol} {position.expiration.isoformat()} {position.strike:g} put "
            f"({position.dte} days) for ${position.premium:.2f}.",
            "",
            "| delta | weekly ROC | annualised ROC | cash required | max profit | breakeven |",
            "|---|---|---|---|---|---|",
            f"| {_num(position.delta, '.3f')} | {_num(position.weekly_roc, '.2f')}% "
            f"| {_num(position.annualized_roc, '.1f')}% | ${position.capital_required:,.0f} "
            f"| ${position.max_profit:,.0f} | ${position.breakeven:,.2f} |",
            "",
            f"**Rationale:** {result.synthesis.rationale}",
            "",
        ]
        if result.synthesis.risk_factors:
            lines += ["**Risk factors:**", ""] + [f"- {r}" for r in result.synthesis.risk_factors]
            lines.append("")
        if result.synthesis.narrative:
            lines += ["## Orchestrator's view", "", result.synthesis.narrative, ""]
    lines += _chart(result) + _options(result) + _research(result)
    lines += agents_table(result.agents)
    if result.data_missing:
        lines += ["", "## Data missing", ""] + [f"- {item}" for item in result.data_missing]
    return "\n".join(lines) + "\n"


def _chart(result: CspResult) -> list[str]:
    chart = result.chart
    if chart is None:
        return []
    supports = ", ".join(
        f"${s.price:.2f} ({s.strength} {s.type})" for s in chart.support_levels[:4]
    )
    resistances = ", ".join(f"${r.price:.2f}" for r in chart.resistance_levels[:3])
    return [
        "## Chart",
        "",
        f"{chart.recommendation}: {chart.trend_quality} {chart.trend_direction}trend, "
        f"price ${chart.current_price:.2f}, extension risk {chart.extension_risk}.",
        f"Support: {supports or 'none found'}. Resistance: {resistances or 'none found'}.",
        "",
        chart.chart_notes,
        "",
    ]


def _options(result: CspResult) -> list[str]:
    options = result.options
    if options is None:
        return []
    lines = ["## Options", "", f"{options.recommendation}: {options.rationale}", ""]
    if options.iv is not None or options.hv is not None:
        lines += [
            f"IV {_num(options.iv, '.1%')}, HV {_num(options.hv, '.1%')}, "
            f"IV/HV {_num(options.iv_hv_ratio, '.2f')}; liquidity {options.liquidity_score}.",
            "",
        ]
    if options.alternative_strikes:
        lines += [
            "Alternatives: "
            + ", ".join(
                f"{a.strike:g} {a.expiration} (delta {a.delta:.2f}, {a.weekly_roc:.2f}%/wk)"
                for a in options.alternative_strikes
            ),
            "",
        ]
    return lines


def _research(result: CspResult) -> list[str]:
    research = result.research
    if research is None:
        return []
    earnings = f", next earnings {research.next_earnings}" if research.next_earnings else ""
    return [
        "## Research",
        "",
        f"{research.recommendation}: news risk {research.news_risk}, earnings risk "
        f"{research.earnings_risk}{earnings}, short-interest risk {research.short_interest_risk}.",
        "",
        research.research_notes,
        "",
    ]


def _num(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)
