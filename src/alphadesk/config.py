"""The one settings object. Built once at the edge (CLI, API, tests) and passed down.

Sources, highest priority first: explicit keyword arguments, ``ALPHADESK_*`` environment
variables (nested with ``__``, e.g. ``ALPHADESK_MODELS__QUICK``), a TOML file, defaults.
"""

from __future__ import annotations

import os
import warnings
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

__all__ = [
    "AssistantSettings",
    "CacheMode",
    "DataSettings",
    "DeskSettings",
    "LabSettings",
    "McpSettings",
    "ModelSettingsConfig",
    "Settings",
    "UsageLimits",
    "run_budgets",
]

RULES_MODEL = "rules"


class CacheMode(StrEnum):
    """How the model response cache behaves."""

    OFF = "off"  # never read or write
    RECORD = "record"  # answer from the cache when possible, store every new response
    REPLAY = "replay"  # answer only from the cache; a miss is an error


class ModelSettingsConfig(BaseModel):
    """Which model each role uses. Any LiteLLM model string, or ``rules`` (offline)."""

    quick: str = RULES_MODEL
    deep: str = RULES_MODEL
    per_agent: dict[str, str] = Field(
        default_factory=dict, description="agent name -> model string, overrides quick/deep"
    )
    fallbacks: list[str] = Field(
        default_factory=list, description="models tried in order when the primary fails"
    )
    api_base: str | None = Field(
        None, description="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 or a proxy"
    )
    api_key: SecretStr | None = Field(
        None, description="key sent to api_base (local servers need none)"
    )
    timeout_s: float = Field(
        120.0, gt=0, description="one request, from sending it to the answer's last token"
    )
    first_token_timeout_s: float | None = Field(
        60.0,
        gt=0,
        description="one request, until its first token arrives (answers are streamed so "
        "a silent server is noticed early); None waits up to timeout_s",
    )
    max_retries: int = Field(
        3, ge=0, description="retries on rate limits, dropped connections and 5xx errors"
    )
    response_format: Literal["auto", "always", "never"] = Field(
        "auto",
        description="send the answer's JSON schema as response_format (constrained "
        "decoding): auto where the provider is known to honour it (hosted APIs, local "
        "OpenAI-compatible servers, Ollama), always, or never (fenced JSON instructions)",
    )
    preflight: bool = Field(
        True, description="check that api_base answers before the first request"
    )
    temperature: float | None = None
    max_tokens: int | None = Field(
        None,
        ge=16,
        description="every answer's token cap for every agent; unset: each agent's own",
    )

    def for_agent(self, agent: str, tier: str = "quick") -> str:
        """The model string for ``agent``: its override, else the ``quick``/``deep`` default."""
        if agent in self.per_agent:
            return self.per_agent[agent]
        return self.deep if tier == "deep" else self.quick


class UsageLimits(BaseModel):
    """Hard budgets of one run, checked against its ledger. ``None`` means unlimited (the
    engine's default); the settings give every run the budgets of ``run_budgets``."""

    model_config = ConfigDict(frozen=True)

    requests: int | None = Field(None, ge=1)
    total_tokens: int | None = Field(None, ge=1)
    cost_usd: float | None = Field(None, gt=0)
    wall_time_s: float | None = Field(None, gt=0)
    agent_wall_time_s: float | None = Field(
        None, gt=0, description="one agent step's wall-time budget; past it the step fails"
    )


def run_budgets() -> UsageLimits:
    """The budgets a run gets unless the settings say otherwise."""
    return UsageLimits(
        requests=200,
        total_tokens=2_000_000,
        cost_usd=5.0,
        wall_time_s=900.0,
        agent_wall_time_s=300.0,
    )


class DataSettings(BaseModel):
    """Where market data comes from."""

    providers: list[str] = Field(
        default_factory=lambda: ["bundled"], description="provider names, tried in order"
    )
    local_dir: Path | None = Field(None, description="folder for the `local` provider")
    sec_user_agent: str | None = Field(
        None, description="EDGAR requires 'Name email@example.com' in the User-Agent"
    )


# Renamed settings keys, old -> new: the old still works, with a warning naming the new.
DESK_RENAMED = {"max_debate_rounds": "rounds", "max_risk_discuss_rounds": "risk_rounds"}


class DeskSettings(BaseModel):
    """Defaults of the trading desk's requests (each request may override them)."""

    analysts: list[str] = Field(
        default_factory=lambda: ["market", "sentiment", "news", "fundamentals"],
        description="which analysts run: market, sentiment, news, fundamentals",
    )
    rounds: int = Field(
        1, ge=0, le=5, description="bull/bear debate rounds (both argue, then each rebuts)"
    )
    risk_rounds: int = Field(
        1, ge=0, le=5, description="risk discussion rounds (all argue, then each rebuts)"
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        values = dict(values)
        for old, new in DESK_RENAMED.items():
            if old in values:
                warnings.warn(
                    f"the setting desk.{old} is now desk.{new} "
                    f"(ALPHADESK_DESK__{new.upper()}): rename it",
                    FutureWarning,
                    stacklevel=2,
                )
                values.setdefault(new, values.pop(old))
        return values


class AssistantSettings(BaseModel):
    """Defaults of the assistant's per-question limits (a request may lower them)."""

    request_timeout_s: float = Field(300.0, gt=0, description="the whole question")
    max_tool_calls: int = Field(16, ge=1, le=100, description="tool calls per question")


class LabSettings(BaseModel):
    """Defaults of the strategy lab's periods and of what its gate accepts beyond the goal."""

    validation: float = Field(
        0.2, gt=0, lt=0.5, description="share of the window the gate validates on (out of sample)"
    )
    holdout: float = Field(
        0.2,
        gt=0,
        lt=0.5,
        description="share of the window at its end that the lab never sees while searching",
    )
    min_deflated_sharpe: float = Field(
        0.95, gt=0, lt=1, description="SUCCESS needs a deflated Sharpe probability above this"
    )
    max_pbo: float = Field(
        0.5, gt=0, lt=1, description="SUCCESS needs a probability of backtest overfitting below"
    )


class MemorySettings(BaseModel):
    """The trading desk's memory of past situations (a vector store on disk)."""

    enabled: bool = Field(True, description="recall past lessons and write new ones")
    path: Path | None = Field(None, description="the store's folder; default data_dir/memory")
    reflect: bool = Field(
        True,
        description="each desk run first reflects on the past decisions due; an evaluation's "
        "walk turns it off and reflects between its days itself",
    )


class McpSettings(BaseModel):
    """What an MCP client may make ``alphadesk mcp`` do with its run tools; each of their
    runs also keeps ``[limits]``."""

    models: list[str] = Field(
        default_factory=list,
        description="model strings a client may name in a run tool's call, besides rules and "
        "the configured ones (a client must not spend the owner's money on any model it names)",
    )
    max_runs: int = Field(2, ge=1, le=32, description="run tool calls at once; one more is refused")
    call_timeout_s: float = Field(
        900.0, gt=0, description="one run tool call's wall time; past it the run is interrupted"
    )
    max_symbols: int = Field(50, ge=1, le=100, description="symbols one screen call may take")


class ServerSettings(BaseModel):
    """``[server]``: how ``alphadesk serve`` and ``alphadesk mcp`` run the pipelines."""

    workers: int | None = Field(
        None, ge=1, description="worker processes running the servers' runs; default one per core"
    )
    worker_max_runs: int = Field(
        200, ge=1, description="runs a worker process takes before a fresh one replaces it"
    )
    proxies: list[str] = Field(
        default_factory=list,
        description="addresses of the reverse proxies in front of the servers ('*': any); "
        "only their X-Forwarded-For names the client (by default it is ignored)",
    )
    header_timeout_s: float = Field(
        10.0, gt=0, le=300, description="seconds a connection has to send a request's headers"
    )
    max_connections: int = Field(
        256, ge=1, description="open connections at once; one more is answered 503"
    )
    max_connections_per_client: int = Field(
        32, ge=1, description="open connections from one address (a proxy's excepted)"
    )


class Settings(BaseSettings):
    """Everything configurable about alphadesk, in one immutable object."""

    model_config = SettingsConfigDict(
        env_prefix="ALPHADESK_", env_nested_delimiter="__", frozen=True, extra="forbid"
    )

    models: ModelSettingsConfig = Field(default_factory=ModelSettingsConfig)
    limits: UsageLimits = Field(default_factory=run_budgets)
    data: DataSettings = Field(default_factory=DataSettings)
    desk: DeskSettings = Field(default_factory=DeskSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    assistant: AssistantSettings = Field(default_factory=AssistantSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    lab: LabSettings = Field(default_factory=LabSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    cache: CacheMode = CacheMode.OFF
    data_dir: Path = Field(default_factory=lambda: Path.home() / ".alphadesk")
    api_key: SecretStr | None = Field(
        None, description="the HTTP API's key (ALPHADESK_API_KEY); required off loopback"
    )

    @field_validator("data_dir", mode="before")
    @classmethod
    def _named(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():  # it would be the current folder
            raise ValueError(
                "is empty (ALPHADESK_DATA_DIR set to nothing?): unset it to use "
                "~/.alphadesk, or name a folder"
            )
        return value

    @field_validator("data_dir", mode="after")
    @classmethod
    def _usable(cls, value: Path) -> Path:
        value = value.expanduser()
        problem = _unusable_folder(value)
        if problem is not None:
            raise ValueError(
                f"{value} {problem}: set ALPHADESK_DATA_DIR (or data_dir in the settings "
                "file) to a folder you can write, e.g. ~/.alphadesk"
            )
        return value

    @property
    def store_path(self) -> Path:
        """SQLite file holding runs, events, ledgers and the response cache."""
        return self.data_dir / "alphadesk.sqlite"

    @property
    def memory_path(self) -> Path:
        """Folder of the vector memory of past situations."""
        return (self.memory.path or self.data_dir / "memory").expanduser()

    @property
    def runs_dir(self) -> Path:
        """Folder where each run saves its report, JSON result and charts."""
        return self.data_dir / "runs"

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> Settings:
        """Settings from ``config_file`` (TOML) and the environment, with ``overrides`` on top."""
        if config_file is not None and not config_file.is_file():
            raise FileNotFoundError(f"config file not found: {config_file}")
        return _with_toml(config_file)(**overrides)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings


def _unusable_folder(path: Path) -> str | None:
    """Why ``path`` cannot be the data folder, or None; nothing is made or changed. It is a
    folder this user can write, or one that can be made in the nearest one that exists."""
    existing = path
    try:
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        is_folder = existing.is_dir()
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if not is_folder:
        return "is a file, not a folder" if existing == path else f"is inside {existing}, a file"
    if not os.access(existing, os.W_OK | os.X_OK):
        if existing == path:
            return "is not a folder this user may write in"
        return f"cannot be made: this user may not write in {existing}"
    return None


def _with_toml(path: Path | None) -> type[Settings]:
    """A Settings subclass that also reads ``path``; plain Settings when there is none."""
    if path is None:
        return Settings

    class _FileSettings(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, path)

    return _FileSettings
