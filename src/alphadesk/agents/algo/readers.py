"""How each research subagent's rules policy reads its tools' facts into findings.

A reader returns the findings, the data quality and what was missing. A tool that had no
data yields no finding: its ``missing`` lines are passed on, never turned into a neutral.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from alphadesk.agents.algo.models import Finding
from alphadesk.llm.rules import Transcript

__all__ = ["READERS", "Reading"]

Reading = tuple[list[Finding], str, list[str]]  # findings, data quality, missing


def _facts(t: Transcript, tool: str) -> tuple[dict[str, Any], list[str]]:
    """The tool's facts, or an empty dict with the tool's error as a missing line."""
    result = t.last(tool)
    if not isinstance(result, dict):
        return {}, [f"{tool}: {str(result)[:200]}"]
    return result, list(result.get("missing") or [])


def _lean(x: float, band: float = 0.0) -> Any:
    return "bullish" if x > band else "bearish" if x < -band else "neutral"


def _quality(findings: list[Finding], modeled: bool = False) -> str:
    return "missing" if not findings else "modeled" if modeled else "observed"


def _trend(t: Transcript) -> Reading:
    ind, missing = _facts(t, "get_technical_indicators")
    trend = ind.get("trend")
    if not trend:
        return [], "missing", missing or ["trend: no indicators"]
    sign = {"up": 1, "down": -1}.get(trend["direction"], 0)
    found = [
        Finding(
            indicator="trend",
            value=trend.get("score"),
            interpretation=f"{trend['quality']} {trend['direction']}trend, ADX {trend.get('adx')}",
            signal=_lean(sign),
            confidence=min(1.0, 0.3 + abs(trend.get("score") or 0)),
        ),
        Finding(
            indicator="adx_14",
            value=ind.get("adx_14"),
            interpretation="trending market" if (ind.get("adx_14") or 0) >= 25 else "range-bound",
            signal="neutral",
            confidence=0.6,
        ),
    ]
    return found, "observed", missing


def _momentum(t: Transcript) -> Reading:
    ind, missing = _facts(t, "get_technical_indicators")
    found: list[Finding] = []
    rsi = ind.get("rsi_14")
    if rsi is not None:
        state = "overbought" if rsi >= 70 else "oversold" if rsi <= 30 else "neutral"
        found.append(
            Finding(
                indicator="rsi_14",
                value=rsi,
                interpretation=f"RSI {state}",
                signal="bearish" if rsi >= 70 else "bullish" if rsi <= 30 else "neutral",
                confidence=0.5,
            )
        )
    hist = ind.get("macd_histogram")
    if hist is not None:
        found.append(
            Finding(
                indicator="macd_histogram",
                value=hist,
                interpretation=f"MACD {'above' if hist > 0 else 'below'} its signal line",
                signal=_lean(hist),
                confidence=0.5,
            )
        )
    return found, _quality(found), missing


def _volatility(t: Transcript) -> Reading:
    ind, missing = _facts(t, "get_technical_indicators")
    found: list[Finding] = []
    if ind.get("hv_20") is not None:
        hv = float(ind["hv_20"])
        regime = "high" if hv >= 35 else "low" if hv <= 15 else "normal"
        found.append(
            Finding(
                indicator="hv_20",
                value=hv,
                interpretation=f"{regime} volatility regime ({hv:g}% annualised)",
                signal="neutral",
                confidence=0.6,
            )
        )
    if ind.get("bb_percent_b") is not None:
        b = float(ind["bb_percent_b"])
        found.append(
            Finding(
                indicator="bb_percent_b",
                value=b,
                interpretation="at the upper band"
                if b > 0.9
                else "at the lower band"
                if b < 0.1
                else "inside the bands",
                signal="bearish" if b > 1 else "bullish" if b < 0 else "neutral",
                confidence=0.4,
            )
        )
    return found, _quality(found), missing


def _volume(t: Transcript) -> Reading:
    history, missing = _facts(t, "get_price_history")
    tail = history.get("tail") or []
    if len(tail) < 10:
        return [], "missing", missing or ["volume: too few bars"]
    recent = sum(b["volume"] for b in tail[-5:]) / 5
    average = history.get("avg_volume") or recent
    ratio = recent / average if average else 1.0
    up = tail[-1]["close"] >= tail[-6]["close"]
    finding = Finding(
        indicator="volume_ratio_5d",
        value=round(ratio, 3),
        interpretation=f"last 5 days' volume {ratio:.2f}x the period average on "
        f"{'rising' if up else 'falling'} prices",
        signal=_lean((1 if up else -1) * (ratio - 1.0), 0.2),
        confidence=0.4,
    )
    return [finding], "observed", missing


def _patterns(t: Transcript) -> Reading:
    found_patterns, missing = _facts(t, "detect_chart_patterns")
    found = [
        Finding(
            indicator=p["name"],
            value=p.get("breakout_level"),
            interpretation=f"{p['name']} {p['status']}, breakout level {p.get('breakout_level')}",
            signal=p["direction"] if p["direction"] in ("bullish", "bearish") else "neutral",
            confidence=float(p.get("confidence") or 0.3),
        )
        for p in (found_patterns.get("patterns") or [])[:3]
    ]
    if not found and found_patterns and not missing:
        found = [
            Finding(
                indicator="patterns_found",
                value=0.0,
                interpretation="no chart pattern in the last six months",
                signal="neutral",
                confidence=0.3,
            )
        ]
    return found, _quality(found), missing


def _figure(tool: str, fields: tuple[str, ...], good: Callable[[str, float], float]) -> Any:
    """A reader of named numeric fields of one tool, each signed by ``good``."""

    def read(t: Transcript) -> Reading:
        facts, missing = _facts(t, tool)
        if facts.get("available") is False:
            return [], "missing", missing or [f"{tool}: unavailable"]
        found = [
            Finding(
                indicator=name,
                value=float(facts[name]),
                interpretation=f"{name.replace('_', ' ')} {facts[name]:g}",
                signal=_lean(good(name, float(facts[name]))),
                confidence=0.5,
            )
            for name in fields
            if isinstance(facts.get(name), int | float)
        ]
        return found, _quality(found), missing

    return read


def _fundamental(name: str, value: float) -> float:
    if name == "debt_to_equity":
        return 1.0 - value  # below 1 is comfortable
    if name == "current_ratio":
        return value - 1.0
    return value  # margins: positive is good


def _options(t: Transcript) -> Reading:
    facts, missing = _facts(t, "calculate_iv_hv")
    source = facts.get("source") or {}
    modeled = source.get("origin") == "modeled"
    missing = (
        [*missing, "options flow: no observed volume or open interest"] if modeled else missing
    )
    ratio = facts.get("iv_hv_ratio")
    found = []
    if ratio is not None:
        found.append(
            Finding(
                indicator="iv_hv_ratio",
                value=ratio,
                interpretation=f"implied volatility {facts.get('assessment')} against realised "
                f"({'modeled chain' if modeled else 'observed chain'})",
                signal="bearish" if ratio > 1.3 else "neutral",
                confidence=0.2 if modeled else 0.5,
            )
        )
    return found, _quality(found, modeled), missing


READERS: dict[str, Callable[[Transcript], Reading]] = {
    "trend": _trend,
    "momentum": _momentum,
    "volatility": _volatility,
    "volume": _volume,
    "patterns": _patterns,
    "metrics": _figure(
        "get_fundamentals", ("net_margin_pct", "operating_margin_pct"), _fundamental
    ),
    "valuation": _figure("get_fundamentals", ("pe_ratio", "ps_ratio", "pb_ratio"), lambda n, v: 0),
    "balance_sheet": _figure("get_fundamentals", ("current_ratio", "debt_to_equity"), _fundamental),
    "cash_flow": _figure(
        "get_fundamentals", ("free_cash_flow", "operating_cash_flow"), lambda n, v: v
    ),
    "industry": _figure("get_sec_filings", ("count", "count_8k"), lambda n, v: 0),
    "news": _figure("get_news", ("sentiment_score",), lambda n, v: v),
    "social": _figure("get_social_sentiment", ("bullish_share",), lambda n, v: v - 0.5),
    "analyst": _figure("get_analyst_ratings", ("net_upgrades",), lambda n, v: v),
    "options_flow": _options,
    "insider": _figure("get_sec_filings", ("count",), lambda n, v: 0),
}
