"""A 20/50 SMA crossover as a Backtrader user writes it (the sandbox's benign case)."""

import backtrader as bt


class SmaCross(bt.Strategy):
    params = (("fast", 20), ("slow", 50))

    def __init__(self):
        fast = bt.indicators.SMA(self.data.close, period=self.p.fast)
        slow = bt.indicators.SMA(self.data.close, period=self.p.slow)
        self.cross = bt.indicators.CrossOver(fast, slow)

    def next(self):
        if self.cross[0] > 0 and not self.position:
            self.buy()
        elif self.cross[0] < 0 and self.position:
            self.close()
