"""The API reference as a user reads it: every object the pages of docs/api/ document (their
``:::`` directives, the members they show), with the docstrings mkdocstrings renders (griffe,
mkdocs.yml's numpy style, tools/griffe_docstrings.py).

A user scans a function's arguments in its ``Parameters`` section, one entry each, and reads
no maintainers' notes: an "Invariant:" or "Decision:" about the code is a comment in the code,
not a paragraph of the reference."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.peers import require_peer

griffe = require_peer("griffe")  # the docs extra's (mkdocstrings-python)

ROOT = Path(__file__).resolve().parents[2]
API_PAGES = ROOT / "docs" / "api"
if not API_PAGES.is_dir():  # the wheel tests run from copies of tests/ only
    pytest.skip("docs/ is not next to tests/", allow_module_level=True)

#: Not checked yet (none: every page follows the style).
NOT_YET: tuple[str, ...] = ()

#: The modules whose every documented function and class with arguments has a complete
#: ``Parameters`` section (the others still describe some arguments in prose).
PARAMETERS_COMPLETE = (
    "oipcodec.rest",
    "oipcodec.pb",
    "oipcodec.raw",
    "oipcodec.compression",
    "oipcodec.limits",
    "oipcodec.testing",
    "oipcodec.types",
    "oipcodec.datatypes",
    "oipcodec.errors",
    "oipcodec.kernels",
    "oipcodec._pure",
    "oipcodec.client",
    "oipcodec.graphpipe",
    "oipcodec.trtis_v1",
    "oipcodec.compat",  # the kernels' pages: the contracts of oipcodec._shared, both twins'
    "oipcodec.server.model",
    "oipcodec.server.model_config",
    "oipcodec.server.config",
    "oipcodec.server.runtime",
    "oipcodec.server.frontends",
    "oipcodec.server.repository",
    "oipcodec.server.demo",
    "oipcodec.server.inference.batching",
    # Not oipcodec.server.registry nor oipcodec.server.inference.pipeline: at the 600 lines a
    # server module may hold, some of their methods (ModelRegistry.serves, is_ready, metadata,
    # config, statistics_document; Pipeline.of, model, queues; Exchange.shared_memory, run,
    # sent) still describe their arguments in prose.
)

_NOTE = re.compile(r"(?:^|\n|[.;:] )(?:Invariants?|Decisions?):")
_DIRECTIVE = re.compile(r"^::: (\S+)((?:\n {4}.*)*)", re.MULTILINE)


def _directives() -> Iterator[tuple[str, list[str] | None]]:
    """Each ``::: path`` of the API pages with the members it shows (None: all public)."""
    for page in sorted(API_PAGES.glob("*.md")):
        for match in _DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            options = match.group(2)
            if re.search(r"^\s+members: false", options, re.MULTILINE):
                yield match.group(1), []
            elif listed := re.search(r"^\s+members:\n((?:\s+- \S+\n?)+)", options, re.MULTILINE):
                yield match.group(1), re.findall(r"- (\S+)", listed.group(1))
            else:
                yield match.group(1), None


def _documented() -> list[griffe.Object]:
    """The objects the reference renders (public names, a docstring, no submodule of a
    module: those have directives of their own), as griffe loads them for mkdocs."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        from griffe_docstrings import Docstrings
    finally:
        sys.path.remove(str(ROOT / "tools"))
    loader = griffe.GriffeLoader(
        extensions=griffe.load_extensions(Docstrings),
        search_paths=[str(ROOT / "src")],
        docstring_parser=griffe.Parser.numpy,
    )
    loader.load("oipcodec")
    found: dict[str, griffe.Object] = {}

    def walk(obj: griffe.Object, members: list[str] | None, top: bool) -> None:
        if top or obj.docstring is not None:
            found.setdefault(obj.path, obj)
        if members == []:
            return
        for name, member in obj.members.items():
            if name.startswith("_") or member.is_alias or (top and member.is_module):
                continue
            if members is None or name in members:
                walk(member, None, False)

    for path, members in _directives():
        walk(loader.modules_collection[path], members, True)
    return list(found.values())


DOCUMENTED = _documented()


def _checked(objects: list[griffe.Object]) -> list[griffe.Object]:
    return [o for o in objects if not o.path.startswith(NOT_YET)]


def _arguments(obj: griffe.Object) -> list[str]:
    """The arguments a user passes: a function's, or a class's ``__init__``'s."""
    if obj.is_function or (obj.is_class and "__init__" in obj.members):
        return [p.name for p in obj.parameters if p.name not in ("self", "cls")]
    return []


def _documented_arguments(obj: griffe.Object) -> list[str]:
    """The names of the ``Parameters`` entries; for a dataclass also its fields that carry a
    docstring of their own (rendered as the class's attributes)."""
    entries = [
        parameter.name.lstrip("*")
        for section in obj.docstring.parse(griffe.Parser.numpy)
        if section.kind is griffe.DocstringSectionKind.parameters
        for parameter in section.value
    ]
    if "dataclass" in obj.labels:
        members = obj.members
        entries += [a for a in _arguments(obj) if a in members and members[a].docstring]
    return entries


def test_the_pages_document_the_public_modules() -> None:
    paths = {o.path for o in DOCUMENTED}
    assert {"oipcodec.rest.decode_request", "oipcodec.client.http_client.HttpClient"} <= paths
    assert "oipcodec.client._pool" not in paths


def test_no_maintainers_notes_in_the_reference() -> None:
    notes = [
        o.path for o in _checked(DOCUMENTED) if o.docstring and _NOTE.search(o.docstring.value)
    ]
    assert not notes, f"'Invariant:' / 'Decision:' paragraphs (make them comments): {notes}"


@pytest.mark.parametrize(
    "text",
    [
        "What it does.\n\nInvariant: the layers import downward.",
        "Reads the body. Invariants: raw bytes become views.",
        "Decision: the pool runs on sockets.",
    ],
)
def test_a_maintainers_note_is_found(text: str) -> None:
    assert _NOTE.search(text)


def test_parameters_sections_name_only_real_arguments() -> None:
    wrong = {
        o.path: sorted(set(_documented_arguments(o)) - set(_arguments(o)))
        for o in _checked(DOCUMENTED)
        if o.docstring and (o.is_function or o.is_class)
    }
    wrong = {path: names for path, names in wrong.items() if names}
    assert not wrong, f"Parameters sections naming no argument of the signature: {wrong}"


@pytest.mark.parametrize("module", PARAMETERS_COMPLETE)
def test_every_argument_has_its_entry(module: str) -> None:
    missing = {
        o.path: [a for a in _arguments(o) if a not in _documented_arguments(o)]
        for o in DOCUMENTED
        if o.path.startswith(module + ".") and o.docstring and (o.is_function or o.is_class)
    }
    missing = {path: names for path, names in missing.items() if names}
    assert not missing, f"arguments without a Parameters entry: {missing}"
