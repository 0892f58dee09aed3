"""A key pasted into a chat question is redacted once, as the question arrives: it is in
no event streamed, no run record, no chat session or message, no audit entry and no byte
of the files on disk."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx
import pytest

from alphadesk.store import ConversationStore
from tests.api.conftest import DAY
from tests.support.live_api import LiveApi

pytestmark = pytest.mark.slow

SECRETS = (
    "sk-proj-" + "PastedInChat0123" * 3,  # an OpenAI-style key
    "AKIAQ7XV3LM9PASTED42",  # an AWS access key id
    "eyJhbGciOiJIUzI1NiJ9.pasted-bearer-token",  # after "Bearer "
    "sk_live_51PastedInChatAbCdEfGhIj",  # a Stripe secret key
    "ghp_PastedInChat0123456789abcdefABCDEFGH",  # a GitHub token
    "xoxb-1234567890-0987654321-PastedInChat",  # a Slack bot token
    "Hunter2PastedInChat",  # a password, after "pw="
)
QUESTION = (
    f"my key is {SECRETS[0]}, aws {SECRETS[1]}, header Authorization: Bearer {SECRETS[2]},"
    f" stripe {SECRETS[3]}, github {SECRETS[4]}, slack {SECRETS[5]}, db pw={SECRETS[6]}"
    " - how does NVDA look?"
)


def _everything_on_disk(root: Path) -> bytes:
    return b"".join(f.read_bytes() for f in root.rglob("*") if f.is_file())


def test_a_secret_in_a_question_is_nowhere(api: LiveApi, client: httpx.Client) -> None:
    # An open connection keeps the WAL file (the last one to close folds it in and deletes it).
    wal = sqlite3.connect(api.settings.store_path)
    wal.execute("SELECT COUNT(*) FROM runs").fetchone()
    try:
        _a_secret_in_a_question_is_nowhere(api, client)
    finally:
        wal.close()


def _a_secret_in_a_question_is_nowhere(api: LiveApi, client: httpx.Client) -> None:
    events = api.stream(client, "/chat/v3", {"question": QUESTION, "as_of": DAY})
    result = events[-1].json()["result"]
    assert result["status"] == "completed", result
    assert "[REDACTED]" in result["question"] and "how does NVDA look?" in result["question"]
    seen = ["\n".join(f"{e.event}: {e.data}" for e in events)]
    run_id = result["run_id"]
    for path in (f"/runs/{run_id}", f"/runs/{run_id}/events", f"/runs/{run_id}/report", "/runs"):
        response = client.get(path)
        assert response.status_code in (200, 404), response.text  # an answer has no report
        seen.append(response.text)
    store = ConversationStore(api.settings.store_path)
    session = result["session_id"]
    seen += [s.title for s in store.sessions(limit=1000)]
    seen += [m.content for m in store.history(session)]
    seen += [e.model_dump_json() for e in store.audit_log(session_id=session, limit=1000)]
    assert any("[REDACTED]" in m.content for m in store.history(session))
    disk = _everything_on_disk(api.settings.data_dir)
    written = {f.name for f in api.settings.data_dir.rglob("*") if f.is_file()}
    assert {"alphadesk.sqlite-wal", "report.md", "result.json"} <= written, written
    for secret in SECRETS:
        for text in seen:
            assert secret not in text
        assert secret.encode() not in disk
