"""Reference pages generated from the code at build time: the CLI (from the Typer app),
the HTTP API (from the app's OpenAPI schema) and the settings (from the settings class)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

__all__ = ["cli_page", "openapi_page", "settings_page"]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _command_section(command: Any, path: list[str], out: list[str]) -> None:
    ctx = command.context_class(command, info_name=" ".join(path))
    if path[1:]:
        out += [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", ""]
    out += [(command.help or "").strip(), ""]
    out += ["```text", f"{' '.join(path)} {' '.join(command.collect_usage_pieces(ctx))}", "```", ""]
    rows = []
    for param in command.params:
        record = param.get_help_record(ctx)
        if record is not None:
            rows.append((f"`{_cell(record[0])}`", param.param_type_name, _cell(record[1])))
    if rows:
        out += ["| name | kind | what |", "|---|---|---|"]
        out += [f"| {name} | {kind} | {what} |" for name, kind, what in rows]
        out.append("")
    if hasattr(command, "commands"):
        for name in sorted(command.commands):
            _command_section(command.commands[name], [*path, name], out)


def cli_page(cli: Any) -> str:
    """Every command, its usage and its options, as the installed ``alphadesk`` has them."""
    out = [
        "# CLI reference",
        "",
        "Generated from the command-line app when the site is built: it is what "
        "`alphadesk --help` says, command by command. Every command accepts `--config FILE`.",
        "",
    ]
    _command_section(cli, ["alphadesk"], out)
    return "\n".join(out)


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})"
    if schema.get("type") == "array":
        return f"list of {_schema_name(schema.get('items', {}))}"
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    return f"`{schema.get('type', 'any')}`"


def _operation(method: str, path: str, op: dict[str, Any], out: list[str]) -> None:
    out += [f"### `{method.upper()} {path}`", ""]
    doc = op.get("description") or op.get("summary") or ""
    out += [doc.strip(), ""]
    params = op.get("parameters", [])
    if params:
        out += ["| parameter | in | type | required | what |", "|---|---|---|---|---|"]
        for p in params:
            out.append(
                f"| `{p['name']}` | {p['in']} | {_schema_name(p.get('schema', {}))} | "
                f"{'yes' if p.get('required') else 'no'} | {_cell(p.get('description', ''))} |"
            )
        out.append("")
    body = op.get("requestBody", {}).get("content", {})
    for media, content in body.items():
        out += [f"Body ({media}): {_schema_name(content.get('schema', {}))}", ""]
    responses = op.get("responses", {})
    if responses:
        out += ["| status | what | body |", "|---|---|---|"]
        for status, response in responses.items():
            kinds = response.get("content", {})
            shape = ", ".join(
                f"{_schema_name(c.get('schema', {}))} ({m})" for m, c in kinds.items()
            )
            out.append(f"| {status} | {_cell(response.get('description', ''))} | {shape} |")
        out.append("")


def _schema_section(name: str, schema: dict[str, Any], out: list[str]) -> None:
    out += [f"### {name}", "", _cell(schema.get("description", "")), ""]
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    if props:
        out += ["| field | type | required | what |", "|---|---|---|---|"]
        for field, spec in props.items():
            kind = _schema_name(spec)
            if "enum" in spec:
                kind = " \\| ".join(f"`{v}`" for v in spec["enum"])
            default = f" (default `{json.dumps(spec['default'])}`)" if "default" in spec else ""
            out.append(
                f"| `{field}` | {kind} | {'yes' if field in required else 'no'} | "
                f"{_cell(spec.get('description', ''))}{_cell(default)} |"
            )
        out.append("")
    elif "enum" in schema:
        out += ["One of " + ", ".join(f"`{v}`" for v in schema["enum"]) + ".", ""]


def openapi_page(schema: dict[str, Any]) -> str:
    """Every route and model of the app's OpenAPI schema, grouped by tag."""
    info = schema["info"]
    out = [
        "# HTTP API reference",
        "",
        f"Generated from the OpenAPI schema of `alphadesk serve` (version {info['version']}) "
        "when the site is built; a running server serves the same schema at `/openapi.json` "
        "and an interactive page at `/docs`.",
        "",
        info.get("description", ""),
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    for tag, ops in by_tag.items():
        out += [f"## {tag}", ""]
        for method, path, op in ops:
            _operation(method, path, op, out)
    out += ["## Models", ""]
    for name, spec in sorted(schema.get("components", {}).get("schemas", {}).items()):
        _schema_section(name, spec, out)
    return "\n".join(out)


def _settings_rows(model: type[BaseModel], prefix: str, rows: list[str]) -> None:
    for name, info in model.model_fields.items():
        kind = info.annotation
        nested = next(
            (
                a
                for a in (kind, *getattr(kind, "__args__", ()))
                if isinstance(a, type) and issubclass(a, BaseModel)
            ),
            None,
        )
        dotted = f"{prefix}{name}"
        if nested is not None:
            _settings_rows(nested, f"{dotted}.", rows)
            continue
        env = "ALPHADESK_" + dotted.upper().replace(".", "__")
        default = "" if info.default_factory is not None else repr(info.default)
        if info.default_factory is not None:
            try:
                default = repr(info.default_factory())  # type: ignore[call-arg]
            except TypeError:
                default = "(computed)"
        if name == "data_dir":
            default = "~/.alphadesk"
        type_name = getattr(kind, "__name__", str(kind)).replace("typing.", "")
        rows.append(
            f"| `{dotted}` | `{env}` | {_cell(type_name)} | `{_cell(default)}` | "
            f"{_cell(info.description or '')} |"
        )


def settings_page(settings: type[BaseModel]) -> str:
    """Every setting: its name in the TOML file, its environment variable, type, default."""
    rows: list[str] = []
    _settings_rows(settings, "", rows)
    return "\n".join(
        [
            "# Settings reference",
            "",
            "Generated from the settings class when the site is built. A dotted name "
            "`section.key` is `key` under `[section]` in the TOML file given with `--config` "
            "(or `ALPHADESK_CONFIG`); the variable beside it sets it from the environment. "
            "Command options win over variables, variables over the file, the file over the "
            "defaults.",
            "",
            "| setting | variable | type | default | what |",
            "|---|---|---|---|---|",
            *rows,
            "",
        ]
    )
