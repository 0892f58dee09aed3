"""SEC fundamentals benchmarks: the bundled EDGAR archive cold and warm.

    python bench/fundamentals.py [--quick]

Cold is the first ``get_fundamentals``-style computation in a fresh process (imports, the
exchange calendar, both Parquet files and their checksums, one company's facts); warm is
statements for another instant of the same company. Goals: cold under 3 s, warm under
100 ms, earnings releases under 5 ms warm. It is quick already: ``--quick`` changes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

RUN = """
import time
t0 = time.perf_counter()
from datetime import UTC, datetime
from alphadesk.data.fundamentals import statements
from alphadesk.data.providers.bundled import BundledProvider
provider = BundledProvider()
as_of = datetime(2020, 2, 14, 21, tzinfo=UTC)
statements(provider.fundamentals("AAPL", as_of), as_of)
t1 = time.perf_counter()
for year in range(2012, 2025):
    when = datetime(year, 6, 28, 21, tzinfo=UTC)
    statements(provider.fundamentals("AAPL", when), when)
t2 = time.perf_counter()
for year in range(2012, 2025):
    provider.earnings("AAPL", datetime(year, 6, 28, 21, tzinfo=UTC))
t3 = time.perf_counter()
print(f"{t1 - t0:.2f} {(t2 - t1) / 13 * 1000:.1f} {(t3 - t2) / 13 * 1000:.2f}")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting: check that it runs")
    parser.parse_args()
    out = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, check=True)
    cold, warm, earnings = out.stdout.split()
    print(f"cold (imports, calendar, archive, AAPL statements): {cold} s")
    print(f"warm statements of AAPL at one instant: {warm} ms")
    print(f"warm earnings releases of AAPL at one instant: {earnings} ms")


if __name__ == "__main__":
    main()
