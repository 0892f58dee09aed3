"""A disguised market: the same data under other names, other price levels and other years.

A model that has read about the past can recognise a ticker and a date and "remember" what
came next. :class:`Disguise` is a seeded bijection that hides both, and
:class:`~alphadesk.data.disguised.DisguisedMarket` serves a provider's data through it:

* **Names.** Every symbol becomes a stable random one (``AAPL`` -> ``QVRN``) that is no
  real ticker known to alphadesk; company names become invented ones, in text too. Market
  indices (``^GSPC``, ``^VIX``) keep their names: a desk reads them by name as the
  market's context, and with their levels and years disguised they date nothing.
* **Price levels.** Each symbol's prices are multiplied by its own random factor (0.2-5,
  never near 1): OHLC, adjusted close, quotes, per-share figures and every dollar amount.
  A volatility index (``^VIX``) is in percent and keeps its level.
  Volume, share counts, splits and every ratio are unchanged, so returns, volatility,
  valuation multiples and indicators computed from returns are exactly the same.
* **Years.** Every date and instant moves by a whole number of 28-year cycles (backwards).
  In 1901-2099 the Gregorian calendar repeats every 28 years: each date keeps its month,
  day and weekday, leap days stay leap days, monthly option expirations stay third Fridays
  and the rule-based holidays and early closes fall on the same dates. Instants move on the
  New York wall clock, so a 16:00 close stays a 16:00 close whatever the DST rules of the
  disguised year. Backwards, because forwards would be the future (past the exchange
  calendar); one cycle keeps windows from 1998 on inside the calendar (it starts 1970).
  The disguised market keeps the real sessions' sequence: on the few dates where the
  shifted year's exchange differed (Good Friday moves with Easter, one-off closures) a
  session is served on a day the exchange calendar of that year calls a holiday.

Option chains are not served here: put :class:`~alphadesk.data.options_model.ModeledOptions`
over a disguised market (:func:`~alphadesk.data.disguised.disguised_provider`), so chains
follow from disguised bars.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from .calendar import NEW_YORK
from .errors import NoData
from .symbols import normalize_symbol

__all__ = ["YEAR_CYCLE", "Disguise"]

YEAR_CYCLE = 28  # years after which the Gregorian calendar repeats (1901-2099)
_CYCLE_DAYS = 28 * 365 + 7  # = 1461 weeks: weekdays are kept
_NY = ZoneInfo(NEW_YORK)
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ONSETS = ("br", "c", "d", "f", "g", "k", "l", "m", "n", "p", "qu", "r", "s", "t", "v", "z")
_VOWELS = ("a", "e", "i", "o", "u", "ae", "io")
_CODAS = ("", "n", "r", "l", "x", "s", "th", "nd")
_KINDS = ("Holdings", "Industries", "Systems", "Group", "Works", "Partners", "Labs")
# What follows a company's name proper: "Apple Inc." is also just "Apple".
_SUFFIX = re.compile(
    r"(,?\s+(inc\.?|incorporated|corp\.?|corporation|(?:and|&) company|company|co\.?|"
    r"ltd\.?|plc|group|holdings|& co\.?|n\.?v\.?|s\.?a\.?))+$",
    re.IGNORECASE,
)
# A year, not part of an amount: "2012" and "in 2012." but not "$2012", "2012.50", "1,2012".
_YEAR = re.compile(r"(?<![\d$.,])(19\d\d|20\d\d)(?!\d|[.,]\d)")
_DOLLARS = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")
_VOLATILITY_INDEX = re.compile(r"^\^(VIX\w*|VVIX|VXN|VXD|RVX|OVX|GVZ|EVZ)$")
_BUNDLED = Path(__file__).parent / "bundled"


@dataclass(frozen=True)
class Disguise:
    """A seeded bijection between the real market and its disguise.

    Attributes:
        seed: What the names and factors were drawn from.
        cycles: 28-year cycles the dates move by (negative: into the past).
        names: Real symbol -> disguised symbol.
        factors: Real symbol -> price factor (disguised price = real price * factor).
        companies: Real company name (and its short form) -> disguised name.
    """

    seed: int
    cycles: int
    names: Mapping[str, str]
    factors: Mapping[str, float]
    companies: Mapping[str, str]

    @classmethod
    def create(
        cls,
        symbols: Iterable[str],
        *,
        seed: int,
        companies: Mapping[str, str] | None = None,
        taken: Iterable[str] = (),
        cycles: int = -1,
    ) -> Disguise:
        """Draw names and factors for ``symbols`` from ``seed``.

        Args:
            symbols: The real symbols to disguise.
            seed: The same seed gives the same disguise.
            companies: Real symbol -> company name, to be replaced in names and text.
            taken: Tickers a disguised name must not be (real ones); the tickers alphadesk
                ships (index members, renamed tickers) are always added.
            cycles: 28-year cycles to move dates by; not 0.
        """
        if cycles == 0:
            raise ValueError("a disguise moves dates by at least one 28-year cycle")
        real = sorted({normalize_symbol(s) for s in symbols})
        avoid = {normalize_symbol(s) for s in taken} | set(real) | _known_tickers()
        names: dict[str, str] = {}
        factors: dict[str, float] = {}
        for symbol in real:
            rng = random.Random(f"{seed}:{symbol}")
            # A desk reads the market's indices by name ("^GSPC"): they keep it.
            kept = symbol.startswith("^")
            names[symbol] = symbol if kept else _fresh(symbol, rng, avoid | set(names.values()))
            # A volatility index is in percent: its level means the same in any disguise.
            factors[symbol] = 1.0 if _VOLATILITY_INDEX.match(symbol) else _factor(rng)
        renamed: dict[str, str] = {}
        for symbol, company in sorted((companies or {}).items()):
            if normalize_symbol(symbol).startswith("^"):
                continue
            invented = _company(seed, normalize_symbol(symbol))
            renamed[company] = invented
            short = _SUFFIX.sub("", company).removeprefix("The ").strip()
            if len(short) >= 4 and short != company:
                renamed[short] = _SUFFIX.sub("", invented).strip()
        return cls(seed, cycles, names, factors, renamed)

    # -- symbols --------------------------------------------------------------------------

    @functools.cached_property
    def _reals(self) -> dict[str, str]:
        return {fake: real for real, fake in self.names.items()}

    def symbol(self, real: str) -> str:
        """The disguised name of ``real``; KeyError when it is not disguised."""
        return self.names[normalize_symbol(real)]

    def real_symbol(self, disguised: str) -> str:
        """The real symbol behind ``disguised``; NoData when it names none."""
        name = normalize_symbol(disguised)
        if name not in self._reals:
            raise NoData(f"no data for {name}", provider="disguised")
        return self._reals[name]

    def kept(self, real: str) -> bool:
        """Whether ``real`` keeps its name (a market index)."""
        return self.names.get(normalize_symbol(real)) == normalize_symbol(real)

    def company(self, real: str) -> str:
        """The invented company name of the real symbol ``real``."""
        return _company(self.seed, normalize_symbol(real))

    def factor(self, real: str) -> float:
        """Disguised price / real price for ``real``."""
        return self.factors[normalize_symbol(real)]

    def fingerprint(self) -> str:
        """The seed, the years and a digest of every name, factor and company drawn: the
        same seed draws another disguise on data holding other tickers."""
        drawn = repr(
            [self.cycles, *(sorted(m.items()) for m in (self.names, self.factors, self.companies))]
        )
        digest = hashlib.sha256(drawn.encode()).hexdigest()[:12]
        return f"seed {self.seed}, {self.years:+d} years, drawn {digest}"

    # -- time -------------------------------------------------------------------------------

    @property
    def days(self) -> int:
        """Calendar days the dates move by."""
        return self.cycles * _CYCLE_DAYS

    @property
    def years(self) -> int:
        """Years the dates move by."""
        return self.cycles * YEAR_CYCLE

    def day(self, real: date) -> date:
        """The disguised date of ``real`` (same month, day and weekday)."""
        return real + timedelta(days=self.days)

    def real_day(self, disguised: date) -> date:
        """The real date behind ``disguised``."""
        return disguised - timedelta(days=self.days)

    def instant(self, real: datetime) -> datetime:
        """The disguised instant of ``real``: the same New York wall-clock time."""
        return _on_wall_clock(real, self.days)

    def real_instant(self, disguised: datetime) -> datetime:
        """The real instant behind ``disguised``."""
        return _on_wall_clock(disguised, -self.days)

    # -- text -------------------------------------------------------------------------------

    @functools.cached_property
    def _tickers(self) -> re.Pattern[str]:
        """Every real ticker as a whole word (case matters: ``KO`` yes, "ko" no)."""
        return _alternatives(self.names, re.NOFLAG)

    @functools.cached_property
    def _names(self) -> re.Pattern[str]:
        """Every real company name and its short form, in any case."""
        return _alternatives(self.companies, re.IGNORECASE)

    @functools.cached_property
    def _by_name(self) -> dict[str, str]:
        return {k.upper(): v for k, v in self.companies.items()}

    def text(self, text: str, symbol: str | None = None) -> str:
        """``text`` in the disguise: names replaced, years moved, dollar amounts scaled by
        ``symbol``'s factor (left as they are without a symbol)."""
        out = self._names.sub(lambda m: self._by_name[m.group(0).upper()], text)
        out = self._tickers.sub(lambda m: self.names[m.group(0)], out)
        out = _YEAR.sub(lambda m: str(int(m.group(0)) + self.years), out)
        if symbol is None:
            return out
        factor = self.factor(symbol)
        return _DOLLARS.sub(lambda m: "$" + _scaled_amount(m.group(1), factor), out)

    def token(self, real: str) -> str:
        """A stable stand-in for an identifier that would name the real filer or date
        (an accession number): the same input gives the same token."""
        n = int(hashlib.sha256(f"{self.seed}:{real}".encode()).hexdigest(), 16)
        return f"{n % 10**10:010d}-{n // 10**10 % 100:02d}-{n // 10**12 % 10**6:06d}"


def _alternatives(words: Iterable[str], flags: re.RegexFlag) -> re.Pattern[str]:
    ordered = sorted(words, key=len, reverse=True) or ["(?!)"]
    body = "|".join(w if w == "(?!)" else re.escape(w) for w in ordered)
    return re.compile(rf"(?<![\w^])(?:{body})(?!\w)", flags)


def _on_wall_clock(instant: datetime, days: int) -> datetime:
    local = instant.astimezone(_NY).replace(tzinfo=None) + timedelta(days=days)
    return local.replace(tzinfo=_NY).astimezone(instant.tzinfo)


def _fresh(real: str, rng: random.Random, avoid: set[str]) -> str:
    """A random ticker shaped like ``real``: its ``^`` and ``-USD``-like tail are kept."""
    prefix = "^" if real.startswith("^") else ""
    tail = real[real.index("-") :] if "-" in real else ""
    while True:
        core = "".join(rng.choice(_LETTERS) for _ in range(4))
        candidate = f"{prefix}{core}{tail}"
        if candidate not in avoid and core not in avoid:
            return candidate


def _factor(rng: random.Random) -> float:
    """A price factor between 0.2 and 5, never within 1.5x of 1 (levels must move)."""
    while True:
        factor = math.exp(rng.uniform(math.log(0.2), math.log(5.0)))
        if not 1 / 1.5 < factor < 1.5:
            return round(factor, 4)


def _company(seed: int, symbol: str) -> str:
    rng = random.Random(f"{seed}:{symbol}:company")
    syllables = [rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(2)]
    return f"{''.join(syllables).capitalize()} {rng.choice(_KINDS)} Inc."


def _scaled_amount(figure: str, factor: float) -> str:
    value = float(figure.replace(",", "")) * factor
    decimals = len(figure.split(".")[1]) if "." in figure else 0
    return f"{value:,.{max(decimals, 2 if value < 100 else 0)}f}"


@functools.cache
def _known_tickers() -> frozenset[str]:
    """Every ticker alphadesk ships a record of (index members then and now, renamings)."""
    found: set[str] = set()
    for name, columns in (("membership.csv", ("symbol",)), ("ticker_changes.csv", ("old", "new"))):
        path = _BUNDLED / name
        if path.exists():
            with path.open(encoding="utf-8", newline="") as handle:
                found |= {row[c].strip().upper() for row in csv.DictReader(handle) for c in columns}
    return frozenset(found)
