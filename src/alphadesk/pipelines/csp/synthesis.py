"""The orchestrator's synthesis: rationale, risk factors and a suggested position, computed
deterministically from the three analyses (the words come from their fields)."""

from __future__ import annotations

from alphadesk.agents.csp.models import ChartAnalysis, OptionsAnalysis, ResearchAnalysis
from alphadesk.pipelines.csp.models import SuggestedPosition, Synthesis

__all__ = ["synthesize"]


def synthesize(
    symbol: str, chart: ChartAnalysis, options: OptionsAnalysis, research: ResearchAnalysis
) -> Synthesis:
    """Combine three accepted analyses into a recommendation.

    Raises:
        ValueError: the options analysis selected no contract (it must, to get here).
    """
    strike, expiration, dte = options.best_strike, options.best_expiration, options.dte
    if strike is None or expiration is None or dte is None or options.premium is None:
        raise ValueError("options analysis selected no contract: nothing to synthesise")
    return Synthesis(
        rationale="; ".join(_rationale(chart, options, research)) + ".",
        risk_factors=_risk_factors(chart, options, research),
        suggested_position=SuggestedPosition(
            symbol=symbol,
            strike=strike,
            expiration=expiration,
            dte=dte,
            premium=options.premium,
            delta=options.delta,
            weekly_roc=options.weekly_roc,
            annualized_roc=options.annualized_roc,
            capital_required=round(strike * 100, 2),
            max_profit=round(options.premium * 100, 2),
            breakeven=round(strike - options.premium, 2),
        ),
    )


def _rationale(
    chart: ChartAnalysis, options: OptionsAnalysis, research: ResearchAnalysis
) -> list[str]:
    parts = [f"{chart.trend_quality.capitalize()} {chart.trend_direction}trend"]
    supports_below = [s for s in chart.support_levels if s.price < chart.current_price]
    if supports_below:
        top = supports_below[0]
        parts.append(f"key support at ${top.price:.2f} ({top.strength}, {top.type})")
        if options.best_strike is not None and options.best_strike <= top.price:
            parts.append(f"strike ${options.best_strike:g} sits at or below that support")
    if chart.fib_confluence_zones:
        zone = chart.fib_confluence_zones[0]
        parts.append(f"confluence at ${zone.price:.2f} ({', '.join(zone.levels)})")
    if options.iv_hv_ratio is not None:
        if options.iv_hv_ratio > 1.2:
            parts.append(f"IV rich versus HV (ratio {options.iv_hv_ratio:.2f})")
        elif options.iv_hv_ratio >= 0.9:
            parts.append(f"IV near HV (ratio {options.iv_hv_ratio:.2f})")
        else:
            parts.append(f"IV cheap versus HV (ratio {options.iv_hv_ratio:.2f})")
    if options.weekly_roc is not None:
        parts.append(f"return on capital {options.weekly_roc:.2f}% a week")
    if research.news_risk == "high":
        parts.append("CAUTION: elevated news risk")
    if research.earnings_risk == "high":
        parts.append("CAUTION: earnings within the option's life")
    return parts


def _risk_factors(
    chart: ChartAnalysis, options: OptionsAnalysis, research: ResearchAnalysis
) -> list[str]:
    risks = []
    if chart.extension_risk == "high":
        risks.append("Stock extended far above support")
    if chart.trend_direction == "down":
        risks.append("Downtrend: assignment risk is higher")
    if research.short_interest_risk == "high":
        risks.append("High short interest: violent moves possible")
    if research.earnings_risk != "low":
        when = f" ({research.next_earnings})" if research.next_earnings else ""
        risks.append(f"Earnings risk {research.earnings_risk}{when}")
    if research.news_risk != "low":
        risks.append(f"News risk {research.news_risk}")
    if options.liquidity_score == "poor":
        risks.append("Poor option liquidity: wide spreads")
    return risks
