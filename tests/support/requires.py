"""Modules of the ``test`` extra: a test that needs one fails when it is missing.

A skip would let an incomplete install (``pip install -e .`` without ``[test]``) pass for
a complete one; ``python3 dev.py setup`` installs the extra.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

__all__ = ["from_test_extra"]


def from_test_extra(module: str) -> ModuleType:
    """``module``, imported; a missing one fails the test (or its module), naming the fix."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(
            f"{module} comes with the test extra and is not installed here ({exc}); "
            "install it: pip install -e '.[test]' (or python3 dev.py setup)",
            pytrace=False,
        )
