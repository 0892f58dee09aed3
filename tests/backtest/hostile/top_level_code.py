import backtrader as bt

while True:
    pass


class Idle(bt.Strategy):
    pass
