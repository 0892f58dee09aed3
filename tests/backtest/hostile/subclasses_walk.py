import backtrader as bt


class SubclassesWalk(bt.Strategy):
    """The classic: from any object to os.system through object.__subclasses__()."""

    params = (("target", ""),)

    def __init__(self):
        for cls in ().__class__.__bases__[0].__subclasses__():
            init = getattr(cls, "__init__", None)
            scope = getattr(init, "__globals__", None) or {}
            if "system" in scope:
                scope["system"](f"echo pwned > {self.p.target}")
                raise RuntimeError(f"ran system via {cls.__name__}; the target must be unchanged")
        raise RuntimeError("no os.system found")
