"""HTTP API load test: concurrent server-sent-event streams of offline desk runs.

    python bench/api.py [--streams 50] [--kind desk|csp] [--runs 200]

Starts ``alphadesk serve`` in its own process on 127.0.0.1 (a temporary data folder, the
``rules`` model, the desk's memory off), warms it with one run, then opens ``--streams``
``POST /analyze/stream`` (or ``/csp/stream``) requests at once over symbols with data at
2021-06-30. Every stream must end with its ``result`` event, none with ``error``. Prints
p50/p95 of the time to the first event (``accepted``, sent once the request is checked)
and to the first pipeline event (the run under way), each stream's duration, and the total
wall. The runs are CPU-bound (the ``rules`` policies, the analytics, recording every event):
one server process decides about one run per second of CPU, whatever the concurrency.

Then ``--runs`` more runs (``--streams`` at a time, over varied symbols and dates) and the
server's resident memory (VmRSS) after the warm-up, after the load, every 50 runs, and at
the end: what a run holds must be released when it ends, so it levels off near the peak
of ``--streams`` concurrent runs instead of growing with the number of runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import httpx

SYMBOLS = ["NVDA", "JPM", "KO", "HD", "AMD", "BAC", "CVX", "GE", "JNJ", "LLY"]
DAY = "2021-06-30"


@dataclass
class Stream:
    status: int = 0
    first_event_s: float | None = None
    first_step_s: float | None = None
    total_s: float = 0.0
    events: int = 0
    last: str = ""
    error: str | None = None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _stream(client: httpx.AsyncClient, path: str, body: dict[str, str]) -> Stream:
    out, start = Stream(), time.perf_counter()
    try:
        async with client.stream("POST", path, json=body) as response:
            out.status = response.status_code
            if response.status_code != 200:
                out.error = (await response.aread()).decode()[:200]
                return out
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    out.last = line.partition(":")[2].strip()
                    now = time.perf_counter() - start
                    if out.first_event_s is None:
                        out.first_event_s = now
                    if out.first_step_s is None and out.last != "accepted":
                        out.first_step_s = now
                    out.events += 1
                elif line.startswith("data:") and out.last == "error":
                    out.error = json.loads(line[5:])["error"]["message"]
    except httpx.HTTPError as exc:
        out.error = repr(exc)
    out.total_s = time.perf_counter() - start
    return out


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else values[0]  # fmt: skip


def _rss_mb(pid: int) -> float:
    """A process's resident memory, from /proc (Linux)."""
    status = Path(f"/proc/{pid}/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kib) / 1024


async def _load(base: str, path: str, streams: int, pid: int) -> tuple[list[Stream], float]:
    limits = httpx.Limits(max_connections=streams + 5)
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        warm = await _stream(client, path, {"symbol": "NVDA", "as_of": DAY})
        assert warm.error is None and warm.last == "result", warm
        print(f"  server resident memory after warm-up: {_rss_mb(pid):.0f} MB")
        start = time.perf_counter()
        bodies = [{"symbol": SYMBOLS[i % len(SYMBOLS)], "as_of": DAY} for i in range(streams)]
        results = await asyncio.gather(*(_stream(client, path, b) for b in bodies))
        return list(results), time.perf_counter() - start


async def _many(base: str, path: str, runs: int, streams: int, pid: int) -> list[Stream]:
    """``runs`` runs, ``streams`` at a time, each on its own symbol and week (nothing
    answered from what an earlier run read); the resident memory every 50."""
    limits = httpx.Limits(max_connections=streams + 5)
    done: list[Stream] = []
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as client:
        for first in range(0, runs, streams):
            batch = range(first, min(runs, first + streams))
            bodies = [{"symbol": SYMBOLS[i % len(SYMBOLS)],
                       "as_of": str(date(2021, 6, 30) - timedelta(weeks=i % 150))}
                      for i in batch]  # fmt: skip
            done += await asyncio.gather(*(_stream(client, path, b) for b in bodies))
            if len(done) % 50 < streams or len(done) == runs:
                print(f"  server resident memory after {len(done)} more runs: "
                      f"{_rss_mb(pid):.0f} MB", flush=True)  # fmt: skip
    return done


def _wait_up(base: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("the server did not start in 60 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--kind", choices=["desk", "csp"], default="desk")
    parser.add_argument("--runs", type=int, default=200, help="Runs after the load (0: none).")
    args = parser.parse_args()
    path = "/analyze/stream" if args.kind == "desk" else "/csp/stream"
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ | {"ALPHADESK_DATA_DIR": str(Path(tmp)),
                            "ALPHADESK_MEMORY__ENABLED": "false"}  # fmt: skip
        env.pop("ALPHADESK_API_KEY", None)
        server = subprocess.Popen(
            [sys.executable, "-m", "alphadesk", "serve", "--port", str(port),
             "--max-runs", str(args.streams + 1), "--rate", "100000", "--log-level", "warning"],
            env=env,
        )  # fmt: skip
        try:
            _wait_up(base, server)
            results, wall = asyncio.run(_load(base, path, args.streams, server.pid))
            print(f"  server resident memory after {args.streams} streams: "
                  f"{_rss_mb(server.pid):.0f} MB")  # fmt: skip
            many = asyncio.run(_many(base, path, args.runs, min(args.streams, 10), server.pid))
        finally:
            server.terminate()
            server.wait(timeout=30)
    failed = [r for r in results if r.error or r.status != 200 or r.last != "result"]
    failed_many = [r for r in many if r.error or r.status != 200 or r.last != "result"]
    firsts = [r.first_event_s for r in results if r.first_event_s is not None]
    steps = [r.first_step_s for r in results if r.first_step_s is not None]
    totals = [r.total_s for r in results]
    print(f"{args.streams} concurrent {path} streams (model rules, {DAY}), server in its own "
          "process on 127.0.0.1")  # fmt: skip
    print(f"  completed with a result event: {len(results) - len(failed)}/{len(results)}, "
          f"errors: {len(failed)}")  # fmt: skip
    print(f"  events per stream: {min(r.events for r in results)}-"
          f"{max(r.events for r in results)}")  # fmt: skip
    print(
        f"  time to first event (accepted):   p50 {_pct(firsts, 50):.2f} s, "
        f"p95 {_pct(firsts, 95):.2f} s"
    )
    print(
        f"  time to first pipeline event:     p50 {_pct(steps, 50):.2f} s, "
        f"p95 {_pct(steps, 95):.2f} s"
    )
    print(
        f"  stream duration:                  p50 {_pct(totals, 50):.2f} s, "
        f"p95 {_pct(totals, 95):.2f} s"
    )
    print(f"  total wall: {wall:.2f} s ({args.streams / wall:.2f} runs/s)")
    if many:
        print(f"  then {len(many)} runs, {min(args.streams, 10)} at a time: "
              f"{len(many) - len(failed_many)} completed with a result event")  # fmt: skip
    for r in (failed + failed_many)[:5]:
        print(f"  failed: status {r.status}, last event {r.last!r}: {r.error}")
    if failed or failed_many:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
