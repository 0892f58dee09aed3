"""The HTTP API: the pipelines behind FastAPI, with JSON and server-sent-event routes."""

from alphadesk.api.app import create_app
from alphadesk.api.config import ApiConfig, ApiKeyRequired, is_loopback

__all__ = ["ApiConfig", "ApiKeyRequired", "create_app", "is_loopback"]
