"""An order's price against the trade date's bar, read from the bundled data here too."""

from __future__ import annotations

from datetime import date

import pytest

from alphadesk.config import Settings
from alphadesk.data import build_provider
from alphadesk.data.calendar import session_close
from alphadesk.portfolio import Contract, OrderRequest, PriceNotVerified, verify_price

DAY = session_close(date(2021, 6, 30))
MARKET = build_provider(Settings())


def _bar(symbol: str) -> tuple[float, float]:
    row = MARKET.daily_bars(symbol, DAY).frame.iloc[-1]
    return float(row["low"]), float(row["high"])


def _order(contract: Contract, price: float) -> OrderRequest:
    return OrderRequest(contract=contract, side="buy", quantity=1, price=price, as_of=DAY)


def test_a_stock_price_must_lie_in_the_days_range() -> None:
    low, high = _bar("NVDA")  # NVDA's bundled bars have a low and a high
    nvda = Contract(symbol="NVDA")
    inside = verify_price(MARKET, _order(nvda, (low + high) / 2))
    assert not inside.forced and "within NVDA's 2021-06-30 range" in inside.price_check
    for price, word in ((low * 0.98, "below"), (high * 1.02, "above")):
        with pytest.raises(PriceNotVerified, match=word):
            verify_price(MARKET, _order(nvda, price))
        forced = verify_price(MARKET, _order(nvda, price), force=True)
        assert forced.forced and forced.price_check.startswith(f"forced: {price:g} is {word}")


def test_an_option_premium_is_at_most_what_the_option_can_be_worth() -> None:
    _, high = _bar("NVDA")
    put = Contract(symbol="NVDA", right="put", strike=19, expiration=date(2021, 7, 16))
    call = put.model_copy(update={"right": "call"})
    assert not verify_price(MARKET, _order(put, 0.5)).forced
    with pytest.raises(PriceNotVerified, match="more than a put can be worth"):
        verify_price(MARKET, _order(put, 19.5))  # above its strike
    with pytest.raises(PriceNotVerified, match="more than a call can be worth"):
        verify_price(MARKET, _order(call, high + 1))
    gone = Contract(symbol="ZZZQ", right="put", strike=5, expiration=date(2021, 7, 16))
    with pytest.raises(PriceNotVerified, match="no data"):
        verify_price(MARKET, _order(gone, 0.5))


def test_at_its_expiration_close_an_option_is_worth_its_intrinsic_value() -> None:
    low, high = _bar("NVDA")
    expiring = Contract(symbol="NVDA", right="put", strike=19, expiration=DAY.date())
    # NVDA far above 19: the put expires worthless, so 4.90 for it is refused (unless forced).
    with pytest.raises(PriceNotVerified, match="intrinsic value 0 "):
        verify_price(MARKET, _order(expiring, 4.90))
    assert verify_price(MARKET, _order(expiring, 4.90), force=True).forced
    # In the money: worth strike - underlying, between its values at the high and the low.
    deep = expiring.model_copy(update={"strike": round(high + 10, 2)})
    inside = verify_price(MARKET, _order(deep, round(deep.strike - (low + high) / 2, 2)))
    assert not inside.forced and "at its expiration close" in inside.price_check
    with pytest.raises(PriceNotVerified, match="off what the option is worth"):
        verify_price(MARKET, _order(deep, round(deep.strike - low + 1, 2)))
    # Earlier the same day (before the close) the usual bound holds: at most the strike.
    morning = _order(expiring, 4.90).model_copy(update={"as_of": DAY.replace(hour=15)})
    assert not verify_price(MARKET, morning).forced
