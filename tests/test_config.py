from pathlib import Path

import pytest
from pydantic import ValidationError

from alphadesk.config import CacheMode, Settings


def test_defaults_run_offline() -> None:
    settings = Settings()
    assert settings.models.quick == "rules"
    assert settings.models.deep == "rules"
    assert settings.cache is CacheMode.OFF
    assert settings.data.providers == ["bundled"]


def test_environment_overrides_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "alphadesk.toml"
    toml.write_text(
        'cache = "record"\ndata_dir = "~/elsewhere"\n'
        '[models]\nquick = "from-file"\ndeep = "anthropic/claude-x"\n'
        '[models.per_agent]\nchart = "openai/gpt-4o"\n[limits]\nrequests = 7\n'
    )
    monkeypatch.setenv("ALPHADESK_MODELS__QUICK", "ollama/llama3")
    settings = Settings.load(toml)
    assert settings.models.quick == "ollama/llama3"
    assert settings.models.deep == "anthropic/claude-x"
    assert settings.cache is CacheMode.RECORD
    assert settings.limits.requests == 7
    assert settings.data_dir == Path.home() / "elsewhere"
    assert settings.models.for_agent("chart") == "openai/gpt-4o"
    assert settings.models.for_agent("research", tier="deep") == "anthropic/claude-x"
    assert settings.models.for_agent("research") == "ollama/llama3"


def test_keyword_overrides_win_and_settings_are_immutable(tmp_path: Path) -> None:
    settings = Settings.load(data_dir=tmp_path)
    assert settings.store_path == tmp_path / "alphadesk.sqlite"
    with pytest.raises(ValidationError):
        settings.cache = CacheMode.REPLAY  # type: ignore[misc]


def test_missing_config_file_and_bad_values_are_clear(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="config file not found"):
        Settings.load(tmp_path / "nope.toml")
    with pytest.raises(ValidationError, match="cache"):
        Settings(cache="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="unknown"):
        Settings(unknown=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("data_dir", "problem"),
    [
        ("", "is empty .*unset it to use ~/.alphadesk"),
        ("  ", "is empty"),
        ("a-file", "a-file is a file, not a folder"),
        ("a-file/below", "a-file/below is inside a-file, a file"),
        ("/proc/self", "/proc/self is not a folder this user may write in"),
        ("/proc/self/below", "cannot be made: this user may not write in /proc/self"),
    ],
)
def test_a_data_folder_that_cannot_be_one_is_a_clear_error_and_nothing_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data_dir: str, problem: str
) -> None:
    if data_dir.startswith("/proc") and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("kept")
    monkeypatch.setenv("ALPHADESK_DATA_DIR", data_dir)
    with pytest.raises(ValidationError, match=problem) as raised:
        Settings()
    assert "set ALPHADESK_DATA_DIR" in str(raised.value) or "unset it" in str(raised.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
    assert (tmp_path / "a-file").read_text() == "kept"


def test_a_data_folder_still_to_make_or_already_there_is_accepted(tmp_path: Path) -> None:
    assert Settings(data_dir=tmp_path / "new" / "data").data_dir == tmp_path / "new" / "data"
    assert Settings(data_dir=tmp_path).data_dir == tmp_path
    assert not (tmp_path / "new").exists()  # checked, not made


def test_the_desks_old_round_keys_still_work_and_name_their_new_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = tmp_path / "alphadesk.toml"
    toml.write_text("[desk]\nmax_debate_rounds = 3\n")
    with pytest.warns(FutureWarning, match=r"desk\.max_debate_rounds is now desk\.rounds"):
        settings = Settings.load(toml)
    assert (settings.desk.rounds, settings.desk.risk_rounds) == (3, 1)

    monkeypatch.setenv("ALPHADESK_DESK__MAX_RISK_DISCUSS_ROUNDS", "2")
    with pytest.warns(FutureWarning, match="ALPHADESK_DESK__RISK_ROUNDS"):
        settings = Settings()
    assert (settings.desk.rounds, settings.desk.risk_rounds) == (1, 2)

    monkeypatch.setenv("ALPHADESK_DESK__RISK_ROUNDS", "4")  # the new name wins
    with pytest.warns(FutureWarning):
        assert Settings().desk.risk_rounds == 4
    monkeypatch.delenv("ALPHADESK_DESK__MAX_RISK_DISCUSS_ROUNDS")
    assert Settings().desk.risk_rounds == 4

    with pytest.warns(FutureWarning), pytest.raises(ValidationError, match="rounds"):
        Settings(desk={"max_debate_rounds": 9})  # still checked: at most 5
