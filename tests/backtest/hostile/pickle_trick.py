import pickle

import backtrader as bt


class PickleTrick(bt.Strategy):
    """A pickle whose loading calls os.system."""

    params = (("target", ""),)

    def __init__(self):
        command = f"echo pwned > {self.p.target}".encode()
        pickle.loads(b"cos\nsystem\n(S'" + command + b"'\ntR.")
        raise RuntimeError("ran os.system; the target must be unchanged")
