"""The documentation's checks: checked examples are compared with what their command
prints, and a page naming an option, a path, a setting or an import the code does not have
is refused. Run against the real Typer app, the app's real OpenAPI schema and the real
settings class."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer

from alphadesk.api.app import create_app
from alphadesk.cli.app import app
from alphadesk.config import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "docs"))

import checked_examples
import doc_names


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> doc_names.Vocabulary:
    schema = create_app(Settings(data_dir=tmp_path_factory.mktemp("data"))).openapi()
    return doc_names.Vocabulary.from_code(typer.main.get_command(app), schema, Settings)


PRINTED = """AAPL sma_cross(fast=20, slow=50) 2015-01-02 to 2019-12-31, 1258 bars
metric                  sma_cross  buy & hold
─────────────────────────────────────────────
Sharpe                       0.78        1.00
saved as run 20261124-153106-bc5f11 in 0.41s
"""


def test_an_output_matches_with_ellipses_wildcards_run_ids_and_durations() -> None:
    expected = [
        "AAPL sma_cross(fast=20, slow=50) <...>, 1258 bars",
        "...",
        "Sharpe 0.78 1.00",
        "saved as run 20991231-000000-abcdef in 12.5s",
    ]
    assert checked_examples.matches(expected, PRINTED)


@pytest.mark.parametrize(
    "expected",
    [
        ["AAPL sma_cross(fast=20, slow=50) <...>", "metric   sma_cross  buy and hold", "..."],
        ["...", "Sharpe 0.79 1.00", "..."],
        ["AAPL sma_cross(fast=20, slow=50) <...>"],  # the rest is not elided
        ["...", "Sortino 0.78 1.00", "..."],
    ],
)
def test_a_changed_figure_or_column_name_does_not_match(expected: list[str]) -> None:
    assert not checked_examples.matches(expected, PRINTED)


def test_blocks_are_read_as_commands_with_their_output_and_shown_plain() -> None:
    page = """Text.

```console check
$ alphadesk data list \\
    --json
[]
$ echo <...>
```

````markdown
```console check
$ not run: the syntax shown as written
```
````
"""
    [block] = checked_examples.find_examples(page)
    assert [(e.command, e.expected) for e in block] == [
        ("alphadesk data list --json", ["[]"]),
        ("echo <...>", []),
    ]
    shown = checked_examples.strip_markers(page)
    assert "```console\n$ alphadesk data list" in shown
    assert "$ echo …" in shown
    assert "```console check\n$ not run" in shown


def test_a_block_that_does_not_start_with_a_command_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\$ command"):
        checked_examples.find_examples("```console check\noutput first\n```\n")


@pytest.mark.slow  # runs the real command in a subprocess
def test_a_page_whose_command_prints_another_column_fails_with_a_diff() -> None:
    good = (
        "```console check\n$ alphadesk data list | head -1\n"
        "symbol provider ranges rows <...>\n```\n"
    )
    changed = good.replace("symbol provider", "ticker provider")
    assert checked_examples.check_page("good.md", good) == [], "the page says what it prints"
    [failure] = checked_examples.check_page("changed.md", changed)
    assert failure.command == "alphadesk data list | head -1"
    assert "-ticker provider" in failure.detail and "+symbol provider" in failure.detail


def test_names_that_exist_pass(vocab: doc_names.Vocabulary) -> None:
    page = """Run `alphadesk csp NVDA --as-of 2024-11-29 --dte 14-45`, then `--workers`.

```bash
alphadesk portfolio sell JPM 7 --put --strike 140 --date 2021-06-30   # a group's command
ALPHADESK_MODELS__QUICK=openai/gpt-4o ALPHADESK_CONFIG=a.toml alphadesk desk AAPL --no-memory
curl -s -X POST localhost:8765/runs/20261123-105720-685aff/replay
python3 dev.py docs --serve
```

`GET /runs/{id}/report`, `/portfolio/accounts`, `ALPHADESK_MODELS__<NAME>`, `/tmp/x`.

```toml
[limits]
cost_usd = 1.5
```

```python
from alphadesk.config import Settings
```
"""
    assert doc_names.check_names(page, vocab) == []


@pytest.mark.parametrize(
    ("page", "problem"),
    [
        ("`alphadesk csp NVDA --as-off 2024-11-29`", "has no option --as-off"),
        ("```bash\nalphadesk desk AAPL --dte 14-45\n```", "`alphadesk desk` has no option --dte"),
        ("Use `--wokers 2`.", "no alphadesk command has an option --wokers"),
        ("`python3 dev.py docs --watch`", "`dev.py docs` has no option --watch"),
        ("`POST /analyse`", "no path /analyse"),
        ("`/runs/{id}/reports`", "no path /runs/{id}/reports"),
        ("Set `ALPHADESK_MODELS__QUIK`.", "no setting or variable ALPHADESK_MODELS__QUIK"),
        ("```toml\n[limits]\ncost = 1\n```", "no setting limits.cost"),
        ("```python\nfrom alphadesk.config import Setings\n```", "imports Setings"),
    ],
)
def test_a_name_the_code_lacks_is_a_problem(
    vocab: doc_names.Vocabulary, page: str, problem: str
) -> None:
    problems = doc_names.check_names(page, vocab)
    assert any(problem in p for p in problems), problems
