"""Settings in a temporary folder and the bundled market data, as the pipeline tests use."""

from tests.pipelines.conftest import market, settings

__all__ = ["market", "settings"]
