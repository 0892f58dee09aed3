import socket

import backtrader as bt


class ConnectLocal(bt.Strategy):
    """Connect to a server listening on the host's loopback."""

    params = (("port", 0),)

    def __init__(self):
        with socket.create_connection(("127.0.0.1", self.p.port), timeout=1) as sock:
            sock.sendall(b"hello from the sandbox")
        raise RuntimeError("ESCAPED: connected to the host")
