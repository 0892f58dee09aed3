"""Build the market-data provider the rest of alphadesk uses, from the settings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Clock, MarketData, utc_now
from .cache import CACHE_FILE, DataCache
from .chain import ProviderChain
from .options_model import ModeledOptions

if TYPE_CHECKING:
    from alphadesk.config import Settings

__all__ = ["PROVIDER_NAMES", "build_provider"]

PROVIDER_NAMES = ("bundled", "local", "yahoo", "sec", "modeled")


def build_provider(settings: Settings, *, clock: Clock = utc_now) -> ProviderChain:
    """The provider chain of ``settings.data.providers``, in that order.

    The ``modeled`` option-chain provider (over the chain's own daily bars) comes last
    unless the list places it elsewhere. Online providers share one SQLite cache under
    ``settings.data_dir``.

    Raises:
        ValueError: An unknown provider name.
    """
    names = list(dict.fromkeys(settings.data.providers))
    unknown = [n for n in names if n not in PROVIDER_NAMES]
    if unknown:
        raise ValueError(
            f"unknown data provider(s) {unknown} in data.providers; choose from "
            f"{', '.join(PROVIDER_NAMES)}"
        )
    cache = DataCache(settings.data_dir / CACHE_FILE)
    real = [_make(n, settings, cache, clock) for n in names if n != "modeled"]
    if not real:
        raise ValueError("data.providers needs at least one source of bars, e.g. bundled")
    modeled = ModeledOptions(ProviderChain(real), clock=clock)
    if "modeled" not in names:
        names.append("modeled")
    by_name: dict[str, MarketData] = {p.name: p for p in real}
    by_name["modeled"] = modeled
    return ProviderChain([by_name[n] for n in names])


def _make(name: str, settings: Settings, cache: DataCache, clock: Clock) -> MarketData:
    if name == "bundled":
        from .providers.bundled import BundledProvider

        return BundledProvider(clock=clock)
    if name == "local":
        from .providers.local import LocalProvider

        return LocalProvider(settings.data.local_dir, clock=clock)
    if name == "yahoo":
        from .providers.yahoo import YahooProvider

        return YahooProvider(cache, clock=clock)
    from .providers.sec import SecProvider

    return SecProvider(settings.data.sec_user_agent, cache, clock=clock)
