import backtrader as bt


class BigFile(bt.Strategy):
    def __init__(self):
        print("writing", flush=True)
        with open("/tmp/big.bin", "wb") as handle:
            for _ in range(1000):
                handle.write(bytes(1 << 20))
