"""End to end in a real browser: `alphadesk ui` (the UI and the API it starts) driven by a
headless Chromium, from the form to the desk's decision and its report, with a screenshot.

Set UI_SCREENSHOT=path to keep the screenshot (the README's picture is made so).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium: `python3 dev.py setup` installs it (apt-get)"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def ui_url(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = os.environ | {"ALPHADESK_DATA_DIR": str(tmp_path / "data")}
    env.pop("ALPHADESK_API_URL", None)
    server = subprocess.Popen(
        [sys.executable, "-m", "alphadesk", "ui", "--port", str(port)],
        env=env,
        start_new_session=True,  # the UI's own children (the API) go with it
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert server.poll() is None, "alphadesk ui exited"
            try:
                if httpx.get(f"{url}/_stcore/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        else:
            pytest.fail("the UI did not start within 120 s")
        yield url
    finally:
        os.killpg(server.pid, 15)
        server.wait(timeout=20)


def test_a_csp_run_from_the_browser_shows_its_decision_and_report(
    ui_url: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        page.goto(ui_url)
        expect(page.get_by_text("alphadesk", exact=True).first).to_be_visible(timeout=60_000)
        expect(page.get_by_text("model: rules")).to_be_visible(timeout=60_000)  # API answered

        page.get_by_role("tab", name="Cash-secured puts").click()
        page.get_by_role("button", name="Find a put").click()
        # The run streams; then the decision and the saved report (as the CLI prints it).
        decided = page.get_by_text("NVDA: select").or_(page.get_by_text("NVDA: reject"))
        expect(decided.first).to_be_visible(timeout=120_000)
        expect(page.get_by_text("Who decided").first).to_be_visible(timeout=30_000)

        shot = Path(os.environ.get("UI_SCREENSHOT") or tmp_path / "ui.png")
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
