"""alphadesk as a Model Context Protocol server: every catalogue tool and the run tools, over
stdio or streamable HTTP (``alphadesk mcp``)."""

from alphadesk.mcp_server.server import build_server, serve_http, serve_stdio

__all__ = ["build_server", "serve_http", "serve_stdio"]
