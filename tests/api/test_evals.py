"""Saved evaluations over the API, and in the UI's Evaluation tab: what `alphadesk eval`
wrote, listed, read and drawn; anything else is a typed 404."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from alphadesk.pipelines.evaluation import EvalSpec, evaluate
from tests.api.conftest import api_settings
from tests.support.live_api import LiveApi
from tests.support.requires import from_test_extra


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveApi, Path]]:
    settings = api_settings(tmp_path_factory.mktemp("evals"))
    spec = EvalSpec(
        desk="csp", symbols=["AAPL"], start=date(2011, 2, 1), end=date(2011, 3, 31), every=20
    )
    folder = asyncio.run(evaluate(settings, spec)).folder
    with LiveApi(settings) as live:
        yield live, folder


@pytest.mark.slow
def test_a_saved_evaluation_is_listed_read_and_drawn(served: tuple[LiveApi, Path]) -> None:
    live, folder = served
    with live.client() as http:
        (listed,) = http.get("/evals").json()
        assert listed["name"] == folder.name and listed["spec"]["symbols"] == ["AAPL"]
        table = http.get(f"/evals/{folder.name}").json()
        assert table == json.loads((folder / "table.json").read_text(encoding="utf-8"))
        strategies = {row["strategy"] for row in table["rows"]}
        assert {"csp_desk", "buy_hold", "mechanical_put"} <= strategies
        for chart in ("equity.png", "drawdown.png"):
            drawn = http.get(f"/evals/{folder.name}/{chart}")
            assert drawn.status_code == 200 and drawn.headers["content-type"] == "image/png"
            assert drawn.content == (folder / chart).read_bytes()


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/evals/no-such-eval", "no_evaluation"),
        ("/evals/..%2F..%2Fetc", "no_evaluation"),
        ("/evals/store", "no_evaluation"),
        ("/evals/{name}/table.json", "no_chart"),
        ("/evals/{name}/..%2Ftable.json", "no_chart"),
    ],
)
@pytest.mark.slow  # the module's evaluation, shared with the slow tests above and below
def test_anything_else_is_a_typed_404(served: tuple[LiveApi, Path], path: str, kind: str) -> None:
    live, folder = served
    with live.client() as http:
        answer = http.get(path.format(name=folder.name))
    assert answer.status_code == 404
    assert answer.json()["error"]["type"] in {kind, "not_found"}


@pytest.mark.slow
def test_the_ui_shows_the_table_and_both_charts(
    served: tuple[LiveApi, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from_test_extra("streamlit")
    from streamlit.testing.v1 import AppTest

    from alphadesk.ui import app as ui_app

    live, _ = served
    monkeypatch.setenv("ALPHADESK_API_URL", live.url)
    at = AppTest.from_file(str(Path(ui_app.__file__)), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    tab = next(t for t in at.tabs if t.label == "Evaluation")
    (frame,) = tab.dataframe
    assert "csp_desk" in set(frame.value["strategy"])
    assert len(tab.get("image")) == 2  # the equity curve and the drawdown
