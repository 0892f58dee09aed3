import ctypes

import backtrader as bt


class CtypesLibc(bt.Strategy):
    params = (("target", ""),)

    def __init__(self):
        libc = ctypes.CDLL(None)
        libc.system(f"echo pwned > {self.p.target}".encode())
        raise RuntimeError("ran libc system(); the target must be unchanged")
