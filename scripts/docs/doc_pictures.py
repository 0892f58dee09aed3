"""Pictures made by the code from the bundled data when the site is built: each is a
command run offline in an empty folder, as a checked example is, and a PNG it writes."""

from __future__ import annotations

import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from checked_examples import environment, sequence_key

__all__ = ["PICTURES", "Picture", "make_pictures"]


@dataclass(frozen=True)
class Picture:
    """The command to run and, by name (served as ``images/<name>``), the PNGs it writes
    (globs in the command's folder)."""

    command: str
    produces: dict[str, str]


# A command that is also a page's checked example is written exactly as there: the page
# then reuses what it printed instead of running it again.
PICTURES = (
    Picture(
        "alphadesk csp NVDA --as-of 2024-11-29",
        {"csp-chart.png": "data/runs/*/chart_NVDA.png"},
    ),
    Picture(
        "alphadesk backtest sma_cross AAPL --from 2015-01-01 --to 2019-12-31 --chart charts",
        {"backtest-equity.png": "charts/*equity*.png"},
    ),
    Picture(
        "alphadesk eval --symbols AAPL,MSFT --from 2012-01-01 --to 2012-06-30 --every 10 --out ev",
        {"eval-equity.png": "ev/equity.png", "eval-drawdown.png": "ev/drawdown.png"},
    ),
    Picture(
        'alphadesk algo AAPL --goal "Sharpe above 1" --to 2012-12-31 --variants 2 --iterations 1',
        {"lab-trajectory.png": "data/runs/*/trajectory.png"},
    ),
)


def make_pictures(
    pictures: tuple[Picture, ...] = PICTURES, parallel: int = 2
) -> tuple[dict[str, bytes], dict[str, str]]:
    """Run each picture's command (offline, ``rules`` model, a fresh folder); the PNGs by
    name, and what each command printed (keyed as the checked examples' cache is).
    Raises RuntimeError naming a command that failed or made no picture."""
    made: dict[str, bytes] = {}
    printed: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for picture, (pngs, stdout) in zip(pictures, pool.map(_draw, pictures), strict=True):
            made.update(pngs)
            printed[sequence_key([picture.command])] = stdout
    return made, printed


def _draw(picture: Picture) -> tuple[dict[str, bytes], str]:
    """Run one picture's command in a fresh folder: its PNGs by name, and its stdout."""
    made: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="alphadesk-pictures-") as tmp:
        folder = Path(tmp)
        done = subprocess.run(
            ["bash", "-c", picture.command],
            cwd=folder,
            env=environment(folder),
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"`{picture.command}` failed ({done.returncode}): {done.stderr[-2000:]}"
            )
        for name, pattern in picture.produces.items():
            found = sorted(folder.glob(pattern))
            if not found:
                raise RuntimeError(f"`{picture.command}` wrote no {pattern}")
            made[name] = found[-1].read_bytes()
    return made, done.stdout
