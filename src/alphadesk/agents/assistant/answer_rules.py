"""The ``rules`` answer writer: a plain summary of the tool results, figures copied as the
tools gave them, failures named. What an offline user reads instead of an LLM's prose."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from alphadesk.money import usd

__all__ = ["GREETING", "NO_TOOLS", "write_answer"]

GREETING = (
    "Hello! I answer questions about markets from real data: a symbol's chart, a "
    "comparison, a screen, your paper portfolio, the market's state, or a 0DTE SPY trade."
)
NO_TOOLS = (
    "With the offline rules model I can only answer from tools. Ask about a symbol "
    '("how does NVDA look technically"), a comparison, your positions, the market, or '
    "a 0DTE SPY strangle."
)

Result = dict[str, Any]


def _g(value: Any) -> str:
    """A figure exactly as the tool gave it (no re-rounding, so it traces back)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,}" if abs(value) >= 1e4 else repr(value)
    return str(value)


def _usd(value: Any) -> str:
    """A dollar amount to the cent (the tools round money to cents already)."""
    return usd(value) if isinstance(value, int | float) else str(value)


def _indicators(r: Result) -> str:
    trend = r.get("trend") or {}
    parts = [f"{r['symbol']}: last close {_g(r['current_price'])} ({r['last_date']})"]
    if trend:
        parts.append(f"trend {trend['direction']} ({trend['quality']})")
    if r.get("rsi_14") is not None:
        parts.append(f"RSI(14) {_g(r['rsi_14'])} ({r.get('rsi_state')})")
    if r.get("macd") is not None and r.get("macd_signal") is not None:
        parts.append(f"MACD {_g(r['macd'])} vs signal {_g(r['macd_signal'])}")
    for key, label in (("sma_50", "50-day SMA"), ("sma_200", "200-day SMA")):
        if r.get(key) is not None:
            parts.append(f"{label} {_g(r[key])}")
    if r.get("hv_20") is not None:
        parts.append(f"20-day historical volatility {_g(r['hv_20'])}%")
    return "; ".join(parts) + "."


def _levels(r: Result) -> str:
    def zones(items: list[Result]) -> str:
        return ", ".join(f"{_g(z['price'])} ({z['strength']})" for z in items[:3]) or "none"

    text = (
        f"{r['symbol']} levels: support {zones(r['support'])}; resistance {zones(r['resistance'])}"
    )
    extension = r.get("extension")
    if extension:
        text += f"; extension risk {extension.get('risk')}"
    return text + "."


def _patterns(r: Result) -> str:
    found = r.get("patterns") or []
    if found:
        listed = "; ".join(
            f"{p['name']} ({p['direction']}, {p['status']}"
            f"{' ' + str(p['confirmed_date']) if p.get('confirmed_date') else ''}, breakout "
            f"{_g(p['breakout_level'])}, target {_g(p['target'])}, invalidation "
            f"{_g(p['invalidation'])})"
            for p in found[:3]
        )
        text = f"{r['symbol']} patterns standing at {str(r['as_of'])[:10]}: {listed}."
    else:
        text = f"{r['symbol']}: no chart pattern standing at {str(r['as_of'])[:10]}."
    ended = r.get("ended") or []
    if ended:
        past = "; ".join(
            f"{p['name']} {p['state']} on {p['ended_date']} ({p['ended_reason']})"
            for p in ended[:3]
        )
        text += f" No longer in force: {past}."
    return text


def _fibonacci(r: Result) -> str:
    def level(item: Result | None) -> str:
        return f"{item['label']} at {_g(item['price'])}" if item else "none"

    return (
        f"{r['symbol']} Fibonacci levels of the {r['direction']} swing from "
        f"{_g(r['swing_low'])} ({r.get('swing_low_date')}) to {_g(r['swing_high'])} "
        f"({r.get('swing_high_date')}): {_g(r['retraced_pct'])}% retraced at "
        f"{_g(r['current_price'])}; nearest level below {level(r.get('nearest_below'))}, "
        f"above {level(r.get('nearest_above'))}."
    )


def _history(r: Result) -> str:
    return (
        f"{r['symbol']} over {r['period']}: {_g(r['current_price'])} on {r['last_date']}, "
        f"{_g(r['change_pct'])}% over the period; high {_g(r['period_high'])} "
        f"({r['period_high_date']}), low {_g(r['period_low'])} ({r['period_low_date']})."
    )


def _overview(r: Result) -> str:
    state = "open" if r["market_open"] else "closed"
    parts = [f"The market is {state}; the next 0DTE session is {r['zero_dte_session']}"]
    if r.get("price_at"):
        parts.append(f"prices as of the close of {str(r['price_at'])[:10]}")
    if r.get("sp500") is not None:
        parts.append(f"S&P 500 {_g(r['sp500'])} ({_g(r.get('sp500_change_pct'))}%)")
    if r.get("spy_price") is not None:
        parts.append(f"SPY {_g(r['spy_price'])} ({r.get('spy_basis')})")
    elif r.get("spy_price") is None:
        parts.append("SPY unavailable")
    if r.get("vix") is not None:
        parts.append(f"VIX {_g(r['vix'])}")
    text = "; ".join(parts) + "."
    gaps = [
        textwrap.shorten(str(m), 240, placeholder=" ...")
        for m in r.get("missing") or []
        if not str(m).startswith("note:")
    ]
    return text + (f" Not available: {'; '.join(gaps[:3])}." if gaps else "")


def _zero_dte(r: Result) -> str:
    legs = ", ".join(
        f"{leg['action']} the {_g(leg['strike'])} {leg['right']} at {_usd(leg['premium'])} "
        f"(delta {_g(leg['delta'])})"
        for leg in r["legs"]
    )
    worst = (
        "unlimited (a naked call)" if r.get("max_loss_total") is None else _usd(r["max_loss_total"])
    )
    breakevens = " and ".join(
        _g(r[k]) for k in ("breakeven_low", "breakeven_high") if r.get(k) is not None
    )
    return (
        f"0DTE SPY {r['strategy'].replace('_', ' ')} for the {r['session']} session "
        f"(SPY {_g(r['underlying_price'])}, {r['underlying_basis']}; VIX {_g(r.get('vix'))}): "
        f"{legs}. Credit {_usd(r['credit_total'])} for {r['contracts']} contract(s); max loss "
        f"{worst}; break-evens {breakevens}; probability of profit "
        f"{_g(r['probability_of_profit_pct'])}%; expected move ±{_g(r['expected_move'])}. "
        "Prices are modeled (Black-Scholes at the VIX), not quotes."
    )


def _positions(r: Result) -> str:
    if not r["positions"]:
        return (
            f"Your paper account {r['account']} holds no positions: cash {_usd(r['cash'])}, "
            f"account value {_usd(r['account_value'])}."
        )
    rows = "; ".join(
        f"{p['position']} x {_g(p['quantity'])} at {_g(p['average_cost'])}, mark "
        f"{_g(p['mark']) if p['mark'] is not None else 'none'}, P&L {_usd(p['unrealized_pnl'])}"
        for p in r["positions"]
    )
    return (
        f"Paper account {r['account']}: {rows}. Cash {_usd(r['cash'])}; account value "
        f"{_usd(r['account_value'])}; total P&L {_usd(r['total_pnl'])} "
        f"({_g(r['total_pnl_pct'])}%)."
    )


def _screen(r: Result) -> str:
    def rsi(row: Result) -> str:
        return f", RSI(14) {_g(row['rsi_14'])}" if row.get("rsi_14") is not None else ""

    rows = ", ".join(
        f"{row['symbol']} {_g(row['price'])} ({row['trend']} {row['trend_quality']}{rsi(row)})"
        for row in r["results"][:5]
    )
    return f"Screen: {r['matched']} of {r['evaluated']} symbols matched; top: {rows or 'none'}."


def _thought(r: Result) -> str:
    return f"Deep analysis ({r['model']}): {r['conclusion']}"


def _desk(r: Result) -> str:
    return f"The {r['desk']} desk on {r['symbol']}: {r['decision']}. {r['summary']}"


def _pick(r: Result, name: str) -> Result | None:
    figures = [f for f in r.get("figures") or [] if f["name"] == name]
    order = {"ttm": 0, "annual": 1, "instant": 2, "quarter": 3}
    return min(figures, key=lambda f: order[f["period"]], default=None)


def _fundamentals(r: Result) -> str:
    words = {"ttm": "twelve months to", "annual": "fiscal year to", "instant": "on"}
    parts = []
    for name in ("revenue", "net_income", "eps_diluted", "free_cash_flow", "cash"):
        f = _pick(r, name)
        if f is None:
            continue
        change = f" ({_g(f['change_pct'])}% over a year)" if f.get("change_pct") is not None else ""
        when = f"{words.get(f['period'], f['period'] + ' to')} {f['period_end']}"
        parts.append(f"{name.replace('_', ' ')} {_g(f['value'])} ({when}){change}")
    ratios = [
        f"{label} {_g(r[key])}{unit}"
        for key, label, unit in (
            ("gross_margin_pct", "gross margin", "%"),
            ("operating_margin_pct", "operating margin", "%"),
            ("net_margin_pct", "net margin", "%"),
            ("total_debt", "total debt", ""),
            ("debt_to_equity", "debt/equity", ""),
            ("pe_ratio", "P/E", ""),
            ("ps_ratio", "P/S", ""),
            ("pb_ratio", "P/B", ""),
            ("ev_to_ebitda", "EV/EBITDA", ""),
        )
        if r.get(key) is not None
    ]
    text = (
        f"{r['symbol']} as filed by {r['last_filed']} ({r['last_form']}): "
        f"{'; '.join(parts) or 'no key figure'}"
    )
    if ratios:
        text += f". {'; '.join(ratios)}"
    if r.get("price") is not None:
        text += f" (at {_g(r['price'])}: {r.get('price_basis')})"
    gaps = [m for m in r.get("missing") or [] if not m.startswith("note:")]
    return text + (f". Not known: {'; '.join(gaps[:6])}." if gaps else ".")


def _earnings(r: Result) -> str:
    last = f"last release {r['last_date']}" if r.get("last_date") else "no past release"
    if r.get("next_date"):
        return f"{r['symbol']} earnings: next {r['next_date']} (announced); {last}."
    nxt = "next release not announced (unknown)"
    if r.get("next_estimated_date"):
        nxt += f"; about {r['next_estimated_date']} by {r.get('next_estimate_basis')}"
    return f"{r['symbol']} earnings: {last}; {nxt}."


def _unavailable(tool: str, r: Result) -> str:
    subject = r.get("symbol") if r.get("symbol") not in (None, "-") else tool
    return f"{subject}: not available ({'; '.join(r.get('missing') or [])})."


_FORMATS: dict[str, Callable[[Result], str]] = {
    "get_technical_indicators": _indicators,
    "find_support_resistance": _levels,
    "detect_chart_patterns": _patterns,
    "calculate_fib_levels": _fibonacci,
    "get_price_history": _history,
    "get_market_overview": _overview,
    "run_zero_dte_engine": _zero_dte,
    "get_positions": _positions,
    "stock_screener": _screen,
    "think_deeply": _thought,
    "run_csp_desk": _desk,
    "run_trading_desk": _desk,
    "run_csp_screen": _desk,
    "get_fundamentals": _fundamentals,
    "get_earnings_dates": _earnings,
}


def _line(tool: str, result: Any) -> str:
    if not isinstance(result, dict):
        return f"Could not get {tool}: {str(result).removeprefix('Error: ')[:300]}"
    if result.get("available") is False:
        return _unavailable(tool, result)
    formatter = _FORMATS.get(tool)
    if formatter is None:
        return f"{tool}: see the tool result (no offline summary for it)."
    try:
        return formatter(result)
    except (KeyError, TypeError):
        return f"{tool}: the result had an unexpected shape."


def write_answer(
    question_type: str,
    results: list[tuple[str, Any]],
    unresolved: list[str],
    as_of_note: str,
    *,
    lead: str = "",
) -> str:
    """The rules answer: the ``lead`` (a discovery's finding), a line per tool result
    (failures included), then the caveats."""
    if question_type == "greeting" and not results:
        return GREETING
    lines = [_line(tool, result) for tool, result in results] or [NO_TOOLS]
    if lead:
        lines.insert(0, lead)
    lines += [f"I could not find the symbol {text}." for text in unresolved]
    if as_of_note:
        lines.append(as_of_note)
    return "\n".join(lines)
