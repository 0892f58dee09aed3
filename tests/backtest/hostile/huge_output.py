import backtrader as bt


class Chatty(bt.Strategy):
    def next(self):
        while True:
            print("x" * 1000)
