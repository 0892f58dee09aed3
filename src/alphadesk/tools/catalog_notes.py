"""What each tool can and cannot do, for the router: one line of each per tool.

The catalogue (:mod:`.catalog`) joins these to the tools' own summaries; a tool without
notes fails the catalogue test, so a new tool is described here when it joins a toolset.
"""

from __future__ import annotations

__all__ = ["TOOL_NOTES"]

# tool name -> (capabilities, limitations)
TOOL_NOTES: dict[str, tuple[str, str]] = {
    "get_market_data": (
        "index or ETF price and change, VIX, market open/closed at the instant",
        "one symbol; daily closes only offline",
    ),
    "stock_screener": (
        "filters the whole data universe by price, trend, volatility, volume, RSI(14); "
        "ranks (sort_by rsi finds the closest to an RSI condition none meets)",
        "no fundamentals filters; universe = symbols the providers list",
    ),
    "get_price_history": (
        "current price, period high/low, change, average volume, last 20 bars",
        "daily bars only",
    ),
    "calculate_swing_points": ("swing highs and lows with dates", "needs enough bars per side"),
    "calculate_fib_levels": (
        "Fibonacci retracements/extensions of the main swing, nearest levels",
        "needs a clear swing",
    ),
    "find_support_resistance": (
        "support and resistance zones with strength, extension risk, confluence",
        "levels from daily swings only",
    ),
    "calculate_trendline": ("support or resistance trendline, slope, touches", "needs 2+ swings"),
    "detect_chart_patterns": (
        "double tops/bottoms, head and shoulders, triangles, flags; candlesticks",
        "patterns are probabilistic; daily bars",
    ),
    "get_technical_indicators": (
        "SMA/EMA, RSI, MACD, Bollinger, ATR, ADX, stochastic, OBV, VWAP, HV, trend",
        "latest values only, not series",
    ),
    "render_chart": ("a candlestick chart image with levels", "useful only to vision models"),
    "get_option_chain": (
        "expirations and strikes near the money with quotes and Greeks",
        "modeled (Black-Scholes) offline, labelled",
    ),
    "get_option_greeks": ("Greeks and IV of given contracts", "contracts must be listed"),
    "calculate_iv_hv": ("implied vs historical volatility, IV rank", "IV rank needs history"),
    "calculate_roc": ("return on capital of a cash-secured put", "one put at a time"),
    "filter_options": (
        "contracts meeting delta, DTE, return and liquidity criteria, ranked",
        "modeled chains offline",
    ),
    "get_news": ("headlines with sentiment", "needs an online news provider; none offline"),
    "get_earnings_dates": (
        "next and last earnings dates",
        "offline: past releases (8-K item 2.02) of the bundled SEC companies; the next one "
        "is unknown there (an estimate from past releases, labelled)",
    ),
    "get_short_interest": ("short interest, days to cover", "online providers only"),
    "get_analyst_ratings": ("upgrades, downgrades, targets", "online providers only"),
    "get_sec_filings": (
        "recent SEC filings, 8-K count",
        "offline: the bundled SEC companies' filing lists; others need the sec provider",
    ),
    "get_social_sentiment": (
        "social-media post count and bullish share over a window",
        "no provider serves social posts yet: always says missing",
    ),
    "get_fundamentals": (
        "revenue, income, EPS, free cash flow, debt, margins, growth, P/E, P/S, P/B, "
        "EV/EBITDA as filed",
        "offline: 22 bundled SEC companies (see `alphadesk data list`); others need the "
        "sec or local provider",
    ),
    "get_market_overview": (
        "SPY, S&P 500, VIX and market open/closed in one call; the 0DTE session",
        "SPY is the index / 10 when no provider has SPY (labelled)",
    ),
    "get_positions": (
        "the user's paper portfolio: cash, positions, cost basis, P&L, account value",
        "paper account only; cannot place orders",
    ),
    "think_deeply": (
        "step-by-step reasoning by the deep model on facts you pass it",
        "computes nothing and fetches no data: give it the figures",
    ),
    "web_search": (
        "recent web pages for a query",
        "online only, needs a key; unavailable for historical instants",
    ),
    "run_zero_dte_engine": (
        "a same-day SPY strangle, put or call to sell: strikes, credit, max loss, "
        "break-evens, probability of profit",
        "option prices modeled from the VIX, not quotes; SPY only",
    ),
    "run_csp_desk": (
        "a full cash-secured-put decision on one stock by three analysts",
        "slow (several agents); one symbol per call",
    ),
    "run_csp_screen": (
        "cash-secured puts to sell across an index's members (sp500, nasdaq100, dow30), "
        "pre-filtered, then decided by the CSP desk, best first",
        "slow on a large index (a desk run per member passing the pre-filter); members the "
        "data covers only",
    ),
    "run_trading_desk": (
        "a BUY/HOLD/SELL decision on one stock after analysts, a debate and a risk judge",
        "slow (a dozen agents); one symbol per call; stocks with daily bars",
    ),
}
