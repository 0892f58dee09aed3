"""Modeled option chains, for every date where no observed chain exists.

The chain is a model, always labelled ``modeled``, built only from what was known at
``as_of`` (the underlying's closes up to then and the T-bill rate of the month):

* **Volatility surface.** At-the-money vol ``σ_atm(T) = premium · (σ_long + (σ_short −
  σ_long) · e^(−T/τ))`` from the 20- and 252-day close-to-close realised volatility, so
  short expirations follow recent moves and long ones revert. The volatility is measured
  on returns free of splits (the adjusted close when the bars have it, else the close:
  :meth:`~alphadesk.data.bars.Bars.return_prices`); the underlying price and the strikes
  stay on the close as traded at ``as_of``. A put skew and a smile in
  standardised moneyness ``z = ln(K/F) / (σ_atm √T)``: ``σ = σ_atm (1 − skew·z +
  smile·z²)``, bounded to [0.5, 3] × σ_atm.
* **Prices and Greeks.** Black–Scholes–Merton (:mod:`alphadesk.analytics.options`) with
  the same σ for the call and the put of a strike, so put-call parity holds on mids (up
  to the cent rounding of bid and ask).
* **Listing.** Strikes every 0.5/1/2.5/5/10/25 by price band over about ±3.5σ; monthly
  expirations (third Friday) and, from 2011, weeklies out to six weeks, on XNYS sessions.
* **Liquidity.** Open interest and volume peak at the money and fall away with |z| and
  with time; the bid/ask spread grows with the premium, with |z| and for strikes of low
  open interest. Pseudo-random variation is seeded by symbol and date: deterministic.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from alphadesk.kept import Kept

from .base import DAILY_STALE_AFTER, Clock, DataKind, MarketData, Provider, utc_now
from .calendar import expiration_dates, local_date, session_close, trading_days_between
from .errors import DataError, NoData
from .models import OptionChain, OptionContract, Provenance
from .rates import risk_free_rate
from .symbols import normalize_symbol

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from .bars import Bars

__all__ = ["ChainModel", "ModeledOptions", "strike_step"]

_YEAR_SECONDS = 365.0 * 86400.0
_TRADING_DAYS = 252.0  # annualisation of daily variance, as in analytics.volatility
_STALE_NS = int(DAILY_STALE_AFTER.total_seconds() * 1e9)
_STEPS = ((5.0, 0.5), (25.0, 1.0), (100.0, 2.5), (500.0, 5.0), (1500.0, 10.0))


def strike_step(price: float) -> float:
    """Strike spacing for an underlying at ``price`` (0.5 below $5 ... 25 above $1,500)."""
    for limit, step in _STEPS:
        if price < limit:
            return step
    return 25.0


@dataclass(frozen=True, slots=True)
class ChainModel:
    """Parameters of the modeled chain (defaults are typical of US equity options)."""

    hv_short: int = 20  # trading days of the short realised-vol window
    hv_long: int = 252  # ... and of the long one (shortened to the history available)
    tau_years: float = 0.25  # how fast the term structure reverts from short to long
    vol_premium: float = 1.10  # implied over realised (the variance risk premium)
    skew: float = 0.12  # relative vol change per standard deviation of moneyness
    smile: float = 0.03  # curvature of the smile
    width_sd: float = 3.5  # strikes span about this many standard deviations
    weeklies_from: date = date(2011, 1, 1)
    weekly_max_days: int = 42
    min_price: float = 1.0  # below this no listed options are modeled


@dataclass(frozen=True, slots=True)
class _Point:
    """What the volatility surface at one instant depends on."""

    spot: float
    rate: float
    hv_short: float
    hv_long: float


@dataclass(frozen=True, slots=True)
class _Inputs:
    symbol: str
    as_of: datetime
    spot: float
    spot_at: datetime
    basis: str
    vol_basis: str  # the column whose log returns give the realised vols
    hv_short: float
    hv_long: float
    rate: float
    adv: float | None  # average daily share volume, for the open-interest scale
    notes: tuple[str, ...]

    @property
    def point(self) -> _Point:
        return _Point(self.spot, self.rate, self.hv_short, self.hv_long)


class ModeledOptions(Provider):
    """A provider of modeled option chains over another provider's daily bars.

    Args:
        underlying: Where the daily bars (and, if it has them, identities) come from.
        model: The chain parameters.
        clock: Returns "now", for ``retrieved_at``.
    """

    name = "modeled"
    kinds = frozenset({DataKind.OPTION_CHAIN})

    def __init__(
        self, underlying: MarketData, model: ChainModel | None = None, *, clock: Clock = utc_now
    ) -> None:
        super().__init__(clock=clock)
        self._underlying = underlying
        self._model = model or ChainModel()
        # The tools of one run (and a screen's pre-filter before them) ask for the same
        # instant several times: read the inputs, and model each chain, once.
        self._inputs_seen: Kept[tuple[str, datetime], _Inputs] = Kept(64)
        self._chains: Kept[tuple[str, datetime, int, int], OptionChain] = Kept(32)
        self._histories: Kept[tuple[Any, ...], list[float]] = Kept(256)

    def __repr__(self) -> str:
        return f"ModeledOptions(underlying={self._underlying!r})"

    def _option_chain(
        self, symbol: str, as_of: datetime, min_dte: int, max_dte: int
    ) -> OptionChain:
        key = (symbol, as_of, min_dte, max_dte)
        chain = self._chains.get(key)
        if chain is None:
            chain = self._model_chain(symbol, as_of, min_dte, max_dte)
            self._chains.put(key, chain)
        return chain

    def _model_chain(self, symbol: str, as_of: datetime, min_dte: int, max_dte: int) -> OptionChain:
        self._refuse_unmodelable(symbol, as_of)
        inputs = self._inputs(symbol, as_of)
        m = self._model
        expiries = _listed_expiries(as_of, min_dte, max_dte, m)
        if not expiries:
            raise NoData(
                f"{symbol}: no listed expiration {min_dte}-{max_dte} days after "
                f"{as_of.date()}; widen the DTE window",
                provider=self.name,
            )
        contracts = _build_contracts(inputs, expiries, m)
        return OptionChain(
            symbol=symbol,
            observed_at=inputs.spot_at,
            provenance=self._provenance(inputs),
            as_of=as_of,
            underlying_price=inputs.spot,
            rate=inputs.rate,
            dividend_yield=0.0,
            expirations=sorted({c.expiration for c in contracts}),
            contracts=contracts,
        )

    def atm_iv_history(
        self,
        symbol: str,
        instants: Sequence[datetime],
        *,
        min_dte: int,
        max_dte: int,
        target_dte: int,
    ) -> list[float]:
        """At each instant in turn, the IV at the underlying price of the modeled
        expiration nearest ``target_dte`` days out, among those ``min_dte``..``max_dte``
        days out.

        The same numbers as reading each instant's modeled chain the way the options tools
        do (the IV per strike, linear between the two listed strikes that bracket the
        price), without building the chains: one load of the bars, then a few array
        operations per instant. Stops at the first instant where no chain could be modeled
        (no bars yet, stale bars, too little history, a price under ``min_price``), as a
        walk through the chains does. Answers are cached per question.
        """
        key = (normalize_symbol(symbol), tuple(instants), min_dte, max_dte, target_dte)
        values = self._histories.get(key)
        if values is None:
            values = self._iv_history(key[0], list(instants), min_dte, max_dte, target_dte)
            self._histories.put(key, values)
        return list(values)

    def _iv_history(
        self, symbol: str, instants: list[datetime], min_dte: int, max_dte: int, target: int
    ) -> list[float]:
        if not instants:
            return []
        try:
            self._refuse_unmodelable(symbol, instants[0])
            series = _VolSeries.of(self._underlying.daily_bars(symbol, max(instants)))
        except DataError:
            return []
        m = self._model
        values: list[float] = []
        rebase = self._split_inside(symbol, series, min(instants))
        for when in instants:
            point = series.point_at(when, m)
            if point is not None and rebase:
                point = self._as_traded_at(symbol, when, point)
            iv = None if point is None else _atm_iv_at(point, when, min_dte, max_dte, target, m)
            if iv is None:
                break
            values.append(iv)
        return values

    def _split_inside(self, symbol: str, series: _VolSeries, earliest: datetime) -> bool:
        """Whether the spot as traded at ``earliest`` differs from the series' level there
        (a split between it and the series' basis), so each instant needs its own spot."""
        point = series.point_at(earliest, self._model)
        if point is None:
            return True
        traded = self._as_traded_at(symbol, earliest, point)
        return traded is None or traded.spot != point.spot

    def _as_traded_at(self, symbol: str, when: datetime, point: _Point) -> _Point | None:
        """``point`` with the spot as traded at ``when``: the series is on the basis of the
        last instant, and a split between them scales its levels (returns are unchanged)."""
        try:
            bars = self._underlying.daily_bars(
                symbol, when, start=(when - DAILY_STALE_AFTER).date()
            )
        except DataError:
            return None
        spot = float(bars.prices().iloc[-1])
        return None if spot < self._model.min_price else replace(point, spot=spot)

    def _refuse_unmodelable(self, symbol: str, as_of: datetime) -> None:
        if not self._underlying.supports(DataKind.INSTRUMENT):
            return
        try:
            kind = self._underlying.instrument(symbol, as_of).asset_type
        except DataError:
            return  # identity unknown: model it as an equity
        if kind == "crypto" or symbol == "^VIX":  # VIX options settle on futures
            raise NoData(
                f"{symbol}: no option chain is modeled for {kind} underlyings "
                "(their options are not listed equity-style options)",
                provider=self.name,
            )

    def _inputs(self, symbol: str, as_of: datetime) -> _Inputs:
        inputs = self._inputs_seen.get((symbol, as_of))
        if inputs is None:
            inputs = self._read_inputs(symbol, as_of)
            self._inputs_seen.put((symbol, as_of), inputs)
        return inputs

    def _read_inputs(self, symbol: str, as_of: datetime) -> _Inputs:
        from alphadesk.analytics.errors import AnalyticsError
        from alphadesk.analytics.volatility import hv_close_to_close

        bars = self._underlying.daily_bars(symbol, as_of)
        prices = bars.prices()  # levels as traded: the spot and the strikes
        returns_basis = bars.return_prices()  # returns free of splits: the realised vols
        m = self._model
        spot = float(prices.iloc[-1])
        if spot < m.min_price:
            raise NoData(
                f"{symbol}: the underlying is at {spot:.4f} on {prices.index[-1].date()} "
                f"(below ${m.min_price:.0f}, e.g. split-adjusted history): no options are "
                "modeled; use an as_of where it trades higher",
                provider=self.name,
            )
        recent = returns_basis.iloc[-(m.hv_long + 1) :]  # all the model reads of returns
        try:
            short = float(hv_close_to_close(recent, m.hv_short).iloc[-1])
            long_window = min(m.hv_long, len(recent) - 1)
            long = float(hv_close_to_close(recent, long_window).iloc[-1])
        except AnalyticsError as exc:
            raise NoData(
                f"{symbol}: too little history at {as_of.date()} to model a chain ({exc})",
                provider=self.name,
            ) from exc
        rate = risk_free_rate(as_of)
        notes = [n for n in (rate.note,) if n]
        if long_window < m.hv_long:
            notes.append(f"long realised vol over {long_window} days (less history)")
        field = bars.price_field()
        if field == "adj_close":
            notes.append("underlying is the adjusted close (the source has no raw close)")
        return _Inputs(
            symbol=symbol,
            as_of=as_of,
            spot=spot,
            spot_at=prices.index[-1].to_pydatetime(),
            basis=field,
            vol_basis=str(returns_basis.name),
            hv_short=short,
            hv_long=long,
            rate=rate.rate,
            adv=_average_volume(bars),
            notes=(*notes, *bars.provenance.notes),
        )

    def _provenance(self, inputs: _Inputs) -> Provenance:
        notes = [
            f"Black-Scholes on realised vol: {self._model.hv_short}d {inputs.hv_short:.1%}, "
            f"long {inputs.hv_long:.1%} (log returns of {inputs.vol_basis}); "
            f"rate {inputs.rate:.2%}; no dividend yield",
            "bid/ask, volume and open interest are modeled, not quoted",
            *inputs.notes,
        ]
        if inputs.adv is None:
            notes.append("open-interest scale assumed: the bars have no volume")
        return Provenance(
            provider=self.name,
            origin="modeled",
            retrieved_at=self._clock(),
            source="alphadesk chain model over daily closes",
            notes=notes,
            missing=["observed quotes", "last_trade_at"],
        )


@dataclass(frozen=True, slots=True)
class _VolSeries:
    """A symbol's bars as arrays, to read the model's inputs at any earlier instant."""

    bar_times: NDArray[np.int64]  # close times (ns) of every bar: what was known when
    price_times: NDArray[np.int64]
    prices: NDArray[np.float64]  # levels as traded
    return_times: NDArray[np.int64]
    log_returns_basis: NDArray[np.float64]  # log of the split-free series

    @classmethod
    def of(cls, bars: Bars) -> _VolSeries:
        prices, basis = bars.prices(), bars.return_prices()
        return cls(
            _nanos(bars.frame.index),
            _nanos(prices.index),
            prices.to_numpy(np.float64),
            _nanos(basis.index),
            np.log(basis.to_numpy(np.float64)),
        )

    def point_at(self, when: datetime, m: ChainModel) -> _Point | None:
        """Spot, rate and realised vols as ``ModeledOptions`` reads them at ``when``; None
        where it would model no chain."""
        import pandas as pd

        stamp = pd.Timestamp(when).value
        known = int(np.searchsorted(self.bar_times, stamp, side="right"))
        if known == 0 or stamp - self.bar_times[known - 1] > _STALE_NS:
            return None  # no bar yet, or stale: the provider would raise NoData
        priced = int(np.searchsorted(self.price_times, stamp, side="right"))
        if priced == 0 or self.prices[priced - 1] < m.min_price:
            return None
        end = int(np.searchsorted(self.return_times, stamp, side="right"))
        returns = np.diff(self.log_returns_basis[max(0, end - (m.hv_long + 1)) : end])
        if len(returns) < m.hv_short:
            return None
        try:
            rate = risk_free_rate(when).rate
        except DataError:
            return None
        return _Point(
            spot=float(self.prices[priced - 1]),
            rate=rate,
            hv_short=_annualised(returns[-m.hv_short :]),
            hv_long=_annualised(returns),
        )


def _nanos(index: Any) -> NDArray[np.int64]:
    return np.asarray(index.asi8, dtype=np.int64)


def _annualised(returns: NDArray[np.float64]) -> float:
    return math.sqrt(max(float(np.var(returns, ddof=1)), 0.0) * _TRADING_DAYS)


def _atm_iv_at(
    point: _Point, when: datetime, min_dte: int, max_dte: int, target: int, m: ChainModel
) -> float | None:
    """The IV at the spot of the listed expiration nearest ``target`` days out."""
    today = local_date(when)
    listed = [day for day, _ in _listed_expiries(when, min_dte, max_dte, m)]
    if not listed:
        return None
    expiry = min(listed, key=lambda d: (abs((d - today).days - target), d))
    t = (session_close(expiry) - when).total_seconds() / _YEAR_SECONDS
    strikes = _strikes(point.spot, _atm_vol(point, m, t) * math.sqrt(t), m.width_sd)
    below, above = strikes[strikes <= point.spot], strikes[strikes >= point.spot]
    bracket = ([float(below.max())] if below.size else []) + (
        [float(above.min())] if above.size else []
    )
    if not bracket:
        return None
    sigma, _ = _surface(point, m, np.asarray(bracket), np.full(len(bracket), t))
    if len(bracket) == 1 or bracket[0] == bracket[1]:
        return float(sigma[0])
    weight = (point.spot - bracket[0]) / (bracket[1] - bracket[0])
    return float(sigma[0] + weight * (sigma[1] - sigma[0]))


def _average_volume(bars: Bars) -> float | None:
    if "volume" not in bars.fields:
        return None
    recent = bars.frame["volume"].dropna().iloc[-20:]
    value = float(recent.mean()) if len(recent) else 0.0
    return value if value > 0 else None


def _strikes(spot: float, sigma_sqrt_t: float, width_sd: float) -> NDArray[np.float64]:
    step = strike_step(spot)
    spread = max(width_sd * sigma_sqrt_t, 0.10)
    low = spot * math.exp(-spread * 1.15)  # the put wing reaches further
    high = spot * math.exp(spread)
    while (high - low) / step > 120:  # keep a chain to a readable size
        step *= 2.0
    first = max(step, math.floor(low / step) * step)
    return np.arange(first, high + step / 2, step)


def _grid(inputs: _Inputs, expiries: list[tuple[date, bool]], m: ChainModel) -> dict[str, Any]:
    rows: dict[str, list[Any]] = {k: [] for k in ("exp", "monthly", "T", "dte", "td", "K")}
    today = local_date(inputs.as_of)
    for day, monthly in expiries:
        t = (session_close(day) - inputs.as_of).total_seconds() / _YEAR_SECONDS
        atm = _atm_vol(inputs.point, m, t)
        strikes = _strikes(inputs.spot, atm * math.sqrt(t), m.width_sd)
        n = len(strikes)
        rows["exp"] += [day] * n
        rows["monthly"] += [monthly] * n
        rows["T"] += [t] * n
        rows["dte"] += [(day - today).days] * n
        rows["td"] += [trading_days_between(inputs.as_of, day)] * n
        rows["K"] += list(strikes)
    return rows


def _listed_expiries(
    as_of: datetime, min_dte: int, max_dte: int, m: ChainModel
) -> list[tuple[date, bool]]:
    """The modeled listing: monthlies, and weeklies (from ``m.weeklies_from``) up to
    ``m.weekly_max_days`` out, ``min_dte``..``max_dte`` days after ``as_of``."""
    today = local_date(as_of)
    return [
        (day, monthly)
        for day, monthly in expiration_dates(as_of, max_dte, weeklies=today >= m.weeklies_from)
        if (day - today).days >= min_dte and (monthly or (day - today).days <= m.weekly_max_days)
    ]


def _atm_vol(point: _Point, m: ChainModel, t: float) -> float:
    blend = point.hv_long + (point.hv_short - point.hv_long) * math.exp(-t / m.tau_years)
    return m.vol_premium * max(blend, 0.05)


def _surface(
    point: _Point, m: ChainModel, k: NDArray[np.float64], t: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Implied vol per (strike, expiry) and the standardised moneyness z."""
    atm = np.array([_atm_vol(point, m, float(x)) for x in t])
    forward = point.spot * np.exp(point.rate * t)
    z = np.log(k / forward) / (atm * np.sqrt(t))
    sigma = atm * np.clip(1.0 - m.skew * z + m.smile * z * z, 0.5, 3.0)
    return sigma, z


def _liquidity(
    inputs: _Inputs,
    z: NDArray[np.float64],
    t: NDArray[np.float64],
    monthly: NDArray[np.bool_],
    is_call: NDArray[np.bool_],
    rng: np.random.Generator,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Open interest and volume: highest at the money, falling with |z| and with time."""
    scale = float(np.clip((inputs.adv or 2e6) / 2000.0, 20.0, 50_000.0))
    otm = np.where(is_call, z > 0, z < 0)
    shape = np.exp(-0.5 * (z / 1.5) ** 2) * np.exp(-t / 0.75)
    shape *= np.where(monthly, 1.3, 0.6) * np.where(otm, 1.15, 0.85)
    oi = scale * shape * np.exp(0.2 * rng.standard_normal(z.shape))
    turnover = 0.02 + 0.15 * np.exp(-t / 0.1)
    volume = oi * turnover * np.exp(0.3 * rng.standard_normal(z.shape))
    return np.floor(oi).astype(np.int64), np.floor(volume).astype(np.int64)


def _quotes(
    theo: NDArray[np.float64],
    z: NDArray[np.float64],
    oi: NDArray[np.int64],
    group: NDArray[np.int64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Bid and ask around the model price, in cents; the spread widens away from the money
    and for strikes whose open interest is low relative to the expiration's peak."""
    peak = np.ones_like(theo)
    for g in np.unique(group):
        mask = group == g
        peak[mask] = max(float(oi[mask].max()), 1.0)
    illiquid = 1.0 + 0.5 * (1.0 - oi / peak)
    spread = (0.02 + 0.03 * theo) * (1.0 + 0.25 * np.abs(z)) * illiquid
    half = np.minimum(spread / 2.0, theo)  # a bid never goes below zero: mid stays theo
    bid = np.floor((theo - half) * 100.0 + 1e-9) / 100.0
    ask = np.ceil((theo + half) * 100.0 - 1e-9) / 100.0
    return np.maximum(bid, 0.0), np.maximum(ask, 0.01)


def _seed(symbol: str, as_of: datetime) -> int:
    return zlib.crc32(f"{symbol}|{local_date(as_of).isoformat()}".encode())


def _build_contracts(
    inputs: _Inputs, expiries: list[tuple[date, bool]], m: ChainModel
) -> list[OptionContract]:
    from alphadesk.analytics.options import bs_greeks, bs_price

    g = _grid(inputs, expiries, m)
    k = np.repeat(np.asarray(g["K"], dtype=np.float64), 2)
    t = np.repeat(np.asarray(g["T"], dtype=np.float64), 2)
    is_call = np.tile(np.array([True, False]), len(g["K"]))
    monthly = np.repeat(np.asarray(g["monthly"], dtype=bool), 2)
    group = np.repeat(np.asarray([d.toordinal() for d in g["exp"]], dtype=np.int64), 2)
    sigma, z = _surface(inputs.point, m, k, t)
    theo = np.asarray(bs_price(inputs.spot, k, t, inputs.rate, sigma, is_call), np.float64)
    greeks = bs_greeks(inputs.spot, k, t, inputs.rate, sigma, is_call)
    oi, volume = _liquidity(
        inputs, z, t, monthly, is_call, np.random.default_rng(_seed(inputs.symbol, inputs.as_of))
    )
    bid, ask = _quotes(theo, z, oi, group)
    root = inputs.symbol.lstrip("^").replace("-", "").replace(".", "")
    exps = [d for d in g["exp"] for _ in (0, 1)]
    dtes = [d for d in g["dte"] for _ in (0, 1)]
    tds = [d for d in g["td"] for _ in (0, 1)]
    cols = [
        np.asarray(x, dtype=np.float64).tolist()
        for x in (greeks.delta, greeks.gamma, greeks.theta, greeks.vega, greeks.rho)
    ]
    contracts = []
    for i in range(len(k)):
        call = bool(is_call[i])
        strike = float(k[i])
        code = f"{root}{exps[i]:%y%m%d}{'C' if call else 'P'}{round(strike * 1000):08d}"
        contracts.append(
            OptionContract.model_construct(
                contract_symbol=code,
                option_type="call" if call else "put",
                strike=strike,
                expiration=exps[i],
                dte=dtes[i],
                trading_days=tds[i],
                bid=float(bid[i]),
                ask=float(ask[i]),
                last=round(float(theo[i]), 2) if volume[i] > 0 else None,
                volume=int(volume[i]),
                open_interest=int(oi[i]),
                iv=float(sigma[i]),
                delta=cols[0][i],
                gamma=cols[1][i],
                theta=cols[2][i],
                vega=cols[3][i],
                rho=cols[4][i],
                in_the_money=(strike < inputs.spot) if call else (strike > inputs.spot),
                last_trade_at=None,
            )
        )
    return contracts
