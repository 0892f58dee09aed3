"""End to end in a real browser: `alphadesk ui` (the UI and the API it starts, with an API
key) driven by a headless Chromium through every tab with its defaults, a screenshot of
each, and the key looked for in everything the browser receives.

The tests run in file order on one page: the runs tab shows the runs the tabs before it
started. Set UI_SCREENSHOT=path to keep the CSP tab's screenshot (the documentation's picture,
docs/images/ui.png, is made so); UI_SHOTS=folder keeps every tab's.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium: `python3 dev.py setup` installs it (apt-get)"
    ),
]
KEY = "e2e-secret-Vb3Kq8Wz5Tn1"  # distinctive: found in whatever it leaked into
_RUN_S = 120_000  # ms a desk run may take on a small, busy machine


def _aapl_last_close() -> str:
    """The last close AAPL's bundled bars cover: what an empty date means for it."""
    from alphadesk.data.providers.bundled import BundledProvider

    (last,) = [c.end for c in BundledProvider().coverage() if c.symbol == "AAPL"]
    return str(last)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Browser:
    """The page, everything it received (HTTP bodies and websocket frames) and where its
    screenshots go."""

    page: Any
    shots: Path
    received: list[bytes] = field(default_factory=list)

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.wait_for_timeout(500)  # the last redraw
        self.page.screenshot(path=str(path), full_page=True)
        assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size > 20_000
        return path

    def assert_no_key(self) -> None:
        assert self.received, "the page received nothing"
        leaked = [body[:120] for body in self.received if KEY.encode() in body]
        assert not leaked, leaked
        assert KEY not in self.page.content()
        values = self.page.eval_on_selector_all("input, textarea", "els => els.map(e => e.value)")
        assert not any(KEY in str(v) for v in values)

    def assert_images_load(self) -> None:
        self.page.wait_for_load_state("networkidle")
        broken = self.page.eval_on_selector_all(
            "img", "els => els.filter(e => !e.complete || e.naturalWidth === 0).map(e => e.src)"
        )
        assert not broken, broken

    def settle(self) -> None:
        """Wait until no script run is under way: a click that lands while a run redraws the
        page can hit an element being replaced and be lost."""
        idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
        self.page.locator(idle).wait_for(timeout=_RUN_S)

    def expand(self, panel: Any, label: str, first_field: str) -> None:
        """Open an expander and wait until its form can take a click: it mounts its widgets
        as it opens, and a click in the next instants, before they are registered, is lost
        (a person never clicks that fast; a test on a busy machine does)."""
        from playwright.sync_api import expect

        panel.get_by_text(label).click()
        expect(panel.get_by_label(first_field)).to_be_visible()
        self.page.wait_for_timeout(1_000)
        self.settle()

    def tab(self, name: str) -> Any:
        self.settle()
        self.page.get_by_role("tab", name=name).click()
        return self.page.get_by_role("tabpanel", name=name)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e") / "data"


@pytest.fixture(scope="module")
def ui_url(data_dir: Path) -> Iterator[str]:
    data = data_dir
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALPHADESK_")}
    env |= {"ALPHADESK_DATA_DIR": str(data), "ALPHADESK_API_KEY": KEY}
    # A saved evaluation for its tab (the rules model: offline, a few seconds).
    alphadesk = [sys.executable, "-m", "alphadesk"]
    evaluation = [*alphadesk, "eval", "--symbols", "AAPL", "--to", "2012-06-30", "--every", "40"]
    subprocess.run(evaluation, env=env, check=True, capture_output=True, timeout=300)
    port = _free_port()
    server = subprocess.Popen(
        [*alphadesk, "ui", "--port", str(port)],
        env=env,
        start_new_session=True,  # the UI's own children (the API, Streamlit) go with it
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


@pytest.fixture(scope="module")
def browser(ui_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    from playwright.sync_api import expect, sync_playwright

    shots = Path(os.environ.get("UI_SHOTS") or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = chromium.new_page(viewport={"width": 1280, "height": 1800})
        seen = Browser(page, shots)

        def on_response(response: Any) -> None:
            try:
                seen.received.append(response.body())
            except Exception:  # a redirect or a body already gone: nothing to read
                seen.received.append(response.url.encode())

        def on_socket(socket: Any) -> None:
            def keep(payload: str | bytes) -> None:
                seen.received.append(payload.encode() if isinstance(payload, str) else payload)

            socket.on("framereceived", keep)

        page.on("response", on_response)
        page.on("websocket", on_socket)
        page.goto(ui_url)
        expect(page.get_by_text("model: rules")).to_be_visible(timeout=60_000)  # API answered
        yield seen
        chromium.close()


def test_the_sidebar_says_the_key_is_on_the_server_and_there_is_no_deploy_button(
    browser: Browser,
) -> None:
    from playwright.sync_api import expect

    page = browser.page
    expect(page.get_by_text("API key: set on the server")).to_be_visible()
    expect(page.get_by_text(re.compile(r"^API: http://127\.0\.0\.1:\d+$"))).to_be_visible()
    assert page.get_by_role("button", name="Deploy").count() == 0
    assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
    assert page.locator('[data-testid="stSidebar"] input').count() == 0  # nothing to edit
    browser.assert_no_key()


def test_the_trading_desk_with_its_defaults_decides_and_shows_its_chart(
    browser: Browser,
) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Trading desk")
    panel.get_by_role("button", name="Decide").click()
    decided = panel.get_by_text(re.compile(r"^NVDA: (BUY|HOLD|SELL)"))
    expect(decided.first).to_be_visible(timeout=_RUN_S)
    expect(panel.get_by_role("heading", name="Chart")).to_be_visible(timeout=30_000)
    expect(panel.get_by_text(re.compile(r"^NVDA as of 2025-02-14: done"))).to_be_visible()
    assert panel.locator("img").count() >= 1
    browser.assert_images_load()
    browser.shot("desk")
    browser.assert_no_key()


def test_the_csp_desk_with_its_defaults_shows_its_decision_and_report(
    browser: Browser,
) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Cash-secured puts")
    panel.get_by_role("button", name="Find a put").click()
    decided = panel.get_by_text(re.compile(r"^NVDA: (select|reject)"))
    expect(decided.first).to_be_visible(timeout=_RUN_S)
    expect(panel.get_by_text("Who decided").first).to_be_visible(timeout=30_000)
    browser.assert_images_load()
    shot = browser.shot("csp")
    if os.environ.get("UI_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["UI_SCREENSHOT"])
    browser.assert_no_key()


def test_the_assistant_answers_about_a_readme_symbol_with_its_defaults(
    browser: Browser,
) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Assistant")
    expect(panel.get_by_text("answer as of the close of (empty: the last the data covers)"))
    box = panel.get_by_placeholder("Ask about a symbol, e.g. how does NVDA look?")
    box.fill("how does AAPL look?")
    box.press("Enter")
    answer = panel.get_by_text(re.compile(rf"AAPL: last close [\d.]+ \({_aapl_last_close()}\)"))
    expect(answer.first).to_be_visible(timeout=_RUN_S)
    browser.shot("assistant")
    browser.assert_no_key()


def test_the_runs_tab_shows_the_assistant_run(browser: Browser) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Runs")
    panel.get_by_label("run", exact=True).click()
    browser.page.get_by_role("option", name=re.compile(r"assistant · how does AAPL look\?")).click()
    expect(panel.get_by_text("Tool calls (", exact=False)).to_be_visible(timeout=30_000)
    expect(panel.get_by_text(re.compile(r"AAPL: last close")).first).to_be_visible()
    as_of = re.compile(rf"assistant run .* as of {_aapl_last_close()}")
    expect(panel.get_by_text(as_of)).to_be_visible()
    browser.shot("runs")
    browser.assert_no_key()


def test_the_evaluation_tab_shows_the_table_and_its_charts(browser: Browser) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Evaluation")
    expect(
        panel.get_by_text(re.compile(r"^desk desk with rules, 2012-01-01 to 2012-06-30"))
    ).to_be_visible()
    expect(panel.get_by_text("equity", exact=True)).to_be_visible()
    assert panel.locator("img").count() == 2
    browser.assert_images_load()
    browser.shot("evaluation")
    browser.assert_no_key()


def test_the_fund_rebalances_its_default_names_and_shows_its_orders(browser: Browser) -> None:
    """Before the portfolio's order: the paper account is still all cash."""
    from playwright.sync_api import expect

    panel = browser.tab("Fund")
    panel.get_by_role("button", name="Rebalance").click()
    said = panel.get_by_text(re.compile(r"^AAPL, JPM, PG: rebalance, \d+ order\(s\), cash after"))
    expect(said).to_be_visible(timeout=_RUN_S)
    expect(panel.get_by_role("heading", name="Orders")).to_be_visible(timeout=30_000)
    browser.shot("fund")
    browser.assert_no_key()


def test_the_portfolio_places_an_order_with_its_defaults(browser: Browser) -> None:
    from playwright.sync_api import expect

    panel = browser.tab("Portfolio")
    expect(panel.get_by_text("$100,000.00").first).to_be_visible(timeout=30_000)
    browser.expand(panel, "place an order", "symbol")
    panel.get_by_role("button", name="Place").click()
    filled = panel.get_by_text(re.compile(r"^buy 10 NVDA at \$[\d,.]+ on 2025-02-14 \(order 1\)"))
    expect(filled).to_be_visible(timeout=30_000)
    expect(panel.get_by_text("Orders", exact=True)).to_be_visible()
    browser.shot("portfolio")
    browser.assert_no_key()


@dataclass
class Listener:
    """An HTTP server on this machine that records every request made to it."""

    url: str
    paths: list[str]


@pytest.fixture
def listener() -> Iterator[Listener]:
    paths: list[str] = []

    class Record(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(404)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield Listener(f"http://127.0.0.1:{server.server_address[1]}", paths)
    finally:
        server.shutdown()
        server.server_close()


def _hostile_desk_run(data_dir: Path, leak: str) -> str:
    """A desk run whose title, error and report hold images and HTML pointing at ``leak``,
    as a model's words or a pasted text could: recorded in the store the API reads."""
    from alphadesk.store import RunStore

    store = RunStore(data_dir / "alphadesk.sqlite")
    run_id = store.start(kind="desk", title=f"![t]({leak}?from=title)", request={})
    folder = data_dir / "runs" / run_id
    folder.mkdir(parents=True)
    report = folder / "report.md"
    report.write_text(
        f"# Report ![inline]({leak}?from=report)\n\nsee ![by reference][chart]\n\n"
        f'[chart]: {leak}?from=reference\n\n<img src="{leak}?from=html">\n',
        encoding="utf-8",
    )
    store.add_artifact(run_id, "report.md", report, "text/markdown")
    store.finish(run_id, status="HOLD", error=f"stopped: ![e]({leak}?from=error)")
    return run_id


def test_no_image_in_a_question_an_answer_or_a_report_is_loaded_by_the_page(
    browser: Browser, data_dir: Path, listener: Listener
) -> None:
    """A question, a report or an error holding ``![x](http://...)`` or ``<img>``: the page
    that shows it asks that address for nothing (a click on a link still would)."""
    from playwright.sync_api import expect

    from alphadesk.store import RunStore

    leak = f"{listener.url}/leak.png"
    run_id = _hostile_desk_run(data_dir, leak)
    panel = browser.tab("Assistant")
    box = panel.get_by_placeholder("Ask about a symbol, e.g. how does NVDA look?")
    box.fill(f"how does AAPL look? ![chart]({leak}?from=question) <img src={leak}?from=html>")
    box.press("Enter")
    runs = RunStore(data_dir / "alphadesk.sqlite")
    deadline = time.monotonic() + _RUN_S / 1000
    while not any(
        "from=question" in str(r.request) and r.status == "completed" for r in runs.recent()
    ):
        assert time.monotonic() < deadline, "the question was not answered"
        time.sleep(0.5)
    browser.settle()
    panel = browser.tab("Runs")
    for option, shown in (
        (r"assistant · how does AAPL look\? !\[chart\]", "Tool calls ("),
        (r"desk · !\[t\]", f"desk run {run_id}"),
    ):
        panel.get_by_label("run", exact=True).click()
        browser.page.get_by_role("option", name=re.compile(option)).click()
        expect(panel.get_by_text(shown, exact=False).first).to_be_visible(timeout=30_000)
        browser.settle()
    expect(panel.get_by_role("heading", name=re.compile("^Report"))).to_be_visible()
    browser.page.wait_for_load_state("networkidle")
    browser.page.wait_for_timeout(2_000)  # an image is fetched as soon as it is drawn
    assert listener.paths == []
    httpx.get(f"{leak}?from=test", timeout=10)  # the listener hears what it is asked
    assert listener.paths == ["/leak.png?from=test"]
    browser.shot("hostile")
