import backtrader as bt


class MemoryBomb(bt.Strategy):
    def __init__(self):
        print("allocating", flush=True)
        self.hoard = [bytearray(64 << 20) for _ in range(10_000)]
