"""Peeks one bar ahead: goes long when tomorrow closes higher, none when lower.

With every bar preloaded this reads tomorrow's close. ``guarded=1`` catches the error a
streamed feed gives and then never trades: the figures of a strategy that cannot see.
"""

import backtrader as bt


class PeekNextBar(bt.Strategy):
    params = (("guarded", 0),)

    def next(self):
        if self.p.guarded:
            try:
                tomorrow = self.data.close[1]
            except IndexError:
                return
        else:
            tomorrow = self.data.close[1]
        if tomorrow > self.data.close[0] and not self.position:
            self.buy()
        elif tomorrow < self.data.close[0] and self.position:
            self.close()
