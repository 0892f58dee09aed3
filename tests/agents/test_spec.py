"""Agent specs: which model each agent gets, and prompts rendered from their templates."""

from __future__ import annotations

from pathlib import Path

from alphadesk.agents.csp import CspDeps, default_agents
from alphadesk.agents.csp.tasks import ChartTask, OptionsTask, ResearchTask
from alphadesk.agents.spec import model_for
from alphadesk.config import CacheMode, ModelSettingsConfig, Settings
from alphadesk.data.providers.bundled import BundledProvider
from alphadesk.llm.cache import CachedModel
from alphadesk.llm.litellm_model import LiteLLMModel
from alphadesk.llm.rules import RulesModel
from tests.pipelines.conftest import close_of


def test_model_for_rules_per_agent_override_and_cache(tmp_path: Path) -> None:
    agents = default_agents()
    models = ModelSettingsConfig(
        quick="rules", deep="openai/gpt-4o", per_agent={"research": "openai/gpt-4o-mini"}
    )
    settings = Settings(data_dir=tmp_path, models=models)
    assert isinstance(model_for(agents.chart, settings), RulesModel)
    research = model_for(agents.research, settings)
    assert isinstance(research, LiteLLMModel) and research.name == "openai/gpt-4o-mini"
    assert model_for(agents.narrator, settings).name == "openai/gpt-4o"  # the deep tier
    assert model_for(agents.chart, settings, override="openai/o3").name == "openai/o3"

    recording = settings.model_copy(update={"cache": CacheMode.RECORD})
    cached = model_for(agents.research, recording)
    assert isinstance(cached, CachedModel) and cached.name == "openai/gpt-4o-mini"
    assert isinstance(model_for(agents.chart, recording), RulesModel)  # rules needs no cache


def test_every_task_template_renders_with_its_context() -> None:
    agents = default_agents()
    deps = CspDeps(market=BundledProvider(), symbol="NVDA")
    as_of = close_of("2024-11-29")
    options = OptionsTask(
        symbol="NVDA", as_of=as_of, constraints=deps.constraints, chart_context=None
    )
    research = ResearchTask(symbol="NVDA", as_of=as_of, horizon_days=deps.horizon_days)
    for task in (ChartTask(symbol="NVDA", as_of=as_of), options, research):
        prompt = task.render()
        assert "NVDA as of 2024-11-29" in prompt and "$" not in prompt.replace("$ ", "")
    assert '"dte_max": 45' in options.render()
    assert "within 45 days" in research.render()
    for spec in (agents.chart, agents.options, agents.research, agents.narrator):
        assert not spec.agent.instructions.startswith("<!--")  # the version line is dropped


def test_each_agent_caps_its_answer_and_the_settings_can_lift_every_cap(tmp_path: Path) -> None:
    from alphadesk.agents.desk import default_agents as desk_agents
    from alphadesk.agents.spec import configured

    desk = desk_agents()
    caps = {spec.name: spec.agent.max_tokens for spec in desk.all}
    assert all(500 <= cap <= 1_500 for cap in caps.values()), caps
    lifted = Settings(data_dir=tmp_path, models=ModelSettingsConfig(max_tokens=4_000))
    assert configured(desk.trader.agent, lifted).max_tokens == 4_000
    assert configured(desk.trader.agent, Settings(data_dir=tmp_path)) is desk.trader.agent
