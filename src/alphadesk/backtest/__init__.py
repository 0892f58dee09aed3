"""Backtests: built-in strategies and arbitrary target positions, on two engines that agree.

A backtest runs on bars it is given (no provider call happens inside). A strategy is a
pure, causal signal (:mod:`.strategies`): OHLCV bars to the position wanted after each
bar's close, −1 short, 0 flat, 1 long. Any other source of decisions (a desk's calls by
date) trades through the same door: :func:`run_positions`.

Two engines trade a target series:

* ``backtrader`` (:mod:`.reference`): Backtrader itself, the reference a quant knows.
* ``fast`` (:mod:`.fast`): the same rules replayed only at the bars where the target
  disagrees with the position, the equity curve filled in with numpy. It gives the same
  fills, the same round trips and the same final value to the cent, many times faster.

Execution semantics (Backtrader's ``BackBroker`` defaults unless stated):

* **Orders**: at the close of bar ``t``, if the sign of the position differs from the
  target, a market order for ``target size − position`` is placed (``order_target_size``;
  a reversal is one order). It fills at the **open of bar ``t + 1``**. An order placed
  on the last bar never fills.
* **Sizing** (:class:`Sizing`, whole shares): ``fraction`` buys or shorts
  ``floor(fraction × account value / close)`` shares at bar ``t``'s close and value
  (``fraction = 1`` is all-in); ``shares`` a fixed number. A target that stays on the same
  side never resizes the position.
* **Cash check**: before filling, Backtrader pseudo-executes the order at bar ``t``'s
  close with commission; if cash would go negative the order is refused (``Margin``). At
  the fill, the part that opens a long position is refused if the real price leaves cash
  negative (a reversal then only closes). A refused order is counted in
  ``BacktestResult.rejected`` and the target retries at the next close.
* **Slippage** (:class:`Costs`): buys fill at ``open × (1 + slippage)``, sells at
  ``open × (1 − slippage)``, capped to the bar's high and low (``slip_open``,
  ``slip_match``).
* **Commission**: a percentage of the traded value (``|size| × price × rate``) or a
  fixed amount per share (``|size| × rate``), on every fill.
* **Shorts** (``long_short=True``): sale proceeds are credited to cash, the short is
  valued at ``size × close`` (negative); no borrow fee, no margin call. Long/flat runs
  read a −1 target as flat.
* **Dividends** (a ``dividend`` column, cash per share on its ex-date's bar, with prices
  as traded: ``frame_from_bars(bars, adjust=False, dividends=...)``): the position held
  at the previous close is paid ``shares × amount`` at the ex-date's close (a short pays
  it), after any fill at that bar's open.
* **Value**: cash plus positions at each bar's close; that curve feeds the metrics
  (:func:`alphadesk.analytics.performance.backtest_metrics`).

Bars: :func:`frame_from_bars` turns the data layer's point-in-time
:class:`~alphadesk.data.bars.Bars` into OHLCV, adjusted for splits and dividends within
the window; signals may read bars before the traded window (``trade_from``) so
indicators are warm, never bars after it.

Strategy code (a user's file, a model's variant: a Backtrader ``bt.Strategy`` subclass)
runs only through :func:`run_in_sandbox`: a static check (:func:`check_strategy_code`),
then Backtrader with the same broker in a bubblewrap sandbox with no network, a read-only
view of what it needs and resource limits (:mod:`.sandbox`). Without a sandbox it is a
typed refusal, never an unsandboxed run. Such code gets its bars one at a time (no later
bar exists in the sandbox: ``self.data.close[1]`` is an ``IndexError``) and answers each
with its orders; the orders are traded and every figure computed outside the sandbox, on
the real bars.

Every door (the CLI, the MCP server, the strategy lab) runs a backtest through one
function, :func:`run_backtest` (:mod:`.service`): a typed :class:`BacktestRequest` in, a
run recorded in the run store and a :class:`BacktestOutcome` out.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checks import CodeCheck, check_strategy_code
    from .fast import run_positions
    from .frame import BacktestDataError, frame_from_bars
    from .models import BacktestConfig, BacktestResult, Costs, Fill, Sizing, Trade
    from .run import ENGINES, run_strategy, sweep
    from .sandbox import (
        Limits,
        SandboxCancelled,
        SandboxOutcome,
        SandboxUnavailable,
        run_in_sandbox,
    )
    from .service import (
        BacktestError,
        BacktestOutcome,
        BacktestRequest,
        BacktestSummary,
        backtest_bars,
        run_backtest,
    )
    from .strategies import STRATEGIES, StrategySpec, UnknownStrategy, get_strategy

# Names load on first use: the sandbox's runner imports only what it needs from here, and
# every strategy run starts a fresh interpreter.
_LAZY = {
    "BacktestConfig": "models",
    "BacktestDataError": "frame",
    "BacktestError": "service",
    "BacktestOutcome": "service",
    "BacktestRequest": "service",
    "BacktestResult": "models",
    "BacktestSummary": "service",
    "CodeCheck": "checks",
    "Costs": "models",
    "ENGINES": "run",
    "Fill": "models",
    "Limits": "sandbox",
    "STRATEGIES": "strategies",
    "SandboxCancelled": "sandbox",
    "SandboxOutcome": "sandbox",
    "SandboxUnavailable": "sandbox",
    "Sizing": "models",
    "StrategySpec": "strategies",
    "Trade": "models",
    "UnknownStrategy": "strategies",
    "backtest_bars": "service",
    "check_strategy_code": "checks",
    "frame_from_bars": "frame",
    "get_strategy": "strategies",
    "run_backtest": "service",
    "run_in_sandbox": "sandbox",
    "run_positions": "fast",
    "run_strategy": "run",
    "sweep": "run",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "ENGINES",
    "STRATEGIES",
    "BacktestConfig",
    "BacktestDataError",
    "BacktestError",
    "BacktestOutcome",
    "BacktestRequest",
    "BacktestResult",
    "BacktestSummary",
    "CodeCheck",
    "Costs",
    "Fill",
    "Limits",
    "SandboxCancelled",
    "SandboxOutcome",
    "SandboxUnavailable",
    "Sizing",
    "StrategySpec",
    "Trade",
    "UnknownStrategy",
    "backtest_bars",
    "check_strategy_code",
    "frame_from_bars",
    "get_strategy",
    "run_backtest",
    "run_in_sandbox",
    "run_positions",
    "run_strategy",
    "sweep",
]
