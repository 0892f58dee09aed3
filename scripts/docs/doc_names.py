"""Names a page may not invent: every ``--option`` of an ``alphadesk`` command, every HTTP
path and every ``ALPHADESK_*`` setting a page names must exist in the code (the Typer app,
the app's OpenAPI schema, the settings class); every TOML block must be valid settings."""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

__all__ = ["Vocabulary", "check_names"]

_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_COMMAND = re.compile(r"(?<![\w/:.-])alphadesk((?:\s+[a-z][a-z-]*)*)(.*)")
_DEV = re.compile(r"dev\.py\s+(\w+)(.*)")
_METHOD_PATH = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE)\s+(/[\w{}/.\-]*)")
_CURL_PATH = re.compile(r"(?:localhost|127\.0\.0\.1)(?::\d+)?(/[\w{}/.\-]*)")
_SETTING = re.compile(r"\bALPHADESK_[A-Z0-9_]*[A-Z0-9<]")
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_FENCE = re.compile(r"^([ ]*)```([^\n]*)\n(.*?)^\1```", re.M | re.S)
_SHELL_BREAK = re.compile(r"\s(?:\||&&|;|&|>|2>)\s?")
# FastAPI's own pages, served beside the routes.
_BUILTIN_PATHS = ("/docs", "/redoc", "/openapi.json")
# dev.py's commands and their options (dev.py is plain Python, not the Typer app).
DEV_COMMANDS = {"demo": set(), "test": set(), "setup": set(), "docs": {"--serve"}}


@dataclass
class Vocabulary:
    """What exists: commands and their options, HTTP paths, settings."""

    commands: dict[tuple[str, ...], set[str]]
    paths: list[str]
    settings: type[BaseModel]
    env_vars: set[str] = field(default_factory=set)

    @classmethod
    def from_code(cls, cli: Any, openapi: dict[str, Any], settings: type[BaseModel]) -> Vocabulary:
        commands: dict[tuple[str, ...], set[str]] = {}
        env_vars: set[str] = set()

        def walk(command: Any, path: tuple[str, ...]) -> None:
            options = {"--help"}
            for param in command.params:
                if param.param_type_name == "option":
                    options.update(
                        o for o in [*param.opts, *param.secondary_opts] if o.startswith("--")
                    )
                    envvar = param.envvar
                    env_vars.update([envvar] if isinstance(envvar, str) else envvar or [])
            commands[path] = options
            if hasattr(command, "commands"):
                for name, sub in command.commands.items():
                    walk(sub, (*path, name))

        walk(cli, ())
        return cls(commands, [*openapi["paths"], *_BUILTIN_PATHS], settings, env_vars)

    def options_under(self, path: tuple[str, ...]) -> set[str]:
        """Options of a command and of every command under it (``portfolio buy|sell``)."""
        found: set[str] = set()
        for name, options in self.commands.items():
            if name[: len(path)] == path:
                found |= options
        return found

    def all_options(self) -> set[str]:
        return self.options_under(())

    def path_exists(self, path: str) -> bool:
        path = path.rstrip(".") or "/"
        for known in self.paths:
            pattern = re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(known))
            if re.fullmatch(pattern, path):
                return True
        return False

    def api_prefixes(self) -> set[str]:
        return {p.split("/")[1] for p in self.paths if p.count("/") >= 1}

    def setting_exists(self, name: str) -> bool:
        if name in self.env_vars:
            return True
        prefix = name.endswith("<")
        parts = name.removesuffix("<").removeprefix("ALPHADESK_").lower().split("__")
        parts = [p for p in parts if p] if prefix else parts
        model: Any = self.settings
        for part in parts:
            fields = getattr(model, "model_fields", None)
            if fields is None:  # a mapping (per-agent models): any key
                return True
            if part not in fields:
                return False
            annotation = fields[part].annotation
            model = next(
                (
                    a
                    for a in (annotation, *getattr(annotation, "__args__", ()))
                    if isinstance(a, type) and issubclass(a, BaseModel)
                ),
                dict if "dict" in str(annotation) else None,
            )
            if model is None:
                return part == parts[-1]
        return True


def _command_problems(line: str, vocab: Vocabulary) -> Iterable[str]:
    for match in _COMMAND.finditer(line):
        words = match.group(1).split()
        path: tuple[str, ...] = ()
        rest = words
        while rest and (*path, rest[0]) in vocab.commands:
            path, rest = (*path, rest[0]), rest[1:]
        tail = _SHELL_BREAK.split(" ".join(rest) + match.group(2))[0]
        known = vocab.commands[path]
        # a group followed by a word it does not know (``portfolio buy|sell``): any of its commands
        if (
            rest
            and path != ()
            and not any(k[: len(path) + 1] == (*path, rest[0]) for k in vocab.commands)
        ):
            known = vocab.options_under(path)
        for option in _OPTION.findall(tail):
            if option not in known:
                where = "alphadesk " + " ".join(path) if path else "alphadesk"
                yield f"`{where}` has no option {option} (in: {line.strip()[:120]})"
    for match in _DEV.finditer(line):
        command, tail = match.group(1), match.group(2)
        if command not in DEV_COMMANDS:
            yield f"dev.py has no command {command!r} (in: {line.strip()[:120]})"
            continue
        for option in _OPTION.findall(_SHELL_BREAK.split(tail)[0]):
            if option not in DEV_COMMANDS[command]:
                yield f"`dev.py {command}` has no option {option}"


def _path_problems(text: str, vocab: Vocabulary, *, bare: bool) -> Iterable[str]:
    paths = _METHOD_PATH.findall(text)
    if "curl" in text:
        paths += _CURL_PATH.findall(text)
    if (
        bare
        and text.startswith("/")
        and text[1:].split("/")[0].split("?")[0] in vocab.api_prefixes()
    ):
        paths.append(re.split(r"[?\s]", text)[0])
    for path in paths:
        if not vocab.path_exists(path.split("?")[0]):
            yield f"the HTTP API has no path {path} (see the OpenAPI schema)"


def _keys(data: dict[str, Any], prefix: str = "") -> Iterable[str]:
    for key, value in data.items():
        if isinstance(value, dict) and value:
            yield from _keys(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def _toml_problems(block: str, vocab: Vocabulary) -> Iterable[str]:
    # Walked key by key: the settings' sections ignore a key they do not know.
    try:
        data = tomllib.loads(block)
    except tomllib.TOMLDecodeError as error:
        yield f"a TOML block does not parse: {error}"
        return
    for key in _keys(data):
        if not vocab.setting_exists("ALPHADESK_" + key.upper().replace(".", "__")):
            yield f"no setting {key} (in a TOML block)"


_IMPORT = re.compile(r"^\s*from (alphadesk[\w.]*) import ([\w, ]+)$", re.M)


def _import_problems(block: str) -> Iterable[str]:
    for module_name, names in _IMPORT.findall(block):
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            yield f"a Python example imports {module_name}, which does not import: {error}"
            continue
        for name in (n.strip() for n in names.split(",")):
            if name and not hasattr(module, name):
                yield f"a Python example imports {name} from {module_name}, which has none"


def check_names(markdown: str, vocab: Vocabulary) -> list[str]:
    """What a page names that does not exist, one message each."""
    problems: list[str] = []
    for fence in _FENCE.finditer(markdown):
        info, body = fence.group(2).strip(), fence.group(3)
        if info.startswith("toml"):
            problems += _toml_problems(body, vocab)
        if info.startswith("python"):
            problems += _import_problems(body)
        for line in body.splitlines():
            problems += _command_problems(line, vocab)
            problems += _path_problems(line, vocab, bare=False)
    prose = _FENCE.sub("", markdown)
    for span in _INLINE.findall(prose):
        problems += _command_problems(span, vocab)
        problems += _path_problems(span, vocab, bare=True)
        if span.startswith("--"):
            problems += [
                f"no alphadesk command has an option {option}"
                for option in _OPTION.findall(span.split()[0])
                if option not in vocab.all_options()
            ]
    for name in set(_SETTING.findall(markdown)):
        if not vocab.setting_exists(name):
            problems.append(
                f"no setting or variable {name.rstrip('<')} (the settings class has none)"
            )
    return sorted(set(problems))
