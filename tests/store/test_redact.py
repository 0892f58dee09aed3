"""The one redaction: key shapes, the environment's credentials, credential parameters."""

from __future__ import annotations

import pytest

from alphadesk.store.redact import REDACTED, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/runs?api_key=abc123&limit=3", "/runs?api_key=[REDACTED]&limit=3"),
        ("?access_token=x.y.z&kind=desk", "?access_token=[REDACTED]&kind=desk"),
        ("X-Api-Key=zz9 next", "X-Api-Key=[REDACTED] next"),
        ("client_secret=hunter2", "client_secret=[REDACTED]"),
        ("password=p4ss&user=me", "password=[REDACTED]&user=me"),
        ("?key=AIzaQ", "?key=[REDACTED]"),
        # names that only end like a credential keep their value
        ("monkey=banana&turkey=7", "monkey=banana&turkey=7"),
        ("limit=5&kind=desk", "limit=5&kind=desk"),
    ],
)
def test_a_credential_parameter_loses_its_value(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_shapes_and_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plain-looking-value-42")
    text = "sk-" + "a" * 20 + " AKIA" + "B" * 16 + " Bearer " + "c" * 20 + " plain-looking-value-42"
    assert redact(text) == " ".join([REDACTED] * 2 + ["Bearer", REDACTED, REDACTED])
