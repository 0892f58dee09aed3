"""What a run holds is released when it ends: a server that has answered many runs keeps
none of their recorders, writers, ledgers or sessions (``bench/api.py`` prints the
resident memory after 200 runs)."""

from __future__ import annotations

import gc

import httpx
import pytest

from alphadesk.agent.usage import UsageLedger
from alphadesk.pipelines.assistant.question import Question
from alphadesk.pipelines.recording import RunRecorder
from alphadesk.pipelines.runner import PipelineRunner
from alphadesk.store.runs import RunWriter
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi

pytestmark = pytest.mark.slow

_PER_RUN = (RunRecorder, RunWriter, UsageLedger, Question, PipelineRunner)


def _alive() -> list[object]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, _PER_RUN)]


@pytest.mark.parametrize(
    ("path", "body"),
    [("/csp/stream", {"symbol": "KO", "as_of": DAY}),
     ("/csp", {"symbol": "JPM", "as_of": DAY}),
     ("/analyze/stream", {"symbol": "NVDA", "as_of": DAY, "analysts": ["market"]}),
     ("/chat/v3", {"question": "how does KO look?", "as_of": DAY})],
)  # fmt: skip
def test_a_finished_run_leaves_nothing_behind(
    api: LiveApi, client: httpx.Client, path: str, body: dict[str, object]
) -> None:
    before = _alive()
    for _ in range(2):
        if path.endswith("stream") or path == "/chat/v3":
            events = api.stream(client, path, body)
            assert events[-1].event in ("result", "chat_finished"), events[-1]
        else:
            assert client.post(path, json=body).status_code == 200
    assert client.get("/health").json()["runs_active"] == 0
    left = [o for o in _alive() if not any(o is b for b in before)]
    assert not left, [type(o).__name__ for o in left]


def test_the_freed_heap_is_given_back_when_the_last_run_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from alphadesk.serving import slots as module

    trims: list[int] = []
    monkeypatch.setattr(module, "trim_heap", lambda: trims.append(1))
    slots = module.RunSlots(limit=2)
    first, second = slots.claim(), slots.claim()
    first.release()
    first.release()  # twice: still one release
    assert (slots.active, trims) == (1, [])  # a run still holds its memory
    second.release()
    assert (slots.active, trims) == (0, [1])
