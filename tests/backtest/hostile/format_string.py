import backtrader as bt


class FormatString(bt.Strategy):
    """str.format walks attributes: reach __globals__ without writing a dunder attribute."""

    def __init__(self):
        print("{0.__init__.__globals__}".format(self))
