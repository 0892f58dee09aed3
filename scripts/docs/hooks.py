"""MkDocs hooks of the documentation site (``mkdocs.yml`` names this file).

- The CLI, HTTP API and settings references are generated from the code.
- The pictures are drawn by the code from the bundled data (``doc_pictures``).
- Every page's ``console check`` examples are run and compared (``checked_examples``).
- A page naming an option, path or setting the code does not have fails the build
  (``doc_names``), and so does a README link that leads to no page of the site.

Everything runs offline on the bundled data with the ``rules`` model.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import checked_examples
import doc_names
import doc_pictures
import doc_reference
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files

log = logging.getLogger("mkdocs.hooks.alphadesk")

_problems: list[str] = []
# A server rebuilding on each edit runs a page's examples again only when they changed.
_example_outputs: dict[str, str] = {}
# Commands (pictures, pages' examples) run at once: each is one process, mostly on a CPU.
_PARALLEL = min(4, os.cpu_count() or 1)
_README_LINK = re.compile(r"\]\((docs/[^)#\s]+)(#[^)\s]*)?\)")


@functools.cache
def _code() -> tuple[Any, dict[str, Any], Any]:
    import typer

    from alphadesk.api.app import create_app
    from alphadesk.cli.app import app
    from alphadesk.config import Settings

    with tempfile.TemporaryDirectory() as tmp:
        schema = create_app(Settings(data_dir=Path(tmp))).openapi()
    return typer.main.get_command(app), schema, Settings


@functools.cache
def _pictures() -> dict[str, bytes]:
    log.info("drawing the pictures from the bundled data")
    pngs, printed = doc_pictures.make_pictures()
    _example_outputs.update(printed)  # the pages whose examples these commands are
    return pngs


def _vocabulary() -> doc_names.Vocabulary:
    cli, schema, settings = _code()
    return doc_names.Vocabulary.from_code(cli, schema, settings)


def on_pre_build(config: Any) -> None:
    _problems.clear()


def on_files(files: Files, config: Any) -> Files:
    cli, schema, settings = _code()
    pages = {
        "reference/cli.md": doc_reference.cli_page(cli),
        "reference/http-api.md": doc_reference.openapi_page(schema),
        "reference/settings.md": doc_reference.settings_page(settings),
    }
    notice = Path(config.config_file_path).parent / "src/alphadesk/data/bundled/NOTICE.md"
    pages["data-sources.md"] = notice.read_text(encoding="utf-8")  # as the package ships it
    for uri, text in pages.items():
        files.append(File.generated(config, uri, content=text))
    for name, png in _pictures().items():
        files.append(File.generated(config, f"images/{name}", content=png))
    _run_all_examples(files, config)
    return files


def _run_all_examples(files: Files, config: Any) -> None:
    """Run every page's checked examples not already known, a few pages at a time (each
    in its own folder), so that each page then finds its outputs in the cache."""
    readme = Path(config.config_file_path).parent / "README.md"
    texts = [readme.read_text(encoding="utf-8")]
    texts += [f.content_string for f in files.documentation_pages() if not f.generated_by]
    sequences = {}
    for text in texts:
        commands = checked_examples.page_commands(text)
        key = checked_examples.sequence_key(commands)
        if commands and key not in _example_outputs:
            sequences[key] = commands
    if not sequences:
        return
    log.info("running the checked examples of %d pages", len(sequences))
    with ThreadPoolExecutor(max_workers=_PARALLEL) as pool:
        outputs = pool.map(checked_examples.run_sequence, sequences.values())
        _example_outputs.update(zip(sequences, outputs, strict=True))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    where = page.file.src_uri
    _problems.extend(f"{where}: {p}" for p in doc_names.check_names(markdown, _vocabulary()))
    if checked_examples.find_examples(markdown):
        failures = checked_examples.check_page(where, markdown, _example_outputs)
        _problems.extend(str(f) for f in failures)
    return checked_examples.strip_markers(markdown)


def _readme_problems(config: Any, files: Files) -> list[str]:
    readme = Path(config.config_file_path).parent / "README.md"
    text = readme.read_text(encoding="utf-8")
    problems = [f"README.md: {p}" for p in doc_names.check_names(text, _vocabulary())]
    problems += [str(f) for f in checked_examples.check_page("README.md", text, _example_outputs)]
    for target, anchor in _README_LINK.findall(text):
        uri = target.removeprefix("docs/")
        file = files.get_file_from_path(uri)
        if file is None or file.page is None:
            problems.append(f"README.md links to {target}, which is no page of the site")
        elif anchor and anchor[1:] not in _anchors(file.page.toc):
            problems.append(f"README.md links to {target}{anchor}: the page has no such heading")
    return problems


def _anchors(toc: Any) -> set[str]:
    found: set[str] = set()
    for item in toc:
        found.add(item.id)
        found |= _anchors(item.children)
    return found


def on_env(env: Any, config: Any, files: Files) -> Any:
    _problems.extend(_readme_problems(config, files))
    if _problems:
        raise PluginError("the documentation does not match the code:\n\n" + "\n\n".join(_problems))
    return env
