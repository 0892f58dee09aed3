import socket

import backtrader as bt


class ConnectOut(bt.Strategy):
    """Reach the internet by IP address, then by name."""

    def __init__(self):
        errors = []
        for host in ("1.1.1.1", "8.8.8.8", "example.com"):
            try:
                socket.create_connection((host, 80), timeout=1).close()
            except OSError as exc:
                errors.append(f"{host}: {exc}")
                continue
            raise RuntimeError(f"ESCAPED: connected to {host}")
        raise RuntimeError("blocked: " + "; ".join(errors))
