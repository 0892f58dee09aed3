"""Every script under ``bench/`` runs on a fresh clone, at its smallest setting, and prints
its figures: a bench that crashes on the data it ships with measures nothing."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
# A hang fails the test instead of blocking the lane. Margin: the slowest bench's --quick
# takes about two minutes on two idle cores (scale.py: Ray and Temporal start-ups).
HANG_S = 900


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.stem)
def test_each_bench_runs_at_its_smallest_setting_and_prints_figures(
    script: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "ALPHADESK_DATA_DIR": str(tmp_path / "alphadesk")}
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=tmp_path,  # nothing it writes lands in the clone
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    figures = [line for line in done.stdout.splitlines() if re.search(r"\d", line)]
    assert figures, done.stdout  # it printed what it measured
