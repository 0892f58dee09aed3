"""Checked examples: the commands a page shows are run, and what they print is compared
with what the page says they print.

A checked example is a fenced block tagged ``console check``::

    ```console check
    $ alphadesk backtest sma_cross AAPL --trades 0
    AAPL sma_cross(fast=20, slow=50) ...
    ...
    ```

Each line starting with ``$ `` is a command (run with bash, ``alphadesk`` on the PATH, a
100-column terminal, an empty data folder shared by the page's examples, so a page can
build on its earlier commands, and ``$REPO`` the checkout, for its ``scripts/``); the
lines under it are what it must print on stdout (``2>&1`` in the command shows stderr
too). Compared line by line, with:

- a line ``...`` standing for any number of lines, and ``<...>`` for any text within a line;
- run ids (``20261121-202950-33bab3``) and durations (``0.4s``, ``12 ms``) matching any other;
- runs of spaces and table rules of any length counting as one, trailing spaces ignored.

The page shows the block as a plain ``console`` block.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Example",
    "ExampleFailure",
    "check_page",
    "environment",
    "find_examples",
    "matches",
    "page_commands",
    "run",
    "run_sequence",
    "sequence_key",
    "strip_markers",
]

TAG = "console check"
_FENCE = re.compile(
    r"^(?P<indent>[ ]*)```console check[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_RUN_ID = re.compile(r"\b\d{8}-\d{6}-[0-9a-f]{6}\b")
_DURATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s)\b")
_RULE = re.compile(r"[─━═-]{3,}")
_SPACES = re.compile(r"[ \t]{2,}")
_WILDCARD = "<...>"
# How long one command may take before the example counts as failed (the slowest, a
# strategy-lab run with sandboxed backtests, takes about 20 s on a busy 2-core machine).
TIMEOUT_S = 300


@dataclass
class Example:
    """One command of a checked block and what the page says it prints."""

    command: str
    expected: list[str] = field(default_factory=list)


@dataclass
class ExampleFailure:
    """A command whose output differs from the page's (or that could not run)."""

    page: str
    command: str
    detail: str

    def __str__(self) -> str:
        return f"{self.page}: `{self.command}` does not print what the page shows:\n{self.detail}"


# A block fenced with four or more backticks shows Markdown as it is written (a page
# explaining this syntax): what it holds is neither run nor changed.
_LITERAL = re.compile(r"^[ ]*(`{4,})[^\n]*\n.*?^[ ]*\1[ \t]*$", re.MULTILINE | re.DOTALL)


def _parts(markdown: str) -> list[tuple[bool, str]]:
    """The page cut into (literal, text) parts."""
    parts, at = [], 0
    for literal in _LITERAL.finditer(markdown):
        parts += [(False, markdown[at : literal.start()]), (True, literal.group(0))]
        at = literal.end()
    return [*parts, (False, markdown[at:])]


def find_examples(markdown: str) -> list[list[Example]]:
    """The checked blocks of a page, each as its commands in order."""
    blocks = []
    text = "".join(part for literal, part in _parts(markdown) if not literal)
    for fence in _FENCE.finditer(text):
        indent = len(fence.group("indent"))
        examples: list[Example] = []
        pending = ""
        for raw in fence.group("body").splitlines():
            line = raw[indent:]
            if pending or line.startswith("$ "):
                text = line.lstrip() if pending else line[2:]
                pending += text
                if pending.endswith("\\"):
                    pending = pending[:-1].rstrip() + " "
                    continue
                examples.append(Example(pending.strip()))
                pending = ""
            elif examples:
                examples[-1].expected.append(line)
            elif line.strip():
                raise ValueError(f"a `{TAG}` block must start with a `$ command` line: {line!r}")
        blocks.append(examples)
    return blocks


def strip_markers(markdown: str) -> str:
    """The page as readers see it: checked blocks shown as plain console blocks, with an
    ellipsis where text within a line may differ."""

    def shown(fence: re.Match[str]) -> str:
        body = fence.group("body").replace(_WILDCARD, "…")
        return f"{fence.group('indent')}```console\n{body}{fence.group('indent')}```"

    return "".join(
        part if literal else _FENCE.sub(shown, part) for literal, part in _parts(markdown)
    )


def _normal(line: str) -> str:
    line = _RUN_ID.sub("RUN_ID", line.rstrip())
    line = _DURATION.sub("DURATION", line)
    line = _RULE.sub("───", line)
    return _SPACES.sub(" ", line)


def _trimmed(lines: list[str]) -> list[str]:
    lines = [_normal(line) for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def _pattern(expected: list[str]) -> re.Pattern[str]:
    parts = []
    for line in _trimmed(expected):
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            pieces = [re.escape(p) for p in line.split(_normal(_WILDCARD))]
            parts.append("[^\n]*?".join(pieces) + r"\n")
    return re.compile("".join(parts))


def matches(expected: list[str], printed: str) -> bool:
    """Whether ``printed`` is what ``expected`` shows, under the rules of this module."""
    actual = "".join(line + "\n" for line in _trimmed(printed.splitlines()))
    return _pattern(expected).fullmatch(actual) is not None


def environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALPHADESK_")}
    bin_dir = str(Path(sys.executable).parent)
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="100",
        LINES="50",
        NO_COLOR="1",
        TERM="dumb",
        ALPHADESK_DATA_DIR=str(folder / "data"),
        REPO=str(Path(__file__).resolve().parents[2]),  # the checkout, for its scripts/
    )
    return env


def run(command: str, folder: Path) -> str:
    """What ``command`` prints on stdout, run as a checked example is in ``folder``."""
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return done.stdout


def _diff(expected: list[str], printed: str) -> str:
    lines = difflib.unified_diff(
        _trimmed(expected), _trimmed(printed.splitlines()), "page", "printed", lineterm="", n=2
    )
    return "\n".join(lines) or "(only the `...` and `<...>` parts differ in how they line up)"


def sequence_key(commands: list[str]) -> str:
    """The cache key of commands run in order in a fresh folder."""
    return "".join(f"\n$ {command}" for command in commands)


def run_sequence(commands: list[str]) -> str:
    """Run ``commands`` in order in a fresh folder; their outputs, joined by NUL (the
    value the cache keeps under ``sequence_key(commands)``)."""
    with tempfile.TemporaryDirectory(prefix="alphadesk-docs-") as tmp:
        outputs = []
        for command in commands:
            try:
                outputs.append(run(command, Path(tmp)))
            except subprocess.TimeoutExpired:
                outputs.append(f"(ran over {TIMEOUT_S} s)")
    return "\0".join(outputs)


def page_commands(markdown: str) -> list[str]:
    """A page's checked commands, in the order they run."""
    return [example.command for block in find_examples(markdown) for example in block]


def check_page(
    page: str, markdown: str, cache: dict[str, str] | None = None
) -> list[ExampleFailure]:
    """Run a page's checked examples in a fresh folder; the ones whose output differs.

    ``cache`` maps a sequence of commands already run (``sequence_key``) to their
    outputs: a page whose commands were run before (by ``run_sequence``, another page or
    a picture, or unchanged since the last build of a serving site) is not run again.
    """
    examples = [example for block in find_examples(markdown) for example in block]
    if not examples:
        return []
    commands = [example.command for example in examples]
    key = sequence_key(commands)
    if cache is not None and key in cache:
        joined = cache[key]
    else:
        joined = run_sequence(commands)
        if cache is not None:
            cache[key] = joined
    return [
        ExampleFailure(page, example.command, _diff(example.expected, printed))
        for example, printed in zip(examples, joined.split("\0"), strict=True)
        if not matches(example.expected, printed)
    ]
