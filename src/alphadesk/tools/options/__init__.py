"""Options tools: the chain near the money, Greeks, IV versus HV, return on capital, filters,
and the 0DTE SPY engine.

The tools read the chain themselves (symbol and criteria in, facts out): a model never
passes option arrays around. Every number comes from the data layer or
:mod:`alphadesk.analytics`; outputs are small and say (``source.origin``) whether the chain
was observed or modeled. Units and signs are those of :mod:`.models`: IV and HV are
decimals, returns and spreads percent, put delta negative.

Modules: :mod:`.chain` (chain, Greeks, IV versus HV), :mod:`.select` (return on capital,
filters, and the chain access both share), :mod:`.zero_dte` (its own toolset: a modeled
same-day SPY trade).
"""

from __future__ import annotations

from alphadesk.agent import Toolset
from alphadesk.tools.options.chain import calculate_iv_hv, get_option_chain, get_option_greeks
from alphadesk.tools.options.select import calculate_roc, filter_options
from alphadesk.tools.options.zero_dte import ZERO_DTE_TOOLS

__all__ = ["OPTIONS_TOOLS", "ZERO_DTE_TOOLS"]

OPTIONS_TOOLS = Toolset.of(
    "options",
    [get_option_chain, get_option_greeks, calculate_iv_hv, calculate_roc, filter_options],
)
