"""Typed errors of the market-data layer.

A provider never returns an error string: it raises one of these. Each message says what
went wrong and how to fix it, so a tool can hand it straight back to a model. The provider
chain decides on the type whether to try the next provider (:attr:`DataError.fallback`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .models import Attempt

__all__ = [
    "DataError",
    "InvalidData",
    "InvalidSymbol",
    "MalformedResponse",
    "NoData",
    "NotConfigured",
    "NotSupported",
    "ProviderUnavailable",
    "RateLimited",
    "SkippedFile",
]


class DataError(Exception):
    """Base class of every market-data error.

    Attributes:
        provider: The provider that raised it (``None`` when raised outside one).
        fallback: Whether a provider chain should try the next provider.
    """

    fallback: bool = True

    def __init__(self, message: str, *, provider: str | None = None) -> None:
        self.provider = provider
        super().__init__(message)


class NoData(DataError):
    """The provider serves this kind of data, but has none for this symbol at this instant.

    Attributes:
        suggestions: Close matches when the symbol itself is unknown.
        attempts: From a provider chain: every provider tried and why it failed.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        suggestions: list[str] | None = None,
        attempts: list[Attempt] | None = None,
    ) -> None:
        self.suggestions = list(suggestions or [])
        self.attempts = list(attempts or [])
        super().__init__(message, provider=provider)


class NotSupported(DataError):
    """The provider does not serve this kind of data at all (e.g. news from bundled data)."""


class NotConfigured(DataError):
    """The provider needs a setting that is missing (a User-Agent, a folder...)."""


class RateLimited(DataError):
    """The source refused more requests for now, even after backing off.

    Attributes:
        retry_after: Seconds the source asked to wait, when it said so.
    """

    def __init__(
        self, message: str, *, provider: str | None = None, retry_after: float | None = None
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, provider=provider)


class ProviderUnavailable(DataError):
    """The source could not be reached (offline, DNS, timeout, server error)."""


class MalformedResponse(ProviderUnavailable):
    """The source answered, but not in the shape it documents."""


class InvalidSymbol(DataError, ValueError):
    """The symbol is malformed (bad characters, too long). No provider could serve it."""

    fallback = False


class InvalidData(DataError):
    """A user's data file is malformed. Not a reason to fall back: the file needs fixing."""

    fallback = False


class SkippedFile(InvalidData):
    """A user's downloaded document (an EDGAR company-facts file) is malformed: it is
    skipped, a provider chain tries the next provider, and the answer's provenance names
    the file among the attempts."""

    fallback = True
