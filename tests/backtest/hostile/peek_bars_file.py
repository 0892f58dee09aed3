"""Looks for the whole series: the feed's data frame, the job's bars file, the line's
buffer beyond the current bar; trades on tomorrow's close when it finds one, else never."""

import backtrader as bt
import pandas as pd


class PeekBarsFile(bt.Strategy):
    def __init__(self):
        self.closes = None
        source = self.data.p.dataname
        if isinstance(source, pd.DataFrame):
            self.closes = source["close"].tolist()
        else:
            try:
                self.closes = pd.read_parquet("/sandbox/in/bars.parquet")["close"].tolist()
            except Exception as exc:
                print("blocked:", type(exc).__name__)

    def next(self):
        closes = self.closes
        if closes is None and len(self.data.close.array) > len(self):
            closes = list(self.data.close.array)  # preloaded: the future is in the buffer
        if closes is None or len(self) >= len(closes):
            return
        tomorrow = closes[len(self)]
        if tomorrow > self.data.close[0] and not self.position:
            self.buy()
        elif tomorrow < self.data.close[0] and self.position:
            self.close()
