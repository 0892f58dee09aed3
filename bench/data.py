"""Market-data benchmarks: bundled bars cold and warm, one modeled option chain.

    python bench/data.py [--quick]

Cold is the first read in a fresh process (imports, manifest, Parquet files, checksums);
warm is the same request again (files are read once per process). Goals: ten years of
daily bars for the whole bundled universe under 1 s cold and 50 ms warm; a modeled chain
(every expiration within 60 days) under 50 ms warm. Companies with fundamentals and no
bars (e.g. ADBE) have no bars to read and are left out. ``--quick``: one warm pass and two
chains, to check that it runs; its figures are not to be quoted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

RUN_COLD = """
import time
t0 = time.perf_counter()
from datetime import UTC, datetime, timedelta
from alphadesk.data.providers.bundled import BundledProvider
t1 = time.perf_counter()
provider = BundledProvider()
total = 0
for row in provider.coverage():
    if row.end is None:
        continue  # fundamentals only: no bars
    as_of = datetime.combine(row.end, datetime.min.time(), UTC) + timedelta(days=2)
    total += len(provider.daily_bars(row.symbol, as_of, start=row.end - timedelta(days=3652)))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, total)
"""


def _universe_pass() -> tuple[float, int]:
    from alphadesk.data.providers.bundled import BundledProvider

    provider = BundledProvider()
    start = time.perf_counter()
    total = 0
    for row in provider.coverage():
        if row.end is None:
            continue  # fundamentals only: no bars
        as_of = datetime.combine(row.end, datetime.min.time(), UTC) + timedelta(days=2)
        total += len(provider.daily_bars(row.symbol, as_of, start=row.end - timedelta(days=3652)))
    return time.perf_counter() - start, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    quick = parser.parse_args().quick
    passes, dates = (1, 2) if quick else (5, 10)
    out = subprocess.run(
        [sys.executable, "-c", RUN_COLD], capture_output=True, text=True, check=True
    ).stdout.split()
    imports, cold, total = float(out[0]), float(out[1]), int(out[2])
    _universe_pass()  # make this process warm
    warm = statistics.median(_universe_pass()[0] for _ in range(passes))
    from alphadesk.data.providers.bundled import BundledProvider

    symbols = len(BundledProvider().universe())
    print(f"bundled universe: {symbols} symbols, {total} daily bars (up to ten years each)")
    print(f"  import alphadesk.data.providers.bundled: {imports * 1000:8.1f} ms")
    print(f"  cold load (fresh process):               {cold * 1000:8.1f} ms")
    print(f"  warm load (median of {passes}):".ljust(43) + f"{warm * 1000:8.1f} ms")

    from alphadesk.data.options_model import ModeledOptions

    modeled = ModeledOptions(BundledProvider())
    as_of = datetime(2012, 6, 1, 18, tzinfo=UTC)
    start = time.perf_counter()
    chain = modeled.option_chain("AAPL", as_of, max_dte=60)
    first = time.perf_counter() - start
    times = []
    for day in range(dates):
        when = as_of - timedelta(days=7 * day)
        start = time.perf_counter()
        modeled.option_chain("AAPL", when, max_dte=60)
        times.append(time.perf_counter() - start)
    print(
        f"modeled chain AAPL {as_of.date()}: {len(chain.expirations)} expirations, "
        f"{len(chain.contracts)} contracts"
    )
    print(f"  first (calendar, rates, analytics):      {first * 1000:8.1f} ms")
    warm = statistics.median(times)
    print(f"  warm (median of {dates} dates):".ljust(43) + f"{warm * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
