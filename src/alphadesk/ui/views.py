"""A recorded run as the UI shows it, whatever its kind: a desk's report with its chart in
place, the assistant's question, answer and tool calls, a failed run's error, or else what
the run was asked and what it gave."""

from __future__ import annotations

from typing import Any

import streamlit as st

from alphadesk.ui.client import ApiClient
from alphadesk.ui.format import MISSING, day, inert, report_parts, tool_calls_table

__all__ = ["show_run"]


def show_run(client: ApiClient, run_id: str) -> None:
    run = client.get(f"/runs/{run_id}")
    as_of = (run.get("result") or {}).get("as_of") or run.get("as_of")  # the one it ran at
    st.caption(
        inert(
            f"{run['kind']} run {run_id} · {run['status']} · as of {day(as_of)} · "
            f"model {run.get('model') or MISSING}"
        )
    )
    if run.get("error"):
        st.error(inert(run["error"]))
    if run["kind"] == "assistant":
        _assistant(run)
        return
    artifacts: list[str] = run.get("artifacts") or []
    chart = (
        client.raw(f"/runs/{run_id}/chart") if any(a.endswith(".png") for a in artifacts) else None
    )
    report = client.raw(f"/runs/{run_id}/report") if "report.md" in artifacts else None
    if report is not None:
        _report(report.decode("utf-8"), chart, run_id)
    elif chart is not None:
        st.image(chart, caption=f"run {run_id}")
    elif not run.get("error"):
        _request_and_result(run)


def _report(markdown: str, chart: bytes | None, run_id: str) -> None:
    """The report, with the chart (fetched by this server with its key) where the report
    shows it, or above it when it does not."""
    parts = report_parts(markdown)
    if chart is not None and len(parts) == 1:
        st.image(chart, caption=f"run {run_id}")
    for index, part in enumerate(parts):
        if index and chart is not None:
            st.image(chart, caption=f"run {run_id}")
        if part.strip():
            st.markdown(inert(part))


def _assistant(run: dict[str, Any]) -> None:
    result: dict[str, Any] = run.get("result") or {}
    question = result.get("question") or run["request"].get("question") or run["title"]
    st.chat_message("user").markdown(inert(question))
    answer = result.get("answer") or result.get("error") or "no answer was given"
    st.chat_message("assistant").markdown(inert(answer))
    calls = result.get("tool_calls") or []
    if calls:
        st.markdown(inert(f"**Tool calls** ({len(calls)})"))
        st.dataframe(tool_calls_table(calls), hide_index=True)
    usage = result.get("usage") or {}
    if usage:
        st.caption(
            inert(
                f"{usage.get('requests', 0)} model calls · "
                f"{usage.get('input_tokens', 0) + usage.get('output_tokens', 0)} tokens · "
                f"${usage.get('cost_usd', 0.0):.4f} · {result.get('seconds', 0):.1f} s"
            )
        )


def _request_and_result(run: dict[str, Any]) -> None:
    left, right = st.columns(2)
    left.markdown("**Asked**")
    left.json(run.get("request") or {}, expanded=False)
    right.markdown("**Result**")
    if run.get("result"):
        right.json(run["result"], expanded=False)
    else:
        right.write(inert(f"none yet ({run['status']})"))
