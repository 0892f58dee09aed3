"""Walk-forward evaluation of a desk: decisions at rebalancing dates, traded with costs,
scored beside the baselines, with look-ahead caught rather than trusted away.

How an evaluation runs (``alphadesk eval``, :func:`evaluate`):

1. **Dates.** The close of every ``every``-th trading session from ``start`` to ``end``.
2. **Decisions.** At each date the desk analyses each symbol through the shared runner,
   with ``as_of`` the date's close. Its market data is :func:`guard`-ed: inside each
   decision (a context variable, :mod:`.scope`) any read with an ``as_of`` past the
   decision instant raises :class:`LookAheadError` and voids the evaluation, even if
   the desk swallowed the error. The trading desk's memory is off, so every decision
   stands alone and a rerun asks the same questions. The decisions are spread over one
   worker process per core (:mod:`.spread`) and each is appended to
   ``decisions.jsonl`` as it is made (:mod:`.journal`): an evaluation run again, after
   an interruption too, continues from the recorded decisions.
3. **Models.** Every agent's model (``rules`` included) sits behind the response cache
   in the evaluation's own store (``<folder>/store``). The first evaluation records; a
   fresh one of the same spec in the same folder replays and calls no model (after
   failed decisions it records again, so only those reach the model). The table
   counts each decision's model calls at their first-answered cost, so it is the same
   either way; the manifest says how many calls were live.
4. **Positions.** Trading desk: BUY → long, SELL → flat (short with ``long_short``),
   HOLD → keep; a failed decision keeps the position and is counted. The positions
   trade through :func:`alphadesk.backtest.run_positions`: ordered at the decision's
   close, filled at the next open, with commission and slippage, sized at
   ``fraction`` of the symbol's equity. CSP desk: each ``select`` sells the suggested
   cash-secured put, held to expiry (see :mod:`.positions` for the P&L model).
5. **Baselines.** Over the same window, capital and costs: ``buy_hold``, ``sma_cross``,
   ``macd``, ``kdj_rsi``, ``zmr`` for the trading desk (their indicators warm up on the
   bars before the window); for the CSP desk ``buy_hold`` of the underlying and
   ``mechanical_put``: at every date the put the constraints pick with no judgement.
6. **Table.** Per symbol and pooled (equal capital per symbol, curves summed): returns,
   Sharpe, drawdown, win rate, turnover, costs, decisions, model calls and cost, with
   block-bootstrap intervals and the desk's decision mix beside a trend rule's
   (:mod:`.statistics`); as Markdown, CSV and JSON with an equity and a drawdown
   chart. The same evaluation twice writes byte-identical tables; run ids and times
   are in ``manifest.json`` only.
7. **Memorization control** (``--anonymize``, :mod:`.anonymize`): the same decisions asked
   again on a disguised market (other names, price levels and years), in worker processes
   too, with a journal of their own; scored on the real bars beside the original, with
   the gap and its bootstrap interval.
"""

from .anonymize import Anonymized, evaluate_anonymized
from .evaluate import Evaluation, EvaluationError, config_of, eval_folder, evaluate, universe
from .lookahead import GuardedMarket, guard
from .models import DecisionRecord, EvalSpec, PutRecord
from .positions import PutBook, ShortPut, positions_from_decisions, put_book, short_put_pnl
from .scope import Decision, LookAheadError, current_decision, decision

__all__ = [
    "Anonymized",
    "Decision",
    "DecisionRecord",
    "EvalSpec",
    "Evaluation",
    "EvaluationError",
    "GuardedMarket",
    "LookAheadError",
    "PutBook",
    "PutRecord",
    "ShortPut",
    "config_of",
    "current_decision",
    "decision",
    "eval_folder",
    "evaluate",
    "evaluate_anonymized",
    "guard",
    "positions_from_decisions",
    "put_book",
    "short_put_pnl",
    "universe",
]
