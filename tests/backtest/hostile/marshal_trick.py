import marshal

import backtrader as bt


class MarshalTrick(bt.Strategy):
    """Code smuggled as marshalled bytes, then executed."""

    def __init__(self):
        blob = marshal.dumps(compile("import os; os.listdir('/')", "x", "exec"))
        exec(marshal.loads(blob))
        raise RuntimeError("ran smuggled code inside the sandbox")
