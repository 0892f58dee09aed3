"""What the two servers share (the HTTP API and the MCP server): their configuration and
guard, the HTTP server they run on, the run slots, the model allow-list, the jobs they send
to worker processes and the errors a client may see. The front ends above it only parse
requests and render answers; nothing here imports them."""

from alphadesk.serving.config import MIN_KEY_LENGTH, ApiKeyRequired, ServerConfig, is_loopback

__all__ = ["MIN_KEY_LENGTH", "ApiKeyRequired", "ServerConfig", "is_loopback"]
