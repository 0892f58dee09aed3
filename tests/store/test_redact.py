"""The one redaction: key shapes, the environment's credentials, credential parameters."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


# One token of each shape the redaction knows, as it would be pasted (made up, of the
# real length and alphabet).
TOKENS = {
    "Stripe secret key": "sk_live_51HxYzAbCdEfGhIjKlMnOpQrStUvWx",
    "Stripe test key": "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "Stripe restricted key": "rk_live_51HxYzAbCdEfGhIjKlMnOp",
    "Stripe webhook secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "GitHub classic token": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "GitHub OAuth token": "gho_" + "16C7e42F292c6912E7710c838347Ae178B4a",
    "GitHub fine-grained token": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzAB",
    "Slack bot token": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "Slack user token": "xoxp-123456789012-123456789012-123456789012-abcdef0123456789",
    "Slack app token": "xapp-1-A0123456789-1234567890123-abcdef0123456789abcdef",
    "AWS access key id": "AKIAIOSFODNN7EXAMPLE",
    "AWS temporary key id": "ASIAY34FZKBOKMUTVV7A",
    "OpenAI key": "sk-" + "T3BlbkFJ" * 6,
    "OpenAI project key": "sk-proj-" + "Ab3dEf6hIj9kLm2n" * 3,
    "Anthropic key": "sk-ant-api03-" + "x7Y_z-Q" * 12,
    "Google key": "AIzaSyA-" + "b1C2d3E4f5G6h7I8j9K0l1M2n3O4p5",
}


@pytest.mark.parametrize("token", TOKENS.values(), ids=TOKENS.keys())
def test_each_token_shape_is_redacted_and_its_neighbours_kept(token: str) -> None:
    assert redact(f"my key is {token}, thanks") == f"my key is {REDACTED}, thanks"
    assert redact(f"({token})") == f"({REDACTED})"
    assert redact(token) == REDACTED


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pw=hunter22 and go", "pw=[REDACTED] and go"),
        ("db password=Tr0ub4dor&3", "db password=[REDACTED]&3"),
        ("PASSWORD=Secret123", "PASSWORD=[REDACTED]"),
        ("postgres?user=me&pwd=s3cr3t!", "postgres?user=me&pwd=[REDACTED]"),
        ("smtp_passwd=abc12345 port=25", "smtp_passwd=[REDACTED] port=25"),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key=[REDACTED]"),
        ("Authorization: Bearer abc.def-ghi_jkl/mno+pq=", "Authorization: Bearer [REDACTED]"),
        ("authorization: bearer abcdefghijklmnop", "authorization: bearer [REDACTED]"),
    ],
)
def test_a_password_parameter_or_bearer_value_is_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_a_private_key_block_is_redacted_whole() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nq9f8\n-----END RSA PRIVATE KEY-----"
    assert redact(f"key:\n{block}\nend") == f"key:\n{REDACTED}\nend"
    assert redact(f"cut {block[:60]}") == f"cut {REDACTED}"


@pytest.mark.parametrize(
    "text",
    [
        "risk-adjusted-returns-over-the-whole-cycle",  # holds "sk-"
        "task_live_feed_and_disk_test_results_2024",  # holds "sk_live_" and "sk_test_"
        "the ghp_ prefix, a short xoxb-1 and AKIA alone",
        "a high through thought, then xapp and sk_live",
        "bypass=1 passage=2 monkey=3 keyword=4",
        "the bearer of bad news was here",
    ],
)
def test_text_that_only_looks_like_a_token_is_kept(text: str) -> None:
    assert redact(text) == text


_AROUND = st.text(alphabet=st.sampled_from(list("abc XYZ 019.,;:()[]{}<>'\"\\/\n\t=&-_")))


@settings(max_examples=300, deadline=None)
@given(before=_AROUND, token=st.sampled_from(sorted(TOKENS.values())), after=_AROUND)
def test_no_token_survives_in_text_or_json_whatever_surrounds_it(
    before: str, token: str, after: str
) -> None:
    # Glued to a letter or digit before it, a token is part of a longer word: a separator.
    text = f"{before} {token} {after}"
    assert token not in redact(text)
    value = {"question": text, "deep": [text, 3]}
    assert token not in json.dumps(redact_json(value))
    # Redacting JSON text keeps it JSON (the store and the stream redact JSON text).
    for dumped in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        cleaned = redact(dumped)
        assert token not in cleaned
        assert json.loads(cleaned)["deep"][1] == 3
