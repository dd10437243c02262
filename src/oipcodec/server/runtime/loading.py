"""Which models a server runs: a model module's ``MODELS``, a repository, or the demo models."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable

from oipcodec.server.config import ServerConfig
from oipcodec.server.model import Model
from oipcodec.server.regions import SharedMemoryRegions
from oipcodec.server.registry import ModelRegistry
from oipcodec.server.repository import ModelRepository, models_offered, where_raised

__all__ = ["Models", "load_model_module"]

#: What a server is given to run: Model instances, a registry, or None (the demo models, or
#: ``config.model_module`` / ``config.model_repository``).
Models = Iterable[Model] | ModelRegistry | None


def load_model_module(module: str) -> list[Model]:
    """The models a module offers: its ``MODELS`` attribute, an iterable of :class:`Model`
    instances or a callable returning one.

    ``module`` is a dotted name (``my.models``), found on ``sys.path`` (``oipcodec serve``
    puts its working directory first there, as uvicorn does), or the path of a Python file
    (``my/models.py``): then the folders above it that are packages (hold an
    ``__init__.py``) make its dotted name, and the folder above them goes first on
    ``sys.path``, so the module imports as that name (relative imports work).

    Raises ``ValueError`` with a one-line message for a module that cannot be imported
    (naming the exception, and the file and line where the module's own code raised it), a
    module without ``MODELS``, and ``MODELS`` holding anything but Model instances (a class
    instead of an instance says so).
    """
    name = _module_name(module)
    try:
        imported = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (
            exc.name is not None
            and name.startswith(exc.name)
            and name[len(exc.name) :][:1] in ("", ".")
        ):
            raise ValueError(
                f"cannot import model module {module!r}: no module named {exc.name!r} on the "
                f"import path (run from the folder that holds it, or give the file path, e.g. "
                f"{name.replace('.', os.sep)}.py)"
            ) from None
        raise ValueError(f"cannot import model module {module!r}: {where_raised(exc)}") from None
    except Exception as exc:
        raise ValueError(f"cannot import model module {module!r}: {where_raised(exc)}") from None
    return models_offered(imported, name)


def _module_name(module: str) -> str:
    """The dotted name of ``module``, a dotted name or a ``.py`` file's path (whose package
    root then goes first on ``sys.path``)."""
    if not module.endswith(".py"):
        return module
    path = os.path.abspath(module)
    if not os.path.isfile(path):
        raise ValueError(f"cannot import model module {module!r}: no such file")
    folder, filename = os.path.split(path)
    parts = [filename[: -len(".py")]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return ".".join(parts)


def _registry(models: Models, config: ServerConfig) -> ModelRegistry:
    from oipcodec.server.demo import demo_models

    regions = None
    if config.shared_memory == "system":
        regions = SharedMemoryRegions(
            config.shared_memory_prefix, config.max_shm_regions, config.shared_memory_budget
        )
    if isinstance(models, ModelRegistry):
        if regions is not None and models.shared_memory is None:
            models.shared_memory = regions
        return models
    if config.model_repository is not None:
        if models is not None:
            raise ValueError(
                "models given beside a model_repository: put each into a folder of the "
                "repository (docs/model-repository.md)"
            )
        repository = ModelRepository(
            config.model_repository, config.model_control, config.load_models
        )
        return ModelRegistry(shared_memory=regions, repository=repository)
    model_module = config.model_module
    listed = list(models) if models is not None else []
    if model_module is not None:
        listed += load_model_module(model_module)
    if models is None and model_module is None:
        listed = demo_models()
    return ModelRegistry(listed, shared_memory=regions)
