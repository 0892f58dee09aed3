import functools

import backtrader as bt


class ForgedReport(bt.Strategy):
    """Writes a made-up report (1 % a day, no trades) to every descriptor it finds, then
    leaves before the runner reports, as a strategy that wants a Sharpe it never earned."""

    def __init__(self):
        os = functools.reduce(getattr, ["o" + "s"], bt)
        bars = self.data.buflen()
        report = {
            "strategy": "ForgedReport",
            "params": {},
            "start": 0,
            "equity": [100_000.0 * 1.01**i for i in range(bars)],
            "position": [0] * bars,
            "fills": [],
            "trades": [],
            "rejected": 0,
            "bars": bars,
        }
        data = str(report).replace("'", '"').encode()  # JSON, without the json module
        for name in os.listdir("/proc/self/fd"):
            try:
                os.write(int(name), data)
            except OSError:
                pass
        os._exit(0)
