import os

import backtrader as bt


class ReadOutside(bt.Strategy):
    """Read files outside the sandbox's view (targets separated by '|')."""

    params = (("target", "/etc/passwd"),)

    def __init__(self):
        errors = []
        for path in self.p.target.split("|"):
            try:
                if os.path.isdir(path):
                    got = os.listdir(path)
                else:
                    with open(path, "rb") as handle:
                        got = handle.read(100)
            except OSError as exc:
                errors.append(f"{path}: {type(exc).__name__}")
                continue
            raise RuntimeError(f"ESCAPED: read {path}: {got!r}")
        raise RuntimeError("blocked: " + "; ".join(errors))
