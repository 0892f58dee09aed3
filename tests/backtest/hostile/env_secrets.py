import os

import backtrader as bt


class EnvSecrets(bt.Strategy):
    """Look for API keys in the environment it was started with."""

    def __init__(self):
        found = {k: v for k, v in os.environ.items() if "KEY" in k or "TOKEN" in k}
        if found:
            raise RuntimeError(f"ESCAPED: {found}")
        raise RuntimeError("blocked: environment is " + ", ".join(sorted(os.environ)))
