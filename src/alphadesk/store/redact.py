"""Secrets out of everything stored, logged, streamed or shown: keys become ``[REDACTED]``.

The one redaction of alphadesk. Three nets:

- the exact values of the environment's credential variables (``*_API_KEY``,
  ``*_SECRET*``, ``*_TOKEN``, ``*_PASSWORD``...), whatever they look like;
- the shapes tokens have, wherever they come from (a pasted question, a news item, an
  error): OpenAI ``sk-``/``sk-proj-``, Anthropic ``sk-ant-``, OpenRouter ``sk-or-``,
  Stripe ``sk_live_``/``sk_test_``/``rk_live_``/``rk_test_``/``whsec_``, GitHub
  ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_``/``github_pat_``, Slack ``xoxb-``/``xoxp-``/
  ``xoxa-``/``xoxo-``/``xoxr-``/``xoxs-``/``xoxe-``/``xapp-``, AWS access key ids
  (``AKIA``/``ASIA``), Google ``AIza``, Groq ``gsk_``, xAI ``xai-``, Hugging Face ``hf_``,
  private key blocks, and whatever follows ``Bearer`` or ``bearer``;
- the value of a parameter named like a credential (``api_key=``, ``token=``,
  ``client_secret=``, ``password=``, ``passwd=``, ``pwd=``, ``pw=``...), as in a query
  string or a pasted connection string.

Applied to a chat question as it arrives, at the store boundary (run records, events,
ledgers, responses, reports and result files, chat sessions and the audit log), to every
streamed event and error, to the access log, and by ``RedactingFilter`` on log records.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "REDACTED",
    "RedactingFilter",
    "env_secrets",
    "install_log_redaction",
    "redact",
    "redact_json",
    "redact_model",
]

REDACTED = "[REDACTED]"

_SECRET_NAME = re.compile(r"(API_?KEY|SECRET|TOKEN|PASSWORD|ACCESS_KEY)", re.IGNORECASE)
_MIN_SECRET = 8  # shorter values ("1", "true") are settings, not keys
_SHAPES = re.compile(
    # not inside a word: "risk-adjusted-returns" holds "sk-" and is no key
    r"(?<![A-Za-z0-9])(?:"
    r"sk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{16,}"  # OpenAI, Anthropic, OpenRouter
    r"|[rs]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9]{16,}"  # Stripe webhook secret
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{20,}"  # GitHub fine-grained tokens
    r"|xox[abeoprs]-[A-Za-z0-9\-]{10,}"  # Slack tokens
    r"|xapp-[A-Za-z0-9\-]{10,}"  # Slack app tokens
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_\-]{30,}"  # Google
    r"|gsk_[A-Za-z0-9]{20,}"  # Groq
    r"|xai-[A-Za-z0-9]{20,}"  # xAI
    r"|hf_[A-Za-z0-9]{20,}"  # Hugging Face
    r")"
    # a private key block, to its end, or to the end of its text or JSON string
    r"|-----BEGIN[A-Z ]*PRIVATE KEY-----(?:[^\"\\]|\\[^\"\\]|\\\\)*?"
    r"(?:-----END[A-Z ]*PRIVATE KEY-----|(?=\\?\"|$))"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/=\-]{16,}"
)
# Every shape holds one of these (or GitHub's prefix) and is at least this long: most
# stored strings (names, dates, numbers) are ruled out by these checks, far faster than
# the search. A regex finds GitHub's five prefixes in one pass, as fast as one of these.
_SHAPE_STARTS = (
    "sk-", "k_live_", "k_test_", "whsec_", "github_pat_", "xox", "xapp-", "AKIA", "ASIA",
    "AIza", "gsk_", "xai-", "hf_", "earer ", "PRIVATE KEY",
)  # fmt: skip
_GITHUB_START = re.compile(r"gh[pousr]_")
_SHAPE_MIN = 15

# Characters JSON writes escaped (with ``ensure_ascii=False``).
_ESCAPED = re.compile(r'["\\\x00-\x1f]')

# ``name=value`` where the name says credential: the value goes, the name stays. The value
# stops at a backslash too, so redacting JSON text never eats half of an escape.
_PARAMETER = re.compile(
    r"\b((?:[A-Za-z]+[_\-])*"
    r"(?:api[_\-]?key|secret|token|password|passphrase|passwd|pwd|pw|pass|key|credentials?)=)"
    r"[^&\s\"'<>\\]+",
    re.IGNORECASE,
)


def env_secrets() -> list[str]:
    """The values of the environment's credential variables, longest first."""
    values = {
        value
        for name, value in os.environ.items()
        if _SECRET_NAME.search(name) and len(value) >= _MIN_SECRET
    }
    return sorted(values, key=len, reverse=True)  # a longer key first if one contains another


def redact(text: str, secrets: list[str] | None = None) -> str:
    """``text`` with every API key in it replaced by ``[REDACTED]``.

    ``secrets``: the environment's credential values, when the caller already read them
    (reading the environment costs more than searching a short text).
    """
    if not text:
        return text
    for secret in env_secrets() if secrets is None else secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    if len(text) >= _SHAPE_MIN and _suspect(text):
        text = _SHAPES.sub(REDACTED, text)
    return _PARAMETER.sub(rf"\1{REDACTED}", text) if "=" in text else text


def redact_json(value: Any, secrets: list[str] | None = None) -> Any:
    """``value`` (decoded JSON: dicts, lists, strings...) with every string redacted; the
    value itself when nothing in it can be a secret."""
    secrets = env_secrets() if secrets is None else secrets  # read once for the whole value
    if isinstance(value, dict | list) and _surely_clean(value, secrets):
        return value
    return _redacted_json(value, secrets)


Model = TypeVar("Model", bound="BaseModel")


def redact_model(model: Model, secrets: list[str]) -> tuple[Model, str]:
    """``model`` without API keys, and its JSON text as stored: ``model`` itself and one
    dump when its JSON surely holds none (what nearly every event is)."""
    text = model.model_dump_json()
    if _clean_text(text, secrets):
        return model, text
    dumped = model.model_dump(mode="json")
    cleaned = _redacted_json(dumped, secrets)
    same = cleaned == dumped  # a suspect that held nothing: the model as it was
    return (model if same else type(model).model_validate(cleaned)), json.dumps(cleaned)


def _surely_clean(value: dict[str, Any] | list[Any], secrets: list[str]) -> bool:
    """Whether no string in ``value`` holds a secret, a key's shape or a parameter."""
    try:
        return _clean_text(json.dumps(value, ensure_ascii=False), secrets)
    except (TypeError, ValueError):
        return False


def _clean_text(text: str, secrets: list[str]) -> bool:
    """Whether the JSON ``text`` surely holds no secret, key shape or parameter: none is in
    it (one search instead of one per string). A string's text is in the JSON text, as is,
    unless it holds a character JSON escapes; a secret holding one is never looked for this
    way."""
    if "=" in text or _suspect(text):
        return False
    return not any(_ESCAPED.search(secret) or secret in text for secret in secrets)


def _suspect(text: str) -> bool:
    """Whether ``text`` may hold a key's shape: the search is run only then."""
    return any(start in text for start in _SHAPE_STARTS) or _GITHUB_START.search(text) is not None


def _redacted_json(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redacted_json(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted_json(item, secrets) for item in value]
    return value


class RedactingFilter(logging.Filter):
    """Redacts the message (and its arguments) of every record passing a handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if record.exc_info and record.exc_info[1] is not None:
            # The traceback text is rendered later from exc_info: render it now, redacted.
            formatter = logging.Formatter()
            record.exc_text = redact(formatter.formatException(record.exc_info))
            record.exc_info = None
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        return True


def install_log_redaction(logger: logging.Logger | None = None) -> RedactingFilter:
    """Add a ``RedactingFilter`` to every handler of ``logger`` (the root by default), and
    to handlers added later via the root's ``lastResort``. Returns the filter."""
    target = logger or logging.getLogger()
    redactor = RedactingFilter()
    for handler in target.handlers:
        if redactor not in handler.filters:
            handler.addFilter(redactor)
    if logging.lastResort is not None:
        logging.lastResort.addFilter(redactor)
    return redactor
