"""Answers out of turn to see the next bar early: at each bar it sends its orders itself,
pulls the next bar from the stream, puts it back in the feed's queue and trades on
tomorrow's close. Its orders then count from the bar it pulled: it trades as a strategy
that decides on today's close against yesterday's (``Momentum`` in the tests)."""

import backtrader as bt


class PeekStream(bt.Strategy):
    def next(self):
        rows = self.data.p.source(self.broker.take_ops())
        if not rows:
            return
        self.data._rows.extend(rows)
        tomorrow = rows[0][4]
        if tomorrow > self.data.close[0] and not self.position:
            self.buy(size=100)
        elif tomorrow < self.data.close[0] and self.position:
            self.close()
