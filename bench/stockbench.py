"""The StockBench book's wall time: the trading desk (``rules``) over the 20 Dow stocks.

    python bench/stockbench.py [--every N] [--workers N] [--reuse-reports] [--quick]

Runs ``alphadesk eval --benchmark stockbench --every N`` (default 1: every session of
2025-03-01..06-30, 20 names x 83 decisions = 1,660 symbol-days) in a fresh folder and
prints the decisions, the wall time with process start-up, the CPU seconds it used (all
its processes; over two idle cores the wall time would be about half of them, the goal
being 3 minutes), the decision rate and the load average before and after. Then runs it
again in the same folder (every decision read back from the journal, the rules' answers
replayed) and says whether the table came out byte-identical. ``eval --portfolio`` walks
the same book. Figures only: nothing here asserts a time.

Measured on 2 cores shared with other work (load average 5.3 before, 7.6 after): every
session, 1,660 decisions in 108 s wall and 112 CPU seconds (about 56 s on two idle cores;
the goal is 180 s), the decision phase 105 s, 15.9 decisions a second over two worker
processes; the rerun from the journal 5.4 s and byte-identical. Earlier, at load 7: 136 s;
``--every 10``, 180 decisions in 17 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _run(
    folder: Path, every: int, workers: int | None, reuse: bool
) -> tuple[float, float, dict[str, object]]:
    command = [sys.executable, "-c", "from alphadesk.cli.app import main; main()"]
    command += ["eval", "--benchmark", "stockbench", "--every", str(every), "--json"]
    command += ["--out", str(folder / "book")]
    if workers:
        command += ["--workers", str(workers)]
    if reuse:
        command.append("--reuse-reports")
    env = os.environ | {"ALPHADESK_DATA_DIR": str(folder / "data")}
    began, cpu = time.monotonic(), _children_cpu()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return time.monotonic() - began, _children_cpu() - cpu, json.loads(done.stdout)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--reuse-reports", action="store_true", help="eval --reuse-reports")
    parser.add_argument(
        "--quick", action="store_true", help="smallest setting: every 20th session, one worker"
    )
    args = parser.parse_args()
    if args.quick:
        args.every, args.workers = 20, 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        load = os.getloadavg()[0]
        seconds, cpu, payload = _run(folder, args.every, args.workers, args.reuse_reports)
        manifest = payload["manifest"]
        assert isinstance(manifest, dict)
        decisions = int(manifest["decisions"])
        print(f"load average before: {load:.2f}, after: {os.getloadavg()[0]:.2f}")
        print(f"every {args.every}: {decisions} decisions in {seconds:.1f} s wall, "
              f"{cpu:.1f} CPU s (about {cpu / 2:.0f} s wall on 2 idle cores; goal 180 s), "
              f"{os.cpu_count()} cores here")  # fmt: skip
        print(f"decision phase {manifest['wall_seconds']:.1f} s: "
              f"{decisions / float(manifest['wall_seconds']):.1f} decisions a second")  # fmt: skip
        table = (folder / "book" / "book.json").read_bytes()
        again, _, replay = _run(folder, args.every, args.workers, args.reuse_reports)
        same = (folder / "book" / "book.json").read_bytes() == table
        print(f"rerun from the journal: {again:.1f} s, {replay['manifest']['decided_now']} "  # type: ignore[index]
              f"decided again, table byte-identical: {same}")  # fmt: skip


if __name__ == "__main__":
    main()
