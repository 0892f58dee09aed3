"""The library of parameterised Backtrader strategies the ``rules`` strategist draws from.

Each template is a complete strategy module with its parameters in ``params``; rendering
fills in the values, so the code of a variant says exactly what ran. Templates trade long
or flat with ``self.buy()`` and ``self.close()``, so the run's sizing decides the size;
each has a grid of values to tune over.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from alphadesk.agents.algo.models import Approach

__all__ = ["TEMPLATES", "StrategyTemplate", "template"]


@dataclass(frozen=True)
class StrategyTemplate:
    """One strategy idea: its approach, default parameters, tuning grid and code."""

    name: str
    approach: Approach
    description: str
    defaults: Mapping[str, int | float]
    grid: Mapping[str, Sequence[int | float]]
    body: str  # the class, with ``$params`` where the parameter tuple goes
    valid: Callable[[Mapping[str, Any]], bool] = lambda _p: True

    def render(self, params: Mapping[str, Any] | None = None) -> str:
        """The module's code with ``params`` (the defaults for what is not given)."""
        chosen = self.params(params)
        pairs = ", ".join(f"({k!r}, {v!r})" for k, v in chosen.items())
        return "import backtrader as bt\n\n\n" + self.body.replace("$params", f"({pairs},)")

    def params(self, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
        chosen = dict(self.defaults)
        chosen.update({k: v for k, v in (given or {}).items() if k in chosen})
        return chosen

    def neighbours(self, params: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Parameter sets one grid step from ``params``, nearest first, valid only."""
        base = self.params(params)
        steps: list[dict[str, Any]] = []
        for key, values in self.grid.items():
            ordered = sorted(values, key=lambda v: abs(v - base[key]))
            steps += [{**base, key: v} for v in ordered if v != base[key]][:2]
        for a, b in itertools.combinations(self.grid, 2):  # then two parameters at once
            for da, db in itertools.product((-1, 1), repeat=2):
                moved = _step(self.grid[a], base[a], da), _step(self.grid[b], base[b], db)
                if None not in moved:
                    steps.append({**base, a: moved[0], b: moved[1]})
        yield from (p for p in steps if self.valid(p))

    def grid_sets(self) -> Iterator[dict[str, Any]]:
        """Every valid combination of the grid."""
        keys = list(self.grid)
        for values in itertools.product(*(self.grid[k] for k in keys)):
            chosen = self.params(dict(zip(keys, values, strict=True)))
            if self.valid(chosen):
                yield chosen


def _step(values: Sequence[int | float], at: int | float, direction: int) -> int | float | None:
    ordered = sorted(values)
    bigger = [v for v in ordered if v > at]
    smaller = [v for v in ordered if v < at]
    if direction > 0:
        return bigger[0] if bigger else None
    return smaller[-1] if smaller else None


_CROSS = '''class $cls(bt.Strategy):
    """Long while the fast $kind is above the slow one, flat otherwise."""

    params = $params

    def __init__(self):
        fast = bt.indicators.$ind(self.data.close, period=self.p.fast)
        slow = bt.indicators.$ind(self.data.close, period=self.p.slow)
        self.up = fast > slow

    def next(self):
        if self.up[0] and not self.position:
            self.buy()
        elif not self.up[0] and self.position:
            self.close()
'''

_RSI = '''class RsiReversion(bt.Strategy):
    """Buy when RSI falls below `low`, sell when it rises above `high`."""

    params = $params

    def __init__(self):
        self.rsi = bt.indicators.RSI(self.data.close, period=self.p.period)

    def next(self):
        if not self.position and self.rsi[0] < self.p.low:
            self.buy()
        elif self.position and self.rsi[0] > self.p.high:
            self.close()
'''

_BOLLINGER = '''class BollingerBreakout(bt.Strategy):
    """Buy a close above the upper band, exit on a close below the middle band."""

    params = $params

    def __init__(self):
        self.bands = bt.indicators.BollingerBands(
            self.data.close, period=self.p.period, devfactor=self.p.devfactor
        )

    def next(self):
        close = self.data.close[0]
        if not self.position and close > self.bands.top[0]:
            self.buy()
        elif self.position and close < self.bands.mid[0]:
            self.close()
'''

_MACD = '''class MacdMomentum(bt.Strategy):
    """Long while MACD is above its signal line, flat otherwise."""

    params = $params

    def __init__(self):
        self.macd = bt.indicators.MACD(
            self.data.close,
            period_me1=self.p.fast,
            period_me2=self.p.slow,
            period_signal=self.p.signal,
        )

    def next(self):
        up = self.macd.macd[0] > self.macd.signal[0]
        if up and not self.position:
            self.buy()
        elif not up and self.position:
            self.close()
'''

_DONCHIAN = '''class DonchianBreakout(bt.Strategy):
    """Buy a close above the last `entry` days' high, exit below the last `exit` days' low."""

    params = $params

    def __init__(self):
        self.high = bt.indicators.Highest(self.data.high(-1), period=self.p.entry)
        self.low = bt.indicators.Lowest(self.data.low(-1), period=self.p.exit)

    def next(self):
        close = self.data.close[0]
        if not self.position and close > self.high[0]:
            self.buy()
        elif self.position and close < self.low[0]:
            self.close()
'''


def _fast_below_slow(p: Mapping[str, Any]) -> bool:
    return bool(p["fast"] < p["slow"])


TEMPLATES: dict[str, StrategyTemplate] = {
    t.name: t
    for t in (
        StrategyTemplate(
            "sma_cross",
            "trend",
            "SMA crossover trend following",
            {"fast": 20, "slow": 50},
            {"fast": (5, 10, 20, 30, 50), "slow": (30, 50, 100, 150, 200)},
            _CROSS.replace("$cls", "SmaCross").replace("$kind", "SMA").replace("$ind", "SMA"),
            _fast_below_slow,
        ),
        StrategyTemplate(
            "ema_cross",
            "trend",
            "EMA crossover trend following",
            {"fast": 12, "slow": 26},
            {"fast": (5, 8, 12, 20, 30), "slow": (26, 40, 60, 100)},
            _CROSS.replace("$cls", "EmaCross").replace("$kind", "EMA").replace("$ind", "EMA"),
            _fast_below_slow,
        ),
        StrategyTemplate(
            "rsi_reversion",
            "mean_reversion",
            "RSI mean reversion",
            {"period": 14, "low": 30, "high": 70},
            {"period": (7, 10, 14, 21), "low": (20, 25, 30, 35, 40), "high": (60, 65, 70, 75, 80)},
            _RSI,
            lambda p: bool(p["low"] < p["high"]),
        ),
        StrategyTemplate(
            "bollinger_breakout",
            "breakout",
            "Bollinger band breakout",
            {"period": 20, "devfactor": 2.0},
            {"period": (10, 15, 20, 30, 40), "devfactor": (1.0, 1.5, 2.0, 2.5)},
            _BOLLINGER,
        ),
        StrategyTemplate(
            "macd_momentum",
            "momentum",
            "MACD momentum",
            {"fast": 12, "slow": 26, "signal": 9},
            {"fast": (6, 8, 12, 16), "slow": (20, 26, 35, 50), "signal": (5, 9, 12)},
            _MACD,
            _fast_below_slow,
        ),
        StrategyTemplate(
            "donchian_breakout",
            "breakout",
            "Donchian channel breakout",
            {"entry": 20, "exit": 10},
            {"entry": (10, 20, 40, 55, 80), "exit": (5, 10, 20, 30)},
            _DONCHIAN,
            lambda p: bool(p["exit"] <= p["entry"]),
        ),
    )
}


def template(name: str) -> StrategyTemplate:
    """The template ``name``; KeyError listing the library when there is none."""
    if name not in TEMPLATES:
        raise KeyError(f"no strategy template {name!r}; the library has {sorted(TEMPLATES)}")
    return TEMPLATES[name]
