import backtrader as bt


class BusyLoop(bt.Strategy):
    def next(self):
        print("looping", flush=True)
        n = 0
        while True:
            n += 1
