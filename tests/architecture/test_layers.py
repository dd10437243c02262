"""The floors of the package: each module imports only the floors below it (or its own).

Read from the source with ast, so a lazy import inside a function counts too. The rules are the
ones each package's ``__init__`` docstring states.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "oipcodec"

FOUNDATION = {"_deprecated", "_version", "datatypes", "errors", "limits", "types"}
KERNEL_INTERNALS = {"_native", "_pure", "_shared"}
CODECS = {"raw", "rest", "pb", "proto", "sharedmem", "compression", "trtis_v1", "v1", "graphpipe"}

# floor of a module (by its first component under oipcodec) -> what it may import
ALLOWED: dict[str, set[str]] = {
    **{name: FOUNDATION for name in FOUNDATION},
    "_shared": FOUNDATION | {"_shared"},
    "_native": FOUNDATION | {"_shared", "_native"},
    "_pure": FOUNDATION | {"_shared", "_pure"},
    "kernels": {"_native", "_pure"},
    # The codecs use the buffer helpers and the protobuf varint of the kernels' shared layer.
    **{name: FOUNDATION | CODECS | {"kernels", "_shared"} for name in CODECS},
    "server": FOUNDATION | CODECS | {"kernels", "server"},
    "client": FOUNDATION | CODECS | {"kernels", "client"},
    "testing": FOUNDATION | CODECS | {"kernels", "server", "client", "testing"},
    "compat": FOUNDATION | CODECS | {"kernels", "server", "compat"},
}


def _floor(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[0]


def _imported(tree: ast.AST) -> set[str]:
    """The oipcodec components a module imports (``oipcodec.server.http`` -> ``server``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "oipcodec":
                found.update(alias.name for alias in node.names)
                continue
            names = [node.module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "oipcodec" and len(parts) > 1:
                found.add(parts[1])
    return found


SOURCES = sorted(p for p in SRC.rglob("*") if p.suffix in (".py", ".pyx") and "_pb2" not in p.name)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_stay_below(path: Path) -> None:
    floor = _floor(path)
    if floor not in ALLOWED:  # the top: bench, cli, __init__, __main__
        return
    text = path.read_text()
    if path.suffix == ".pyx":  # Cython: the Python-level imports, read with a pattern
        imported = set(
            re.findall(r"^(?:from|import) oipcodec\.(\w+)[\w.]* (?:import|$)", text, re.M)
        )
    else:
        imported = _imported(ast.parse(text))
    imported -= {floor}
    # ``from oipcodec import datatypes, kernels`` names modules; anything else (a re-exported
    # kernel name such as ``flatten``) belongs to the facade.
    imported = {name if (SRC / name).exists() or (SRC / f"{name}.py").exists() else "kernels"
                for name in imported}  # fmt: skip
    allowed = ALLOWED[floor] | NATIVE_CORES.get(path.relative_to(SRC).as_posix(), set())
    assert imported <= allowed, sorted(imported - allowed)


#: Modules above the kernels that wrap a compiled core which is not a kernel (no pure twin,
#: so not behind the facade): the native HTTP/1.1 connection.
NATIVE_CORES = {"server/http11/native.py": {"_native"}}


def _private_names(tree: ast.AST, floor: str) -> list[str]:
    """``_names`` a module imports from another floor's module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "oipcodec" or (len(parts) > 1 and parts[1] == floor):
                continue
            found += [
                f"{node.module}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.endswith("__")
            ]
    return found


@pytest.mark.parametrize(
    "path", [p for p in SOURCES if p.suffix == ".py"], ids=lambda p: str(p.relative_to(SRC))
)
def test_no_private_name_is_imported_from_another_floor(path: Path) -> None:
    assert _private_names(ast.parse(path.read_text()), _floor(path)) == []


def test_a_lazy_upward_import_is_seen() -> None:
    tree = ast.parse("def f():\n    from oipcodec.client import HttpClient\n")
    assert _imported(tree) == {"client"}
    assert not _imported(tree) <= ALLOWED["server"]
    tree = ast.parse("from oipcodec.types import _carries\n")
    assert _private_names(tree, "_shared") == ["oipcodec.types._carries"]


def test_sources_were_found() -> None:
    if not SRC.is_dir():
        pytest.skip("sources are not next to the tests (an installed wheel)")
    assert len(SOURCES) > 40


# ------------------------------------------------------------------ the server's rooms

SERVER = SRC / "server"
ROOMS = ("frontends", "h2", "http11", "inference", "runtime")
SHARED_FRONTEND_HELPERS = ("oipcodec.server.frontends._asgi", "oipcodec.server.frontends._grpc")
#: The native HTTP/1.1 front end's routes: the transport module that knows the REST app, and
#: the fused inference step it runs for small JSON requests.
FAST_PATH = "oipcodec.server.http11.fastpath"
REST_APP = "oipcodec.server.frontends.rest_frontend"
FUSED_STEP = "oipcodec.server.inference.fused"


def _room(module: str) -> str:
    """The room of a module of oipcodec.server: ``frontends``, ``h2``, ``http11``, ``inference``,
    ``runtime``, ``core`` (the flat modules) or ``facade`` (the package itself)."""
    parts = module.split(".")
    if len(parts) == 2:
        return "facade"
    return parts[2] if parts[2] in ROOMS else "core"


def _server_imports(tree: ast.AST) -> set[str]:
    """The modules of oipcodec.server a module imports (lazy ones too), dotted."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("oipcodec.server"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not node.module.startswith("oipcodec.server"):
                continue
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                relative = Path(*whole.split(".")[1:])
                is_module = (SRC / relative).is_dir() or (SRC / f"{relative}.py").exists()
                found.add(whole if is_module else node.module)
    return found


def _may_import(module: str, target: str) -> bool:
    """The rule between two modules of the server (or a module above it and the server)."""
    room, goes_to = _room(module), _room(target)
    if not module.startswith("oipcodec.server"):
        # testing runs servers through the runtime; compat embeds front ends elsewhere
        # (Ray Serve, an ASGI mount) and is a composition root of its own.
        if module == "oipcodec.testing":
            return goes_to in ("facade", "core", "runtime")
        return True
    if module == FAST_PATH:  # the native transport's one bridge to the REST app it answers for
        return goes_to in ("core", "http11") or target in (
            REST_APP,
            FUSED_STEP,
            *SHARED_FRONTEND_HELPERS,
        )
    if room == "http11":  # the transport knows no server: it could be any ASGI app's
        return goes_to == "http11"
    if room == "h2":  # the gRPC transport: any grpcio handler's, the core's shared pieces only
        return goes_to in ("core", "h2")
    if room == "core":
        return goes_to == "core"
    if room == "inference":  # the one inference step: the core below it, no front end above
        return goes_to in ("core", "inference")
    if room == "frontends":  # the core, the inference step, its own module, the shared helpers
        return goes_to in ("core", "inference") or target in (module, *SHARED_FRONTEND_HELPERS)
    return True  # runtime and the facade compose the rest


SERVER_SOURCES = [p for p in SOURCES if p.suffix == ".py"]


@pytest.mark.parametrize("path", SERVER_SOURCES, ids=lambda p: str(p.relative_to(SRC)))
def test_the_server_rooms_import_only_downward(path: Path) -> None:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    module = ".".join(parts)
    imported = _server_imports(ast.parse(path.read_text())) - {module}
    refused = sorted(t for t in imported if not _may_import(module, t))
    assert refused == [], f"{module} imports {refused}"


def test_the_server_rooms_are_there() -> None:
    if not SRC.is_dir():
        pytest.skip("sources are not next to the tests (an installed wheel)")
    for room in ROOMS:
        assert (SERVER / room / "__init__.py").is_file(), room
    assert _may_import("oipcodec.server.runtime.apps", "oipcodec.server.frontends.rest_frontend")
    assert not _may_import(
        "oipcodec.server.frontends.rest_frontend", "oipcodec.server.frontends.trtis_frontend"
    )
    assert not _may_import("oipcodec.server.frontends.rest_frontend", "oipcodec.server.runtime")
    assert not _may_import("oipcodec.server.frontends.rest_frontend", "oipcodec.server.http11")
    assert not _may_import("oipcodec.server.registry", "oipcodec.server.frontends.grpc_frontend")
    assert not _may_import("oipcodec.server.http11.protocol", "oipcodec.server.metadata")
    assert _may_import(FAST_PATH, REST_APP)
    assert not _may_import("oipcodec.server.http11.protocol", REST_APP)
    assert _may_import("oipcodec.server.h2.grpc_server", "oipcodec.server.resumed")
    assert not _may_import("oipcodec.server.h2.grpc_server", "oipcodec.server.runtime.sockets")
    assert not _may_import("oipcodec.server.h2.call_context", "oipcodec.server.frontends._grpc")
    assert not _may_import(FAST_PATH, "oipcodec.server.runtime.apps")
    assert not _may_import("oipcodec.testing", "oipcodec.server.frontends.rest_frontend")
    inference = "oipcodec.server.inference.pipeline"
    assert _may_import(inference, "oipcodec.server.registry")
    assert _may_import(inference, "oipcodec.server.inference.batching")
    assert _may_import("oipcodec.server.frontends.grpc_frontend", inference)
    for above in ("frontends.rest_frontend", "http11.protocol", "runtime.apps"):
        assert not _may_import(inference, f"oipcodec.server.{above}")
    assert not _may_import("oipcodec.server.registry", inference)


def test_module_names_are_unique_across_the_package() -> None:
    """A name says which module it is (three modules were named v1.py): no two modules of
    the package share a file name, apart from ``__init__`` and the kernels' twins (the same
    module in _native, _pure and _shared on purpose)."""
    seen: dict[str, list[str]] = {}
    for path in SOURCES:
        if path.stem != "__init__" and _floor(path) not in KERNEL_INTERNALS:
            seen.setdefault(path.stem, []).append(str(path.relative_to(SRC)))
    shared = {name: where for name, where in seen.items() if len(where) > 1}
    allowed = {"errors", "v1", "graphpipe"}  # renamed on the api branch (issue 33)
    assert set(shared) <= allowed, shared
