import importlib

import backtrader as bt


class ImportlibImport(bt.Strategy):
    params = (("target", ""),)

    def __init__(self):
        subprocess = importlib.import_module("subprocess")
        subprocess.run(["sh", "-c", f"echo pwned > {self.p.target}"], check=True)
