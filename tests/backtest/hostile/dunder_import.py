import backtrader as bt


class DunderImport(bt.Strategy):
    params = (("target", ""),)

    def __init__(self):
        os = __import__("os")
        os.system(f"echo pwned > {self.p.target}")
        raise RuntimeError("ran os.system; the target must be unchanged")
