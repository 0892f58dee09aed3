"""The route of a request: the files of ours a command crosses to its first model call.

    python scripts/route.py desk NVDA
    python scripts/route.py ask "what's spy at"
    python scripts/route.py --frames desk NVDA     # each function of ours on the route

Runs ``alphadesk ARGS`` in this process, offline (the ``rules`` model, bundled data, a
temporary data folder: nothing is recorded in yours), and takes the call stack at the rules
model's first call (``RulesModel.request``). A coroutine's stack ends at the task running
it, so each task remembers the stack that created it, and the route is the chain of those
stacks down to the call. It prints the distinct files under ``src/alphadesk`` the route
crosses, in the order it first enters them, the model's own file last, and their count;
the command's own output is not shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
import tempfile
import traceback
from collections.abc import Coroutine, Generator
from pathlib import Path
from typing import Any

_Coro = Coroutine[Any, Any, Any] | Generator[Any, None, Any]

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "alphadesk"


class _Route:
    """The stack of the first model call, followed back through the tasks that led to it."""

    def __init__(self) -> None:
        self.origins: dict[asyncio.Task[Any], list[traceback.FrameSummary]] = {}
        self.stack: list[traceback.FrameSummary] | None = None

    def here(self) -> list[traceback.FrameSummary]:
        """The stack of this point, preceded by the stacks that created its task and those
        tasks' creators."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no running loop
            task = None
        stack = traceback.extract_stack()[:-2]
        if task is None:
            return stack
        # Within a task the stack begins with the loop running it, which its creator's
        # stack already holds: only what follows the loop's step is this task's own.
        steps = [i for i, frame in enumerate(stack) if _is_loop_step(frame)]
        return self.origins.get(task, []) + stack[steps[-1] + 1 if steps else 0 :]

    def task_factory(
        self, loop: asyncio.AbstractEventLoop, coro: _Coro, **kwargs: Any
    ) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        self.origins[task] = self.here()
        return task

    def frames(self) -> list[str]:
        """The route's frames in our files: ``file:line function``."""
        return [
            f"{name}:{frame.lineno} {frame.name}"
            for frame in self.stack or []
            if (name := _ours(frame.filename)) is not None
        ]

    def files(self) -> list[str]:
        """The files of ours on the route, each once, in the order it is first entered."""
        seen: list[str] = []
        for frame in self.stack or []:
            name = _ours(frame.filename)
            if name is not None and name not in seen:
                seen.append(name)
        return seen


def _is_loop_step(frame: traceback.FrameSummary) -> bool:
    return frame.name == "_run" and Path(frame.filename).parts[-2:] == ("asyncio", "events.py")


def _ours(filename: str) -> str | None:
    path = Path(filename).resolve()
    return path.relative_to(PACKAGE).as_posix() if path.is_relative_to(PACKAGE) else None


def trace(args: list[str]) -> _Route:
    """The route of ``alphadesk ARGS`` to its first model call.

    Raises:
        SystemExit: the command made no model call.
    """
    route = _Route()

    class Policy(asyncio.DefaultEventLoopPolicy):
        def new_event_loop(self) -> asyncio.AbstractEventLoop:
            loop = super().new_event_loop()
            loop.set_task_factory(route.task_factory)
            return loop

    from alphadesk.llm.rules import RulesModel

    request = RulesModel.request

    async def first_call(self: RulesModel, *a: Any, **kw: Any) -> Any:
        if route.stack is None:  # the model itself is the route's end
            code = request.__code__
            model = traceback.FrameSummary(code.co_filename, code.co_firstlineno, "request")
            route.stack = [*route.here(), model]
        return await request(self, *a, **kw)

    from alphadesk.cli.app import app

    asyncio.set_event_loop_policy(Policy())
    RulesModel.request = first_call  # type: ignore[method-assign]
    output = io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(output),
            contextlib.redirect_stderr(output),
            contextlib.suppress(SystemExit),
        ):
            app(args, prog_name="alphadesk")
    finally:
        RulesModel.request = request  # type: ignore[method-assign]
        asyncio.set_event_loop_policy(None)
    if route.stack is None:
        raise SystemExit(f"`alphadesk {' '.join(args)}` made no model call:\n{output.getvalue()}")
    return route


def main() -> None:
    args = sys.argv[1:]
    frames = args[:1] == ["--frames"]
    args = args[frames:]
    if not args:
        raise SystemExit(__doc__)
    with tempfile.TemporaryDirectory(prefix="alphadesk-route-") as data:
        for name in [k for k in os.environ if k.startswith("ALPHADESK_")]:
            del os.environ[name]  # offline: no model, data folder or provider of yours
        os.environ["ALPHADESK_DATA_DIR"] = data
        route = trace(args)
    files = route.files()
    print(f"alphadesk {' '.join(args)}: {len(files)} files to the model call")
    for number, name in enumerate(route.frames() if frames else files, 1):
        print(f"{number:>3}  {name}")


if __name__ == "__main__":
    main()
