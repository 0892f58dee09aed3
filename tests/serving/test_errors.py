"""What an error tells a client: no path of this machine, whatever raised it; routes,
URLs and words that look like paths stay as they are."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from alphadesk.data import build_provider
from alphadesk.data.base import MarketData
from alphadesk.data.errors import NoData
from alphadesk.serving.errors import error_json, without_paths
from tests.api.conftest import DAY, api_settings
from tests.support.live_api import LiveApi

HOME = str(Path.home())


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"unable to open {HOME}/.alphadesk/memory/chroma.sqlite3: locked",
         "unable to open <path>: locked"),
        (f"[Errno 2] No such file or directory: '{tempfile.gettempdir()}/x/table.json'",
         "[Errno 2] No such file or directory: '<path>'"),
        (f"in {sys.prefix}/lib/python3.11/site-packages/chromadb/api.py, line 3",
         "in <path>, line 3"),
        (f"{os.getcwd()}/data/NVDA.csv is empty", "<path> is empty"),
        ("cannot read /usr/share/alphadesk/bars.parquet", "cannot read <path>"),
        ("cannot read ~/.alphadesk/alphadesk.sqlite", "cannot read <path>"),
        ("cannot write to /tmp: disk full", "cannot write to <path>: disk full"),
        ("no space left on /var/", "no space left on <path>"),
        (r"cannot read C:\Users\me\alphadesk\bars.db now", "cannot read <path> now"),
    ],
)  # fmt: skip
def test_a_path_in_an_error_is_not_shown(text: str, shown: str) -> None:
    assert without_paths(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "GET is not allowed on /runs/some-id/replay",
        "see /runs/{run_id}; GET /runs lists the recorded runs",
        "read alphadesk://runs/abc123/report",
        "GET /runs lists them; the schema is at /openapi.json",
        "use http://127.0.0.1:8000/docs or https://example.test/a/b",
        "buy/sell 5 contracts at 2021/06/30",
        f"see https://example.test{tempfile.gettempdir()}/a",
    ],
)
def test_routes_urls_and_slashes_stay(text: str) -> None:
    assert without_paths(text) == text


def test_the_error_body_hides_the_path_in_message_and_hint() -> None:
    body = error_json("no_data", f"nothing in {HOME}/x/y.csv", f"check {HOME}/x")
    assert body == {"error": {"type": "no_data", "message": "nothing in <path>",
                              "hint": "check <path>"}}  # fmt: skip


class _PathInError:
    """The bundled market, whose bars fail naming the file they were read from."""

    def __init__(self, inner: MarketData, where: Path) -> None:
        self._inner, self._where = inner, where

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def daily_bars(self, symbol: str, *_args: Any, **_kwargs: Any) -> Any:
        raise NoData(f"no bars for {symbol} in {self._where}")


def test_an_api_error_names_no_path(tmp_path: Path) -> None:
    settings = api_settings(tmp_path)
    where = tmp_path / "local" / "NVDA.parquet"
    market = _PathInError(build_provider(settings), where)
    with LiveApi(settings, market=market) as live, live.client() as c:  # type: ignore[arg-type]
        response = c.post("/csp", json={"symbol": "NVDA", "as_of": DAY})
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["message"] == "no bars for NVDA in <path>"
    assert str(tmp_path) not in response.text
