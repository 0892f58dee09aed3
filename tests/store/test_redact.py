"""The one redaction: key shapes, the environment's credentials, credential parameters."""

from __future__ import annotations

import pytest

from alphadesk.store.redact import REDACTED, redact, redact_json


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


@pytest.mark.parametrize(
    "secret",
    ["plain-looking-value-42", 'with"quote-and\\slash', "line\nbreak-secret", "naïve-ünïcode-key"],
)
def test_a_secret_deep_in_json_is_found_whatever_its_characters(
    monkeypatch: pytest.MonkeyPatch, secret: str
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", secret)
    value = {"kind": "tool_finished", "result": [{"text": f"it said {secret}."}, 3, None]}
    assert redact_json(value) == {
        "kind": "tool_finished",
        "result": [{"text": f"it said {REDACTED}."}, 3, None],
    }


@pytest.mark.parametrize(
    "text", ["AKIA" + "B" * 16, "Bearer " + "c" * 20, "/runs?api_key=abc123", "sk-" + "a" * 20]
)
def test_a_shape_or_parameter_deep_in_json_is_redacted(text: str) -> None:
    value = [{"deep": {"deeper": [f"{text} and more"]}}, "clean"]
    cleaned = redact_json(value)
    assert REDACTED in cleaned[0]["deep"]["deeper"][0] and text not in str(cleaned)
    assert cleaned[1] == "clean"


def test_json_with_nothing_to_redact_is_given_back_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "plain-looking-value-42")
    value = {"kind": "usage", "text": "RSI 61, plain-looking value", "n": [1.5, True]}
    assert redact_json(value) is value and value["text"] == "RSI 61, plain-looking value"
