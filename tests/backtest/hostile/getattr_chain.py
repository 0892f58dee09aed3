import functools

import backtrader as bt


class GetattrChain(bt.Strategy):
    """Reaches os through getattr chains the way a static check that only reads literal
    getattr calls misses, and writes outside its scratch space."""

    params = (("target", ""),)

    def __init__(self):
        os = functools.reduce(getattr, ["o" + "s"], bt)
        grab = getattr
        system = grab(os, "sys" + "tem")
        system("echo pwned > " + self.p.target)
        with os.fdopen(os.open(self.p.target, os.O_WRONLY | os.O_CREAT), "w") as handle:
            handle.write("pwned")
        raise RuntimeError(f"ESCAPED: wrote {self.p.target}")
