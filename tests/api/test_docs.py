"""``/docs`` and ``/redoc`` from the installed package: nothing loads from a CDN, and the
pages work with no network at all (Chromium with every request off this machine refused)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.support.live_api import LiveApi

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_the_documentation_pages_load_nothing_from_elsewhere(api: LiveApi) -> None:
    with api.client() as c:
        pages = {path: c.get(path) for path in ("/docs", "/redoc")}
        for path, page in pages.items():
            assert page.status_code == 200, path
            # every script, style and icon is the server's own: nothing from a CDN
            assert "http://" not in page.text and "https://" not in page.text, path
        swagger = c.get("/docs/assets/swagger-ui-bundle.js")
        styles = c.get("/docs/assets/swagger-ui.css")
        redoc = c.get("/docs/assets/redoc.standalone.js")
    assert "/docs/assets/swagger-ui-bundle.js" in pages["/docs"].text
    assert "/docs/assets/redoc.standalone.js" in pages["/redoc"].text
    assert swagger.status_code == styles.status_code == redoc.status_code == 200
    assert "SwaggerUIBundle" in swagger.text and ".swagger-ui" in styles.text
    assert swagger.headers["content-type"].startswith(("text/javascript", "application/javascript"))


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: `python3 dev.py setup` installs it")
def test_swagger_ui_shows_every_route_offline(api: LiveApi) -> None:
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def only_here(route: Any) -> None:
        if route.request.url.startswith(api.url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = chromium.new_page()
            page.route("**/*", only_here)
            page.goto(f"{api.url}/docs")
            page.wait_for_selector(".opblock", timeout=60_000)  # ms: a busy machine
            paths = set(page.locator(".opblock-summary-path").all_inner_texts())
        finally:
            chromium.close()
    assert elsewhere == []
    assert {"/analyze", "/csp/stream", "/runs/{run_id}", "/health"} <= {
        p.replace("\u200b", "") for p in paths
    }
