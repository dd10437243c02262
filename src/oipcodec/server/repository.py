"""A model repository on disk: one folder per model, laid out as Triton and MLServer users know
(docs/model-repository.md shows the layout and the configuration fields read).

``model.py`` offers one model: ``MODEL``, else ``MODELS`` (holding one), else the one
:class:`Model` subclass of the file made as ``Cls(name=<folder>, version=<version folder>)``;
the folder names the model and the highest numbered version folder its version, whatever the
code declares. The configuration is Triton's (``config.json`` or ``config.pbtxt``), fields it
does not read ignored with a warning.
"""

# Invariant: every read imports the code afresh, under a package name of its own compiled from
# the source (never from ``__pycache__``, whose timestamps cannot tell two edits in one second
# apart), so a load picks up an edited ``model.py`` and the files beside it.

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import inspect
import itertools
import logging
import os
import re
import sys
import sysconfig
import threading
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from oipcodec.errors import RepositoryError
from oipcodec.server.model import Model
from oipcodec.server.model_config import CONFIG_FILES, apply_config, read_config

__all__ = [
    "CONFIG_FILES",
    "MODEL_CONTROL_MODES",
    "MAX_NAME_BYTES",
    "MODEL_FILE",
    "ModelRepository",
    "RepositoryError",
    "models_offered",
    "where_raised",
]

log = logging.getLogger("oipcodec.server")

#: The file of a model folder (or of its version folder) that holds the model's code.
MODEL_FILE = "model.py"
#: The configuration files a model folder may hold (one of them).
#: Triton's model control modes that oipcodec has: ``none`` (every model loaded at start,
#: load and unload refused) and ``explicit`` (the models named at start, then load/unload).
MODEL_CONTROL_MODES = ("none", "explicit")

#: The longest model name, in bytes of UTF-8: a folder name's limit on Linux file systems.
MAX_NAME_BYTES = 255

_PREFIX = "oipcodec_repository_"
_imports = itertools.count(1)


def models_offered(module: ModuleType, where: str) -> list[Model]:
    """The models a module offers in its ``MODELS``: an iterable of :class:`Model` instances
    or a callable returning one (``--model-module`` and a repository's ``model.py``).

    Parameters
    ----------
    module
        The imported module.
    where
        Its name as the user gave it, named by the errors.

    Raises
    ------
    ValueError
        With a one-line message naming ``where`` for a module without ``MODELS``, a
        ``MODELS()`` that raises, an empty one, and one holding anything but Model instances
        (a class instead of an instance says so).
    """
    offered = getattr(module, "MODELS", None)
    if offered is None:
        raise ValueError(
            f"module {where!r} has no MODELS: define MODELS = [MyModel(), ...] "
            "(or a function MODELS() returning them)"
        )
    try:
        if callable(offered):
            offered = offered()
        models = list(offered)
    except Exception as exc:
        raise ValueError(f"{where}.MODELS failed: {where_raised(exc)}") from None
    if not models:
        raise ValueError(f"{where}.MODELS holds no models")
    for model in models:
        if isinstance(model, type) and issubclass(model, Model):
            raise ValueError(
                f"{where}.MODELS holds the class {model.__name__}, not an instance: write "
                f"{model.__name__}()"
            )
        if not isinstance(model, Model):
            raise ValueError(f"{where}.MODELS holds {model!r}, not an oipcodec.server.Model")
    return models


def where_raised(exc: BaseException) -> str:
    """An exception in one line: its type, its message, and the deepest place of the user's
    code it came from (a model module's line, not oipcodec's, Python's or an installed
    package's: an unknown datatype is raised in oipcodec.datatypes).

    Parameters
    ----------
    exc
        The exception, with its traceback.
    """
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):  # the message already names the file and line
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    installed = {sysconfig.get_path(key) for key in ("stdlib", "purelib", "platlib")}
    installed.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    theirs = [
        f
        for f in frames
        if not f.filename.startswith("<")
        and not any(os.path.abspath(f.filename).startswith(root + os.sep) for root in installed)
    ]
    if theirs or frames:
        frame = (theirs or frames)[-1]
        text += f" ({frame.filename}, line {frame.lineno})"
    return text


@dataclass
class Loaded:
    """What one read of a model folder produced.

    Parameters
    ----------
    name
        The model's name (its folder's).
    models
        The models made.
    package
        The package its code was imported under (to be released with
        :meth:`ModelRepository.replace`).
    """

    name: str
    models: list[Model]
    package: str = field(repr=False)


class ModelRepository:
    """The model folders of a repository and its model control mode.

    :meth:`read` imports a model's code afresh; the
    :class:`~oipcodec.server.registry.ModelRegistry` decides when, and keeps what it loaded.

    Parameters
    ----------
    root
        The repository's folder.
    control
        The model control mode, one of :data:`MODEL_CONTROL_MODES`.
    load
        In ``explicit`` mode, the models loaded at start (``"*"``: all of them).
    allow_symlinks
        Read model folders, version folders and code that are symlinks leading out of
        ``root`` (refused otherwise, with a reason saying so).
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        control: str = "none",
        load: Iterable[str] = (),
        *,
        allow_symlinks: bool = False,
    ) -> None:
        self.allow_symlinks = allow_symlinks
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise ValueError(f"model repository {str(root)!r} is not a directory")
        if control not in MODEL_CONTROL_MODES:
            raise ValueError(
                f"model control must be one of {', '.join(MODEL_CONTROL_MODES)}, got {control!r}"
            )
        self.control = control
        self.load = tuple(load)
        self._current: dict[str, str] = {}  # model name -> package of the import in use
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<ModelRepository {str(self.root)!r} model control {self.control}>"

    def names(self) -> list[str]:
        """The model folders, sorted (hidden folders and ``__pycache__``-like ones left out)."""
        return sorted(
            entry.name
            for entry in self.root.iterdir()
            if entry.is_dir() and not entry.name.startswith((".", "_"))
        )

    def __contains__(self, name: object) -> bool:
        if not (isinstance(name, str) and _folder_name(name) and not name.startswith((".", "_"))):
            return False
        try:
            return (self.root / name).is_dir()
        except (OSError, ValueError):
            return False

    def version_of(self, name: str) -> str | None:
        """The version folder a model would be read from (``None``: none, or no such model
        folder).

        Parameters
        ----------
        name
            The model's name.
        """
        if name not in self:
            return None
        try:
            return _version_folder(self.root / name)[1]
        except OSError:
            return None

    def startup_names(self) -> list[str]:
        """The models to load at start: all in ``none`` mode (or with ``"*"``), else those of
        ``load`` in their order."""
        if self.control == "none" or "*" in self.load:
            return self.names()
        return list(dict.fromkeys(self.load))

    def read(self, name: str) -> Loaded:
        """Import the code of a model afresh and make its model, configured by its
        configuration file.

        Parameters
        ----------
        name
            The model's name (its folder's).

        Raises
        ------
        RepositoryError
            With a one-line reason (nothing of that import is then left in ``sys.modules``).
        """
        folder = self.root / name
        if name not in self:
            raise RepositoryError(f"no model folder {name[:MAX_NAME_BYTES]!r} in the repository")
        directory, version = _version_folder(folder)
        code = directory / MODEL_FILE
        if not code.is_file():
            raise RepositoryError(f"no {_relative(code, self.root)} (the model's code)")
        if not self.allow_symlinks:
            for path in (folder, directory, code):
                if not path.resolve().is_relative_to(self.root):
                    # The repository is all the code the server runs: a link out of it
                    # would run code the operator put elsewhere (Triton follows it).
                    raise RepositoryError(
                        f"{_relative(path, self.root)} is a symlink leading out of the model "
                        "repository; refused unless the server allows it "
                        "(--allow-repository-symlinks)"
                    )
        package = f"{_PREFIX}{next(_imports)}_{re.sub(r'[^0-9A-Za-z_]', '_', name)}"
        try:
            config = read_config(folder, name)
            module = _import_fresh(package, directory, code)
            model = _the_model(module, _relative(code, self.root), name, version)
            model.name = name
            if version is not None:
                model.version = version
            if config is not None:
                try:
                    apply_config(model, config[0], folder)
                except (ValueError, TypeError) as exc:
                    reason = str(exc).replace(f"{self.root}{os.sep}", "")
                    raise RepositoryError(f"{config[1]}: {reason}") from None
        except RepositoryError:
            _release(package)
            raise
        except Exception as exc:
            _release(package)
            message = " ".join(str(exc).split()) or "(no message)"
            # Paths as the repository knows them: the reason is shown to every client.
            message = message.replace(f"{self.root}{os.sep}", "")
            raise RepositoryError(
                f"{_relative(code, self.root)}: {type(exc).__name__}: {message}"
            ) from exc
        return Loaded(name, [model], package)

    def replace(self, name: str, loaded: Loaded | None) -> str | None:
        """Make an import the one in use for a model; returns the package of the previous one,
        for :meth:`release` once its model is unloaded (the requests in flight on it still
        run its code).

        Parameters
        ----------
        name
            The model's name.
        loaded
            What :meth:`read` returned; ``None``: no import is in use.
        """
        with self._lock:
            previous = self._current.pop(name, None)
            if loaded is not None:
                self._current[name] = loaded.package
        if previous is not None and loaded is not None and previous == loaded.package:
            return None
        return previous

    def release(self, package: str | None) -> None:
        """Forget an import.

        Parameters
        ----------
        package
            A package :meth:`replace` returned; ``None``: nothing to do.
        """
        if package is not None:
            _release(package)

    def discard(self, loaded: Loaded) -> None:
        """Release an import that will not be used (a read whose models were refused).

        Parameters
        ----------
        loaded
            What :meth:`read` returned.
        """
        if self._current.get(loaded.name) != loaded.package:
            _release(loaded.package)


def _relative(path: Path, root: Path) -> str:
    return str(path.relative_to(root))


def _folder_name(name: str) -> bool:
    """Whether ``name`` can name a folder of the repository: one path component, at most
    :data:`MAX_NAME_BYTES` bytes of UTF-8 (a longer one fails every file system call)."""
    if not name or "/" in name or "\\" in name or "\0" in name or name in (".", ".."):
        return False
    try:
        return len(name.encode("utf-8")) <= MAX_NAME_BYTES
    except UnicodeEncodeError:
        return False


def _version_folder(folder: Path) -> tuple[Path, str | None]:
    """The folder of the highest numbered version (Triton's default version policy), or the
    model folder itself when it has no numbered folder (``None``: no version folder). Only
    ASCII digits number a version: '²' is a digit to ``isdigit`` that ``int`` refuses, so a
    folder so named is not a version."""
    versions = [e for e in folder.iterdir() if e.is_dir() and e.name.isascii() and e.name.isdigit()]
    if not versions:
        return folder, None
    chosen = max(versions, key=lambda e: int(e.name))
    return chosen, str(int(chosen.name))


# ---------------------------------------------------------------------------- importing code


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the source at every import and never reads nor writes ``__pycache__``: a
    bytecode cache is checked by the file's size and mtime in whole seconds, so an edit within
    the same second that keeps the size would otherwise run the old code."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return compile(self.get_data(path), path, "exec", dont_inherit=True)


class _RepositoryFinder(importlib.abc.MetaPathFinder):
    """Finds the modules beside a model's code (``from . import helpers``) the usual way, and
    has them compiled afresh too."""

    @classmethod
    def find_spec(
        cls, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _FreshSourceLoader(fullname, str(spec.origin))
        return spec


#: The one finder installed, an instance: ``importlib.invalidate_caches()`` calls every finder's
#: ``invalidate_caches`` as a method, which a class on ``sys.meta_path`` fails.
_FINDER = _RepositoryFinder()


def _install_finder() -> None:
    if not any(finder is _FINDER for finder in sys.meta_path):
        sys.meta_path.insert(0, _FINDER)


def _import_fresh(package: str, directory: Path, code: Path) -> ModuleType:
    """``code`` imported as ``<package>.model``, ``package`` being a new package whose folder
    is ``directory`` (so the model's relative imports find the files beside it)."""
    _install_finder()
    spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
    spec.submodule_search_locations = [str(directory)]
    sys.modules[package] = importlib.util.module_from_spec(spec)
    name = f"{package}.model"
    loader = _FreshSourceLoader(name, str(code))
    module_spec = importlib.util.spec_from_file_location(name, code, loader=loader)
    assert module_spec is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def _release(package: str) -> None:
    """Remove a package imported by :func:`_import_fresh`, and its modules, from sys.modules."""
    for key in [k for k in sys.modules if k == package or k.startswith(package + ".")]:
        module = sys.modules.pop(key, None)
        # A module's functions hold its namespace (their __globals__), which holds them: a
        # cycle that would keep a model made at import (MODEL = ...) and its weights until
        # the cyclic collector runs. Emptied, the model goes when its last reference does.
        if module is not None:
            module.__dict__.clear()


def _the_model(module: ModuleType, where: str, name: str, version: str | None) -> Model:
    """The one model ``module`` offers: ``MODEL``, ``MODELS`` or its one Model subclass."""
    if hasattr(module, "MODEL"):
        model = module.MODEL
        if not isinstance(model, Model):
            kind = "class" if isinstance(model, type) else type(model).__name__
            raise RepositoryError(
                f"{where}: MODEL is a {kind} ({model!r}), not an instance of an "
                "oipcodec.server.Model subclass"
            )
        return model
    if hasattr(module, "MODELS"):
        try:
            models = models_offered(module, where)
        except (TypeError, ValueError) as exc:
            raise RepositoryError(str(exc)) from None
        if len(models) != 1:
            raise RepositoryError(
                f"{where}: MODELS holds {len(models)} models; a model folder serves one "
                "(give each model a folder of its own)"
            )
        return models[0]
    classes = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Model)
        and value.__module__ == module.__name__
    ]
    if len(classes) != 1:
        found = ", ".join(c.__name__ for c in classes)
        raise RepositoryError(
            f"{where} holds no model: define MODEL = MyModel(), MODELS = [MyModel()] or one "
            f"oipcodec.server.Model subclass"
            + (f" (it defines {len(classes)}: {found})" if classes else "")
        )
    made: Model = classes[0](name=name, version=version)
    return made
