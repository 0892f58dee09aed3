import backtrader as bt


class Broken(bt.Strategy):
    def next(self)
        pass
