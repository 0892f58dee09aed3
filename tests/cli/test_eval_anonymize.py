"""``alphadesk eval --anonymize`` end to end on a tiny range, and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from alphadesk.cli.app import app

TINY = ["eval", "--anonymize", "-s", "ibm", "--from", "2011-01-03", "--to", "2011-01-31"]


@pytest.mark.slow
def test_anonymize_prints_both_markets_side_by_side_and_replays(tmp_path: Path) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    out = tmp_path / "anon"
    args = [*TINY, "--every", "20", "--out", str(out), "--disguise-seed", "9"]
    plain = CliRunner().invoke(app, [a for a in args if a != "--anonymize"][:-2], env=env)
    assert plain.exit_code == 0, plain.output
    shown = CliRunner().invoke(app, args, env=env)
    assert shown.exit_code == 0, shown.output
    # The real-market half is the plain evaluation: recorded once, replayed here.
    assert json.loads((out / "manifest.json").read_text())["cache_mode"] == "replay"
    disguised = json.loads((out / "disguised-9" / "manifest.json").read_text())
    assert disguised["cache_mode"] == "record" and disguised["live_model_calls"] > 0
    assert "original | disguised | gap" in shown.output
    assert "dates -28 years" in shown.output and "0 decisions differ" in shown.output
    for name in ("anonymized.md", "anonymized.csv", "anonymized.json"):
        assert (out / name).stat().st_size > 0
    assert (out / "table.md").exists()  # the plain evaluation's files: it is one
    assert (out / "disguised-9" / "table.md").exists()
    again = CliRunner().invoke(app, [*args, "--json", "--fresh", "--workers", "1"], env=env)
    assert again.exit_code == 0, again.output
    payload = json.loads(again.stdout)
    assert payload["rows"] == json.loads((out / "anonymized.json").read_text())["rows"]
    ibm, pooled = payload["rows"]
    assert pooled["symbol"] == "pooled" and pooled["decisions"] == 1
    assert ibm["symbol"] == "IBM" and ibm["agreement"] == 1.0 and ibm["return_gap"] == 0.0
    assert payload["disguise"]["seed"] == 9 and payload["disguise"]["symbols"]["IBM"] != "IBM"
    # --fresh decided both halves again, from both evaluations' recorded answers.
    for folder in (out, out / "disguised-9"):
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["cache_mode"] == "replay" and manifest["live_model_calls"] == 0
        assert manifest["decided_now"] == 1 and manifest["resumed"] == 0


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--desk", "csp"], "--anonymize evaluates the trading desk only"),
        (["--symbols", "NOPE"], "NOPE"),
        (["--from", "1999-06-01", "--to", "2000-06-30"], "starts 2000"),
    ],
)
def test_bad_input_is_a_clear_error_and_nothing_is_decided(
    tmp_path: Path, args: list[str], said: str
) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    shown = CliRunner().invoke(app, [*TINY, *args], env=env)
    assert shown.exit_code == 2, shown.output
    assert said in shown.output
    assert "Traceback" not in shown.output
    assert not list((tmp_path / "evals").rglob("decisions.csv"))


def test_a_disguise_seed_without_anonymize_is_refused(tmp_path: Path) -> None:
    env = {"ALPHADESK_DATA_DIR": str(tmp_path), "COLUMNS": "200"}
    plain = [a for a in TINY if a != "--anonymize"]
    shown = CliRunner().invoke(app, [*plain, "--disguise-seed", "3"], env=env)
    assert shown.exit_code == 2, shown.output
    assert "--disguise-seed draws the disguise of --anonymize" in shown.output
    assert not (tmp_path / "evals").exists()  # refused before anything ran
