"""The API's documentation pages, ``/docs`` (Swagger UI) and ``/redoc``, served with the
scripts and styles of the installed ``fastapi-offline`` package: they work offline, and
the page runs only the code of the version installed, never what a CDN serves that day."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

__all__ = ["ASSETS", "install"]

ASSETS = "/docs/assets"  # where the files are served


def _folder() -> Path:
    return Path(str(files("fastapi_offline") / "static"))


def install(app: FastAPI) -> None:
    """``/docs`` and ``/redoc`` with their files under ``/docs/assets`` (the app is built
    with ``docs_url=None, redoc_url=None``)."""
    openapi, title = app.openapi_url or "/openapi.json", app.title

    async def swagger() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi, title=f"{title} - Swagger UI",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )  # fmt: skip

    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi, title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png", with_google_fonts=False,
        )  # fmt: skip

    app.add_api_route("/docs", swagger, methods=["GET"], include_in_schema=False)
    app.add_api_route("/redoc", redoc, methods=["GET"], include_in_schema=False)
    app.mount(ASSETS, StaticFiles(directory=_folder()), name="docs-assets")
