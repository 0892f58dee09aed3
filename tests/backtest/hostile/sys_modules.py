import sys

import backtrader as bt


class SysModules(bt.Strategy):
    params = (("target", ""),)

    def __init__(self):
        os = sys.modules["os"]
        with os.fdopen(os.open(self.p.target, os.O_WRONLY | os.O_CREAT), "w") as handle:
            handle.write("pwned")
        raise RuntimeError(f"ESCAPED: wrote {self.p.target}")
