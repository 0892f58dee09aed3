"""Index membership for the bundle: index-constitution's pickles as two CSV files."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path

import pandas as pd

MEMBERSHIP_ORIGIN = (
    "Wikipedia: 'List of S&P 500 companies', 'Nasdaq-100', 'Dow Jones Industrial Average' "
    "and 'Historical components of the Dow Jones Industrial Average', via index-constitution"
)
MEMBERSHIP_LICENCE = (
    "CC BY-SA 4.0 (Wikipedia contributors; these two files are shared under it); "
    "index-constitution code MIT"
)
# Google's class A shares traded as GOOG until the class C distribution, then as GOOGL
# (Google 8-K of 2014-04-03); the membership table lists them under GOOGL throughout.
_EXTRA_TICKER_CHANGES = [("2014-04-03", "GOOG", "GOOGL", "Google 8-K (2014-04-03)")]


def write_membership(out: Path) -> dict[str, object]:
    """Index membership spells and ticker changes as CSV (the package ships pickles)."""
    import index_constitution as ic

    spells = []
    for index in ("sp500", "nasdaq100", "dow30"):
        history = ic.history(index).rename(columns={"opt-in": "start", "opt-out": "end"})
        for row in history.itertuples(index=False):
            spells.append(
                {
                    "index": index,
                    "symbol": row.symbol,
                    "name": row.name,
                    "start": row.start.date().isoformat(),
                    "end": "" if pd.isna(row.end) else row.end.date().isoformat(),
                }
            )
    events = ic.events(region="us")
    changes = [
        {
            "date": e.event_date.date().isoformat(),
            "old": e.old_symbol,
            "new": e.new_symbol,
            "source": e.source_url,
        }
        for e in events.itertuples(index=False)
        if e.event_type == "ticker_change"
    ]
    changes += [
        {"date": d, "old": o, "new": n, "source": src} for d, o, n, src in _EXTRA_TICKER_CHANGES
    ]
    files = {}
    for name, rows in (("membership.csv", spells), ("ticker_changes.csv", changes)):
        frame = pd.DataFrame(rows).sort_values(list(rows[0])[:3], kind="stable")
        frame.to_csv(out / name, index=False, lineterminator="\n")
        files[name] = {
            "sha256": hashlib.sha256((out / name).read_bytes()).hexdigest(),
            "rows": len(frame),
        }
    return {
        "files": files,
        "indices": ["sp500", "nasdaq100", "dow30"],
        "source": {
            "package": "index-constitution",
            "version": importlib.metadata.version("index-constitution"),
            "origin": MEMBERSHIP_ORIGIN,
            "licence": MEMBERSHIP_LICENCE,
        },
        "notes": [
            "join and leave dates as Wikipedia records them; early years are "
            "incomplete (e.g. about 416 S&P 500 members known for mid-2000)",
            "GOOG -> GOOGL of 2014-04-03 added from Google's 8-K",
        ],
    }
