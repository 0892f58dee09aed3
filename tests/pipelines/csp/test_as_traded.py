"""A historical CSP run reads prices as they traded then, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

pytestmark = pytest.mark.slow


def test_nvda_in_june_2021_gets_strikes_near_what_it_traded_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NVDA closed at $800.10 on 2021-06-30, three weeks before its 4-for-1 split."""
    monkeypatch.setenv("ALPHADESK_DATA_DIR", str(tmp_path))
    done = CliRunner().invoke(app, ["csp", "NVDA", "--as-of", "2021-06-30", "--json"])
    assert done.exit_code == 0, done.output
    (result,) = json.loads(done.stdout)  # progress goes to stderr
    assert result["chart"]["current_price"] == pytest.approx(800.10, abs=0.01)
    if result["options"] is not None and result["options"]["best_strike"] is not None:
        assert 600 < result["options"]["best_strike"] < 820
    basis = result["price_basis"]
    assert basis.startswith("as traded on 2021-06-30; earlier bars adjusted for the splits")
    report = (tmp_path / "runs" / result["run_id"] / "report.md").read_text()
    assert f"Prices {basis}." in report
