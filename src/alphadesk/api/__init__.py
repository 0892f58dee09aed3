"""The HTTP API: the pipelines behind FastAPI, with JSON and server-sent-event routes."""

from alphadesk.api.app import create_app

__all__ = ["create_app"]
