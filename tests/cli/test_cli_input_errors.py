"""Bad input to any command: a short message saying what is wrong and what to do, exit 2,
no traceback, no pydantic dump, and nothing run or recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator
from typer.testing import CliRunner

from alphadesk.cli.app import app
from alphadesk.cli.validation import validation_problems
from alphadesk.store import RunStore

MODEL_COMMANDS = [
    ["csp", "NVDA", "--as-of", "2024-11-29"],
    ["desk", "AAPL", "--as-of", "2012-06-01"],
    ["screen", "AAPL", "IBM", "--as-of", "2012-06-29", "--workers", "1"],
    ["ask", "how does AAPL look?", "--as-of", "2012-06-01"],
    ["chat", "--as-of", "2012-06-01"],
    ["algo", "AAPL", "--goal", "Sharpe above 1", "--to", "2012-06-01"],
    ["eval", "--symbols", "AAPL", "--from", "2012-01-01", "--to", "2012-03-01"],
]


def _invoke(tmp_path: Path, args: list[str], **env: str) -> object:
    return CliRunner().invoke(
        app, args, env={"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "100", **env}
    )


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize(
    ("model", "wrong"),
    [("nonsense", "unknown model 'nonsense'"), ("nosuch/gpt", "unknown provider 'nosuch'")],
)
def test_an_unknown_model_is_refused_before_anything_runs(
    tmp_path: Path, command: list[str], model: str, wrong: str
) -> None:
    done = _invoke(tmp_path, [*command, "--model", model])
    assert done.exit_code == 2, done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert wrong in done.stderr
    assert "openai/gpt-4o-mini" in done.stderr and "'rules'" in done.stderr  # how to fix it
    assert "Traceback" not in done.output and len(done.stderr.splitlines()) <= 4
    assert RunStore(tmp_path / "alphadesk.sqlite").recent(limit=5) == []  # nothing started


def test_an_unknown_model_in_the_settings_file_names_the_setting(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text('[models]\nquick = "rules"\ndeep = "bogus"\n')
    done = _invoke(tmp_path, ["--config", str(config), *MODEL_COMMANDS[1]])
    assert done.exit_code == 2, done.output
    assert "unknown model 'bogus' (models.deep in the settings)" in done.stderr


def test_a_known_litellm_model_passes_the_check() -> None:
    from alphadesk.cli.common import check_models
    from alphadesk.config import Settings

    for model in ("openai/gpt-4o-mini", "ollama/qwen2.5", "rules", None):
        check_models(Settings(), model)  # no exit: a run may start


def test_an_empty_question_reads_in_plain_words(tmp_path: Path) -> None:
    done = _invoke(tmp_path, ["ask", ""])
    assert done.exit_code == 2, done.output
    assert "error: question: must not be empty" in done.stderr
    assert "pydantic" not in done.output and "validation error" not in done.output


class _Order(BaseModel):
    symbol: str = Field(min_length=1)
    price: float = Field(gt=0)
    quantity: int

    @field_validator("symbol")
    @classmethod
    def _upper(cls, value: str) -> str:
        if value != value.upper():
            raise ValueError("write the symbol in capitals, e.g. KO")
        return value


def _problems(**fields: object) -> str:
    with pytest.raises(ValidationError) as caught:
        _Order.model_validate(fields)
    return validation_problems(caught.value)


def test_validation_problems_are_plain_words_field_by_field() -> None:
    assert _problems(symbol="", price=0, quantity=1) == (
        "symbol: must not be empty; price: must be greater than 0 (got 0)"
    )
    assert _problems(symbol="ko", price=1) == (
        "symbol: write the symbol in capitals, e.g. KO; quantity: is required"
    )
    text = _problems(symbol="KO", price="cheap", quantity=1)
    assert text.startswith("price: must be a valid number") and "http" not in text


def test_validation_problems_use_the_names_the_user_typed() -> None:
    with pytest.raises(ValidationError) as caught:
        _Order.model_validate({"symbol": "KO", "price": -1, "quantity": 1})
    shown = validation_problems(caught.value, {"price": "PRICE"})
    assert shown == "PRICE: must be greater than 0 (got -1)"


def test_a_mistyped_choice_is_shown_back() -> None:
    from typing import Literal

    class _Pick(BaseModel):
        analyst: Literal["market", "news"]

    with pytest.raises(ValidationError) as caught:
        _Pick.model_validate({"analyst": "astrology"})
    shown = validation_problems(caught.value)
    assert shown == "analyst: must be 'market' or 'news' (got 'astrology')"
