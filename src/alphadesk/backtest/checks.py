"""Static checks on strategy code before it runs: a first filter, not the security boundary.

Generated or user-written strategy code must parse, define exactly one Backtrader strategy
(a ``bt.Strategy`` subclass) and import only modules of an allow-list. The check reads the
source's names and attribute names, so it refuses what it can see: dunder names and
attributes (``__subclasses__``, ``__globals__``, ``__builtins__``), dynamic code (``eval``,
``exec``, ``compile``, ``__import__``), file access (``open``, ``pandas.read_*``,
``numpy.load``), modules that allowed packages re-export (``bt.os``, ``bt.sys``), and
``getattr``/``setattr``/``hasattr`` other than called directly with a literal name that
passes the same rules (so not ``functools.reduce(getattr, ...)`` nor ``g = getattr``).

It does not follow values: Python's reflection is too wide for a reading of the source
to prove that no object leads to ``os``, and it does not try. Code that passes still runs
only inside the sandbox (:mod:`.sandbox`), which is what contains hostile code, and its
figures are recomputed outside it; the check exists to give a model or a user a clear,
early reason.
"""

from __future__ import annotations

import ast
import re
import threading
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ALLOWED_MODULES",
    "MAX_CODE_BYTES",
    "CodeCheck",
    "Finding",
    "check_strategy_code",
]

# CPython 3.11 before 3.11.8 corrupts its AST state when two threads parse at once
# ("AST constructor recursion depth mismatch"); variants are checked from worker threads.
_PARSING = threading.Lock()

#: Top-level modules strategy code may import (their submodules too, unless refused below).
ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "backtrader",
        "bisect",
        "collections",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "heapq",
        "itertools",
        "math",
        "numpy",
        "pandas",
        "statistics",
        "talib",
        "typing",
    }
)
MAX_CODE_BYTES = 200_000

# Submodules of allowed packages that load native code, run compilers or touch files.
_REFUSED_SUBMODULES = (
    *("numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing"),
    *("pandas.io", "backtrader.feeds", "backtrader.stores", "backtrader.plot"),
)
_REFUSED_CALLS = frozenset(
    {
        "__import__",
        "breakpoint",
        "compile",
        "delattr",
        "eval",
        "exec",
        "exit",
        "globals",
        "help",
        "input",
        "locals",
        "memoryview",
        "open",
        "quit",
        "vars",
    }
)
_ATTRIBUTE_CALLS = frozenset({"getattr", "setattr", "hasattr"})
_ALLOWED_DUNDERS = frozenset({"__init__", "__name__", "__class__", "__doc__"})
# Attributes that read or write files, or run things, on numpy, pandas and Backtrader objects,
# and reflection reached as an attribute (``functools.reduce``'s getattr under another module).
_REFUSED_ATTRIBUTES = frozenset(
    {
        *("getattr", "setattr", "hasattr", "delattr", "attrgetter", "methodcaller"),
        *("eval", "query"),  # pandas evaluates expressions (attribute access included)
        "Cerebro",
        "ctypeslib",
        "f2py",
        "feeds",
        "fromfile",
        "genfromtxt",
        "load",
        "loadtxt",
        "memmap",
        "plot",
        "save",
        "savetxt",
        "savez",
        "savez_compressed",
        "stores",
        "tofile",
        "to_clipboard",
        "to_csv",
        "to_excel",
        "to_feather",
        "to_hdf",
        "to_parquet",
        "to_pickle",
        "to_sql",
        "to_stata",
        "writer",
        "WriterFile",
    }
)
# Modules that allowed packages re-export as attributes (``bt.sys``, ``bt.os``, ``pd.io``)
# and the attributes of frames, generators and tracebacks that lead back to globals.
_REFUSED_ATTRIBUTES |= {  # (a strategy's own `self.signal` stays allowed)
    *("os", "sys", "io", "subprocess", "builtins", "importlib", "ctypes", "socket"),
    *("pickle", "marshal", "shutil", "pathlib", "posix", "inspect", "gc"),
    *("threading", "multiprocessing", "warnings", "linecache", "types"),
    *("gi_frame", "gi_code", "cr_frame", "ag_frame", "tb_frame", "tb_next", "f_back"),
    *("f_globals", "f_locals", "f_builtins", "f_code", "co_code", "func_globals"),
}
_DUNDER = re.compile(r"__\w+__")
_ALLOWED_TOP_LEVEL = (
    ast.Import,
    ast.ImportFrom,
    ast.ClassDef,
    ast.FunctionDef,
    ast.Assign,
    ast.AnnAssign,
    ast.Pass,
)

Rule = Literal["syntax", "size", "import", "call", "attribute", "name", "string", "structure"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason the code may not run.

    Attributes:
        rule: Which rule: ``syntax``, ``size``, ``import``, ``call``, ``attribute``,
            ``name``, ``string`` (a dunder name hidden in a string) or ``structure``
            (not exactly one strategy, or statements that run at import).
        message: What is wrong and how to fix it.
        line: 1-based line, when known.
        column: 0-based column, when known.
    """

    rule: Rule
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.message}"


@dataclass(frozen=True, slots=True)
class CodeCheck:
    """The verdict on a piece of strategy code.

    Attributes:
        findings: Every problem found, in source order (empty when the code may run).
        strategy: Name of the one strategy class it defines, when it defines exactly one.
    """

    findings: tuple[Finding, ...]
    strategy: str | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self, limit: int = 5) -> str:
        """The first ``limit`` findings on one line each."""
        lines = [str(f) for f in self.findings[:limit]]
        more = len(self.findings) - limit
        if more > 0:
            lines.append(f"... and {more} more")
        return "\n".join(lines)


def check_strategy_code(code: str) -> CodeCheck:
    """Check strategy code statically (see the module docstring for the rules).

    Args:
        code: Python source that should define one ``backtrader.Strategy`` subclass.

    Returns:
        The findings (none when the code may run in the sandbox) and the strategy's name.
    """
    if len(code.encode("utf-8", "replace")) > MAX_CODE_BYTES:
        message = f"the code is over {MAX_CODE_BYTES:,} bytes; write a shorter strategy"
        return CodeCheck((Finding("size", message),))
    try:
        with _PARSING:
            tree = ast.parse(code, filename="<strategy>")
    except SyntaxError as exc:
        message = f"syntax error: {exc.msg}"
        return CodeCheck((Finding("syntax", message, exc.lineno, exc.offset),))
    # A `if __name__ == "__main__":` block (to run the file on its own) never runs in the
    # sandbox, where the module has another name: it is not checked.
    tree.body = [node for node in tree.body if not _is_main_guard(node)]
    visitor = _Visitor()
    visitor.visit(tree)
    findings = visitor.findings + _top_level(tree)
    strategies = _strategies(tree, visitor.backtrader_names, visitor.strategy_names)
    if len(strategies) != 1:
        found = ", ".join(c.name for c in strategies) or "none"
        findings.append(
            Finding(
                "structure",
                f"define exactly one backtrader Strategy subclass (found: {found}), "
                "e.g. `class MyStrategy(bt.Strategy):`",
            )
        )
    findings.sort(key=lambda f: (f.line or 0, f.column or 0))
    return CodeCheck(tuple(findings), strategies[0].name if len(strategies) == 1 else None)


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )


def _top_level(tree: ast.Module) -> list[Finding]:
    """Only definitions at module level: nothing may run while the module loads."""
    findings = []
    for index, node in enumerate(tree.body):
        docstring = (
            index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if docstring or isinstance(node, _ALLOWED_TOP_LEVEL):
            continue
        findings.append(
            Finding(
                "structure",
                f"a module-level {type(node).__name__.lower()} statement runs at import; "
                "keep only imports, constants, functions and the strategy class at the top level",
                node.lineno,
                node.col_offset,
            )
        )
    return findings


def _strategies(
    tree: ast.Module, backtrader: set[str], strategy_names: set[str]
) -> list[ast.ClassDef]:
    """The leaf classes deriving (directly or through local classes) from bt.Strategy."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    derived: set[str] = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name in derived:
                continue
            if any(_is_strategy(b, backtrader, strategy_names | derived) for b in cls.bases):
                derived.add(cls.name)
                changed = True
    parents = {
        b.id for cls in classes if cls.name in derived for b in cls.bases if isinstance(b, ast.Name)
    }
    return [c for c in classes if c.name in derived and c.name not in parents]


def _is_strategy(base: ast.expr, backtrader: set[str], strategy_names: set[str]) -> bool:
    if isinstance(base, ast.Name):
        return base.id in strategy_names
    return (
        isinstance(base, ast.Attribute)
        and base.attr in ("Strategy", "SignalStrategy")
        and isinstance(base.value, ast.Name)
        and base.value.id in backtrader
    )


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.backtrader_names: set[str] = set()  # aliases of the backtrader module
        self.strategy_names: set[str] = set()  # names bound to backtrader.Strategy
        self._called: set[int] = set()  # getattr & co. names seen as a direct call's function

    def _add(self, rule: Rule, message: str, node: ast.AST) -> None:
        line, column = getattr(node, "lineno", None), getattr(node, "col_offset", None)
        self.findings.append(Finding(rule, message, line, column))

    def _module_allowed(self, name: str, node: ast.AST) -> bool:
        top = name.split(".")[0]
        if top not in ALLOWED_MODULES:
            allowed = ", ".join(sorted(ALLOWED_MODULES - {"__future__"}))
            self._add("import", f"import of {name!r} is not allowed; allowed: {allowed}", node)
            return False
        if any(name == s or name.startswith(s + ".") for s in _REFUSED_SUBMODULES):
            self._add("import", f"import of {name!r} is not allowed (files or native code)", node)
            return False
        return True

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self._module_allowed(alias.name, node) and alias.name == "backtrader":
                self.backtrader_names.add(alias.asname or "backtrader")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            self._add("import", "relative imports are not allowed", node)
            return
        if not self._module_allowed(node.module, node):
            return
        for alias in node.names:
            if alias.name == "*":
                self._add("import", f"`from {node.module} import *` is not allowed", node)
            elif alias.name.startswith("__") and node.module != "__future__":
                self._add("import", f"importing {alias.name!r} is not allowed", node)
            elif alias.name in _REFUSED_ATTRIBUTES:
                self._add("import", f"importing {node.module}.{alias.name} is not allowed", node)
            elif node.module == "backtrader" and alias.name in ("Strategy", "SignalStrategy"):
                self.strategy_names.add(alias.asname or alias.name)
            elif not self._module_allowed(f"{node.module}.{alias.name}", node):
                continue

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _ATTRIBUTE_CALLS and id(node) not in self._called:
            self._add(
                "call",
                f"{node.id!r} may only be called directly, with a literal attribute name "
                "(not passed on, stored or applied by another function)",
                node,
            )
        elif node.id in _REFUSED_CALLS:
            self._add("call", f"{node.id!r} is not allowed in strategy code", node)
        elif _DUNDER.fullmatch(node.id) and node.id != "__name__":
            self._add("name", f"the name {node.id!r} is not allowed", node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("__") and node.attr not in _ALLOWED_DUNDERS:
            self._add("attribute", f"access to {node.attr!r} is not allowed", node)
        elif node.attr in _REFUSED_ATTRIBUTES or node.attr.startswith("read_"):
            self._add(
                "attribute",
                f"`.{node.attr}` reads or writes files, runs other code or reaches the "
                "interpreter; a strategy gets its bars from self.data",
                node,
            )
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTRIBUTE_CALLS:
            self._called.add(id(func))
            name = node.args[1] if len(node.args) >= 2 else None
            if (
                node.keywords
                or len(node.args) < 2
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                self._add("call", f"{func.id}() needs an object and a literal attribute name", node)
            elif not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                self._add("call", f"{func.id}() needs a literal attribute name", node)
            elif name.value.startswith(("_", "read_")) or name.value in _REFUSED_ATTRIBUTES:
                self._add("call", f"{func.id}() on {name.value!r} is not allowed", node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str | bytes):
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            hidden = _DUNDER.search(text)
            if hidden and hidden.group() not in ("__main__", "__name__"):
                self._add("string", f"the string mentions {hidden.group()!r}", node)

    def visit_Global(self, node: ast.Global) -> None:
        self._add("name", "`global` is not allowed in strategy code", node)
