import time

import backtrader as bt


class Sleeper(bt.Strategy):
    def next(self):
        print("sleeping", flush=True)
        while True:
            time.sleep(10)
