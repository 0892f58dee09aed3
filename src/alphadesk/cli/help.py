"""Help that reads like a manual: flags as flags, choices as choices, values by what they are.

Typer labels every parameter with its Python type (``<bool>``, ``<list[str]>``, ``<str>``).
The root command group relabels each parameter of every command once, when it is built:
a flag shows no value, a choice shows its choices (``quick|standard|deep``), an argument is
named by itself, and a value shows its metavar (``DATE``) or a plain word for its type.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from typer.core import TyperArgument, TyperGroup

__all__ = ["ReadableHelpGroup", "type_label"]

_TYPE_WORDS = {"int": "N", "float": "NUMBER", "str": "TEXT", "Path": "PATH"}


class ReadableHelpGroup(TyperGroup):
    """The root command group: relabels the parameters of every command beneath it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _relabel(self)


# Typer ships its own copy of click, so parameters are matched by what they have, not by
# click's classes.
def type_label(param: Any, ctx: Any = None) -> str | None:
    """What the help shows after a parameter's name, or None for nothing."""
    if isinstance(param, TyperArgument):
        return None  # its name (SYMBOL...) already says what goes there
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.metavar:
        return str(param.metavar)
    described = getattr(param, "type_descriptor", None)
    if described is not None and described.is_choice:
        return "|".join(str(choice) for choice in described.choices or ())
    word = _TYPE_WORDS.get(param.bare_type(), "VALUE")
    return f"{word}..." if param.nargs != 1 else word


def _relabel(command: Any) -> None:
    for param in command.params:
        _label(param)
    make_help_option = command.get_help_option  # --help is made per context, on demand

    def help_option(ctx: Any) -> Any:
        return _label(make_help_option(ctx))

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        _relabel(sub)


def _label(param: Any) -> Any:
    if param is not None:
        # Typer's rich help asks each parameter for this label; no hook exists to set it.
        param.display_type_rich = partial(type_label, param)
    return param
