import backtrader as bt


class EvalExec(bt.Strategy):
    def __init__(self):
        eval("1 + 1")
        exec("import os")
        compile("x = 1", "x", "exec")
