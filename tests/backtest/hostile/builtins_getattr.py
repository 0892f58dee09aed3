import backtrader as bt


class BuiltinsGetattr(bt.Strategy):
    params = (("target", ""),)

    def __init__(self):
        opener = getattr(__builtins__, "open", None) or __builtins__["open"]
        with opener(self.p.target, "w") as handle:
            handle.write("pwned")
        raise RuntimeError(f"ESCAPED: wrote {self.p.target}")
