"""``dev.py``'s stage timing: every stage is named with its time, a failed one too."""

from __future__ import annotations

import re

import dev
import pytest


def test_every_stage_is_timed_in_order_and_a_failing_one_is_still_said(
    capsys: pytest.CaptureFixture[str],
) -> None:
    stages = dev.Stages()
    with stages.stage("lint"):
        pass
    with pytest.raises(RuntimeError), stages.stage("tests"):
        raise RuntimeError("a test failed")
    said = capsys.readouterr().out
    assert re.findall(r"^\[(\w+): \d+ s\]$", said, re.M) == ["lint", "tests"]
    assert [name for name, _ in stages.took] == ["lint", "tests"]
    assert all(seconds >= 0 for _, seconds in stages.took)
    assert re.fullmatch(r"stages: lint \d+ s, tests \d+ s; total \d+ s", stages.summary())
