import backtrader as bt


class One(bt.Strategy):
    pass


class Two(bt.Strategy):
    pass
