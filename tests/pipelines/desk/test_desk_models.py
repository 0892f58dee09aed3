"""The trading desk's request: the names of its fields, old and new."""

from __future__ import annotations

from alphadesk.config import DeskSettings, Settings
from alphadesk.pipelines.desk.models import DeskRequest


def test_a_request_recorded_with_the_old_round_names_reads_as_the_new() -> None:
    """Runs recorded before ``rounds`` and ``risk_rounds`` replay and resume as they were."""
    recorded = {"symbol": "KO", "as_of": "2015-06-30T20:00:00Z", "max_debate_rounds": 2,
                "max_risk_discuss_rounds": 3}  # fmt: skip
    request = DeskRequest.model_validate(recorded)
    assert (request.rounds, request.risk_rounds) == (2, 3)
    assert {"rounds", "risk_rounds"} <= request.model_dump().keys()
    assert "max_debate_rounds" not in request.model_dump()
    # A caller passing the old keyword beats the settings' default, as the new one does.
    settings = Settings(desk=DeskSettings(rounds=4))
    old = DeskRequest.from_settings(settings, symbol="KO", as_of=request.as_of, max_debate_rounds=2)
    assert (
        old.rounds,
        DeskRequest.from_settings(settings, symbol="KO", as_of=request.as_of).rounds,
    ) == (2, 4)
