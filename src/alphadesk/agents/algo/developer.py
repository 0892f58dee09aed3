"""The strategy developer: N variants per iteration as Backtrader code.

Its rules policy draws from the template library, guided by the brief's approaches and
the last gate decision: first (and after RESEARCH) one template per promising approach,
TUNE the best variant's neighbouring parameters, FIX re-renders failed variants from
their template, REFINE a template not tried yet. Parameter sets already tried are never
proposed again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from alphadesk.agent import Agent, ModelRetry, RunContext
from alphadesk.agents.algo.deps import AlgoDeps
from alphadesk.agents.algo.models import StrategyBatch, StrategyVariant
from alphadesk.agents.algo.tasks import StrategistTask
from alphadesk.agents.algo.templates import TEMPLATES, StrategyTemplate
from alphadesk.agents.spec import AgentSpec, load_prompt
from alphadesk.llm.rules import RulesPolicy, Transcript

__all__ = ["STRATEGIST", "StrategyPlan"]

_PKG = "alphadesk.agents.algo"


def _key(params: dict[str, Any]) -> str:
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


class StrategyPlan:
    """The variants of one iteration, chosen deterministically from the task."""

    def __init__(self, t: Transcript) -> None:
        task = t.task_as(StrategistTask)
        self.last: dict[str, Any] = task.last or {}
        self.tried = {name: {_key(p) for p in sets} for name, sets in task.tried.items()}
        self.approaches: list[str] = task.brief.get("approaches") or ["trend"]
        self.iteration, self.n = task.iteration, task.n
        self.chosen: list[StrategyVariant] = []
        self.notes: list[str] = []

    # -- picking -------------------------------------------------------------------------

    def add(self, tpl: StrategyTemplate, params: dict[str, Any], why: str, code: str = "") -> bool:
        chosen = tpl.params(params)
        key = _key(chosen)
        if len(self.chosen) >= self.n or key in self.tried.setdefault(tpl.name, set()):
            return False
        self.tried[tpl.name].add(key)
        shown = ", ".join(f"{k}={v}" for k, v in chosen.items())
        self.chosen.append(
            StrategyVariant(
                variant_id=f"i{self.iteration}v{len(self.chosen) + 1}",
                name=f"{tpl.name}({shown})",
                description=f"{tpl.description}: {why}",
                template=tpl.name,
                approach=tpl.approach,
                parameters=chosen,
                code=code or tpl.render(chosen),
            )
        )
        return True

    def ranked_templates(self, exclude: set[str] = frozenset()) -> list[StrategyTemplate]:  # type: ignore[assignment]
        """Templates by the brief's approaches, those never tried first."""
        order = {a: i for i, a in enumerate(self.approaches)}
        ranked = sorted(TEMPLATES.values(), key=lambda tpl: order.get(tpl.approach, 99))
        fresh = [tpl for tpl in ranked if tpl.name not in self.tried and tpl.name not in exclude]
        used = [tpl for tpl in ranked if tpl.name in self.tried and tpl.name not in exclude]
        return fresh + used

    def fill_with(self, sets: Iterator[tuple[StrategyTemplate, dict[str, Any]]], why: str) -> None:
        for tpl, params in sets:
            if len(self.chosen) >= self.n:
                return
            self.add(tpl, params, why)

    def diverse(self, why: str, exclude: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        """One template per promising approach, then more parameter sets of the same."""
        ranked = self.ranked_templates(exclude) or self.ranked_templates()
        self.fill_with(((tpl, dict(tpl.defaults)) for tpl in ranked), why)
        self.fill_with(((tpl, p) for tpl in ranked for p in tpl.grid_sets()), why)

    def best(self) -> dict[str, Any] | None:
        scored = [v for v in self.last.get("variants", []) if v.get("template") in TEMPLATES]
        return max(scored, key=lambda v: v.get("score", 0.0), default=None)

    # -- by decision ---------------------------------------------------------------------

    def decide(self) -> StrategyBatch:
        decision = self.last.get("decision")
        best = self.best()
        if decision == "TUNE" and best is not None:
            tpl = TEMPLATES[best["template"]]
            self.fill_with(
                ((tpl, p) for p in tpl.neighbours(best["parameters"])),
                f"tuned around {best['variant_id']}",
            )
            self.fill_with(
                ((tpl, p) for p in tpl.grid_sets()), f"tuned around {best['variant_id']}"
            )
            reason = f"TUNE: parameter variations of {best['name']}"
        elif decision == "FIX":
            self.repair()
            reason = "FIX: failed variants repaired from their templates"
        elif decision == "REFINE" and best is not None:
            self.diverse("a different idea", exclude={best["template"]})
            reason = f"REFINE: other approaches than {best['template']}"
        else:
            self.diverse("a promising approach of the brief")
            shown = ", ".join(self.approaches)
            reason = f"{decision or 'first iteration'}: diverse approaches ({shown})"
        self.diverse("more of the library")  # when every neighbour was tried already
        return StrategyBatch(variants=self.chosen, reasoning=reason)

    def repair(self) -> None:
        for variant in self.last.get("variants", []):
            tpl = TEMPLATES.get(variant.get("template") or "")
            if not variant.get("error") or tpl is None:
                continue
            params = tpl.params(variant.get("parameters"))
            self.tried.get(tpl.name, set()).discard(_key(params))  # the broken code never ran
            self.add(tpl, params, f"repaired {variant['variant_id']} ({variant['error'][:80]})")
        best = self.best()
        if best is not None and not best.get("error"):
            tpl = TEMPLATES[best["template"]]
            self.fill_with(((tpl, p) for p in tpl.neighbours(best["parameters"])), "tuned")


def _develop(t: Transcript) -> StrategyBatch:
    return StrategyPlan(t).decide()


def new_distinct_variants(ctx: RunContext[AlgoDeps], out: StrategyBatch) -> StrategyBatch:
    """Every variant id new and distinct (the tracker keys on them), every code non-empty.

    Code is not checked here: code that fails goes to the sandbox's check and back to the
    developer through the gate as FIX, with the reason.
    """
    ids = [v.variant_id for v in out.variants]
    again = sorted({i for i in ids if ids.count(i) > 1} | (set(ids) & ctx.deps.used_ids))
    if again:
        raise ModelRetry(f"variant ids must be new and distinct; {again} are taken")
    empty = [v.variant_id for v in out.variants if not v.code.strip()]
    if empty:
        raise ModelRetry(f"variants {empty} have no code: write the complete module")
    return out


STRATEGIST: AgentSpec[AlgoDeps, StrategyBatch] = AgentSpec(
    agent=Agent(
        name="strategist",
        max_tokens=6000,
        instructions=load_prompt(_PKG, "strategist_system").template,
        output_type=StrategyBatch,
        output_validators=(new_distinct_variants,),
    ),
    policy=RulesPolicy(plan=[], decide=_develop, name="strategist"),
    tier="deep",
    turns={"quick": 1, "standard": 2, "deep": 3},
)
