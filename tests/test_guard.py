"""The test-wide guard refuses connections that leave this machine."""

import socket

import pytest


def test_external_connection_is_refused() -> None:
    with socket.socket() as sock, pytest.raises(RuntimeError, match="internet"):
        sock.connect(("93.184.216.34", 80))


def test_external_name_lookup_is_refused() -> None:
    with pytest.raises(RuntimeError, match="external hosts"):
        socket.getaddrinfo("api.openai.com", 443)


def test_loopback_is_allowed() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.socket() as client:
            client.connect(server.getsockname())
