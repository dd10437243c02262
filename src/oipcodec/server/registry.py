"""The model registry shared by the front ends: names, versions, load, unload and drain.

The registry holds every model by name and version with its state (``READY``, ``UNAVAILABLE``
with a reason: Triton's repository index states); a request without a version goes to the
newest ready version (numeric versions compare as numbers, as in Triton). The inference step
(:mod:`oipcodec.server.inference`) watches it: told when models change and retire. With a
:class:`~oipcodec.server.repository.ModelRepository` the models are its folders, loaded and
unloaded as the model control mode allows (docs/model-repository.md).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from oipcodec._deprecated import forwarded, moved
from oipcodec.errors import (
    InvalidArgumentError,
    NotFoundError,
    RequestError,
    UnavailableError,
)
from oipcodec.server.model import Model
from oipcodec.server.model_config import load_override
from oipcodec.server.regions import SharedMemoryRegions
from oipcodec.server.repository import MAX_NAME_BYTES, ModelRepository, RepositoryError
from oipcodec.server.stats import Statistics, statistics_document

__all__ = ["READY", "UNAVAILABLE", "ModelRegistry", "Watcher"]

log = logging.getLogger("oipcodec.server")

READY = "READY"
UNAVAILABLE = "UNAVAILABLE"
LOADING = "LOADING"
UNLOADING = "UNLOADING"


class Watcher(Protocol):
    """What the registry tells of its models (the inference step listens)."""

    def changed(self) -> None:
        """A model was added, loaded or began unloading: lookups are made afresh."""

    async def drain(self, model: Model, timeout: float) -> int:
        """Wait for the requests running on a model; how many still run then.

        Parameters
        ----------
        model
            The model being unloaded or replaced.
        timeout
            The longest wait, in seconds.
        """

    def retire(self, model: Model, reason: str) -> None:
        """A model is unloaded: what still waits for it is refused.

        Parameters
        ----------
        model
            The model unloaded.
        reason
            The refusal's message.
        """


@dataclass(slots=True)
class _Entry:
    model: Model
    state: str = UNAVAILABLE
    reason: str = "not loaded"


#: Triton's refusal of a load or unload request in model control mode NONE.
CONTROL_REFUSED = "explicit model load / unload is not allowed if polling is enabled"

# "not given" for ``statistics``, whose meaningful values include None
_DEFAULT: Any = object()


def _version_key(version: str) -> tuple[int, int, str]:
    # isascii: '²' is a digit to isdigit() that int() refuses
    return (1, int(version), "") if version.isascii() and version.isdigit() else (0, 0, version)


class ModelRegistry:
    """Models by name and version, with their load state.

    The registry is used from one event loop; it is not thread-safe. Unloading or replacing a
    model drains it, as Triton does: new requests see the new state at once, the requests
    already running ``predict`` finish on the model they started on, and its ``unload`` runs
    when the last one ends, or after :attr:`drain_timeout` seconds.

    Parameters
    ----------
    models
        Added unloaded; :meth:`load_all` (run by the server at startup) loads them.
    shared_memory
        The system shared-memory regions of the server, when that extension is enabled
        (``None``: a tensor naming a region is refused).
    statistics
        Where the front ends count the inference requests (default: this process's own
        counters; ``None``: not counted, and the statistics answer UNAVAILABLE).
    repository
        The model folders the models come from (then no ``models`` are given:
        :meth:`load_all` loads the folders its model control mode names).
    """

    #: Seconds an unload (or reload) waits for the requests in flight on the model it
    #: replaces before running its ``unload`` anyway: a stuck ``predict`` must not hold every
    #: other load and unload for ever.
    drain_timeout: float = 30.0

    # Kept for one release (CHANGELOG): the inference step is the pipeline's.
    infer = forwarded("ModelRegistry.infer", "oipcodec.server.inference:infer", "Pipeline.run")

    def __init__(
        self,
        models: Iterable[Model] = (),
        *,
        shared_memory: SharedMemoryRegions | None = None,
        statistics: Statistics | None = _DEFAULT,
        repository: ModelRepository | None = None,
    ) -> None:
        self._models: dict[str, dict[str, _Entry]] = {}
        self.repository = repository
        # Repository models with no version here: why (not loaded, unloaded, a failed import).
        self._reasons: dict[str, str] = {}
        self._repository_lock: asyncio.Lock | None = None
        #: Told when models change, drain and retire (the inference step of each front end).
        self.watchers: list[Watcher] = []
        #: The models unloaded (a request looked up before, run after, is refused).
        self.retired: weakref.WeakSet[Model] = weakref.WeakSet()
        self.shared_memory = shared_memory
        self.statistics: Statistics | None = Statistics() if statistics is _DEFAULT else statistics
        for model in models:
            self.add(model)

    def add(self, model: Model) -> None:
        """Add a model, unloaded.

        Parameters
        ----------
        model
            The model; a second model with the same name and version raises ``ValueError``.
        """
        if not isinstance(model, Model):
            raise TypeError(f"expected an oipcodec.server.Model, got {type(model).__name__}")
        versions = self._models.setdefault(model.name, {})
        if model.version in versions:
            raise ValueError(f"model {model.name!r} version {model.version!r} is already there")
        versions[model.version] = _Entry(model)
        self._changed()

    def _changed(self) -> None:
        for watcher in self.watchers:
            watcher.changed()

    def __contains__(self, name: object) -> bool:
        return name in self._models

    def __len__(self) -> int:
        return sum(len(v) for v in self._models.values())

    def models(self) -> list[Model]:
        """Every model, loaded or not."""
        return [e.model for versions in self._models.values() for e in versions.values()]

    def names(self) -> list[str]:
        """The name of every model, loaded or not, once: those added in the order they were
        added, then the repository's others by name (KServe's ``GET /v2/models``)."""
        names = list(self._models)
        if self.repository is not None:
            names += [name for name in self.repository.names() if name not in self._models]
        return names

    # ------------------------------------------------------------------ lookups

    def _not_loaded(self, name: str) -> str | None:
        """Why a model of the repository has no version here, or None when it is no
        repository model without versions."""
        if name in self._models or self.repository is None or name not in self.repository:
            return None
        return self._reasons.get(name, "not loaded")

    def _versions(self, name: str) -> dict[str, _Entry]:
        versions = self._models.get(name)
        if versions is None:
            reason = self._not_loaded(name)
            if reason is not None:
                raise UnavailableError(
                    f"Request for unknown model: '{name}' has no available versions "
                    f"(unavailable: {reason})"
                )
            raise NotFoundError(f"Request for unknown model: '{name}' is not found{self._served()}")
        return versions

    def _served(self, shown: int = 5) -> str:
        """The first ``shown`` model names (sorted), to tell a client what it may ask for."""
        names = sorted(self.names())
        if not names:
            return "; this server serves no models"
        listed = ", ".join(f"'{name}'" for name in names[:shown])
        if len(names) <= shown:
            return f"; this server serves {listed}"
        return f"; this server serves {listed}, ... ({len(names)} models)"

    def _entry(self, name: str, version: str | None) -> _Entry:
        versions = self._versions(name)
        if version:
            entry = versions.get(version)
            if entry is None:
                # Triton's words, which its example clients look for
                if not (version.isascii() and version.isdigit()):
                    raise NotFoundError(
                        f"Request for unknown model: '{name}': failed to get model version "
                        f"from specified version string '{version}'"
                    )
                raise NotFoundError(
                    f"Request for unknown model: '{name}' version {version} is not found"
                )
            return entry
        if len(versions) == 1:  # the common case: one version, nothing to choose
            return next(iter(versions.values()))
        ready = [v for v, e in versions.items() if e.state == READY]
        chosen = max(ready or list(versions), key=_version_key)
        return versions[chosen]

    def get(self, name: str, version: str | None = None) -> Model:
        """The ready model of a name and version.

        Parameters
        ----------
        name
            The model's name.
        version
            One version of it; ``None`` or empty: the newest ready one.

        Raises
        ------
        NotFoundError
            An unknown name or version.
        UnavailableError
            A known model that is not ready.
        """
        entry = self._entry(name, version)
        if entry.state != READY:
            which = f"version {entry.model.version} " if version else ""
            raise UnavailableError(
                f"Request for unknown model: '{name}' {which}has no available versions "
                f"({entry.state.lower()}: {entry.reason})"
            )
        return entry.model

    def serves(self, model: Model) -> bool:
        """Whether ``model`` is the ready model of its name and version (not unloading, not
        replaced)."""
        entry = self._models.get(model.name, {}).get(model.version)
        return entry is not None and entry.model is model and entry.state == READY

    def is_ready(self, name: str, version: str | None = None) -> bool:
        """Whether the model ``name`` (``version``: as :meth:`get` takes them) is ready;
        :class:`NotFoundError` when it does not exist."""
        if self._not_loaded(name) is not None:
            return False
        return self._entry(name, version).state == READY

    def metadata(self, name: str, version: str | None = None) -> dict[str, Any]:
        """The model metadata document of ``name`` (``version``: as :meth:`get` takes them);
        every version is listed under ``versions``."""
        entry = self._entry(name, version)
        versions = sorted(self._versions(name), key=_version_key)
        return entry.model.metadata(versions)

    def config(self, name: str, version: str | None = None) -> dict[str, Any]:
        """The model configuration of ``name`` (``version``: as :meth:`get` takes them) in
        Triton's JSON form (:meth:`Model.config`)."""
        return self._entry(name, version).model.config()

    def statistics_document(
        self, name: str | None = None, version: str | None = None
    ) -> dict[str, Any]:
        """Triton's statistics answer: every version of every model (no ``name``), every
        version of ``name`` (no ``version``), or that one version (:class:`NotFoundError`
        when unknown), with the figures of every process of the server."""
        if not name:
            names = sorted(self._models)
        else:
            self._entry(name, version or None)  # NotFoundError for an unknown name or version
            names = [name]
        pairs = [
            (n, v)
            for n in names
            for v in sorted(self._models[n], key=_version_key)
            if not version or v == version
        ]
        return statistics_document(self.statistics, pairs)

    def index(self, ready_only: bool = False) -> list[dict[str, str]]:
        """The repository index: ``{name, version, state, reason}`` per model version.

        Parameters
        ----------
        ready_only
            List only the ready versions.
        """
        rows = []
        names = set(self._models)
        if self.repository is not None:
            names.update(self.repository.names())
        for name in sorted(names):
            reason = self._not_loaded(name)
            if reason is not None:
                if not ready_only:  # a folder with no model loaded: no version
                    row = {"name": name, "version": "", "state": UNAVAILABLE, "reason": reason}
                    rows.append(row)
                continue
            for version in sorted(self._models[name], key=_version_key):
                entry = self._models[name][version]
                if ready_only and entry.state != READY:
                    continue
                row = {"name": name, "version": version, "state": entry.state}
                row["reason"] = "" if entry.state == READY else entry.reason
                rows.append(row)
        return rows

    # ------------------------------------------------------------------ load / unload

    async def load(self, name: str, parameters: Mapping[str, Any] | None = None) -> None:
        """Load every version of a model (a ready version is left as it is).

        A failing :meth:`Model.load` leaves that version UNAVAILABLE with the error as its
        reason, and raises :class:`UnavailableError`. With a model repository, the model's
        folder is read afresh instead, and in model control mode ``none`` the request is
        refused as Triton refuses it.

        Parameters
        ----------
        name
            The model's name.
        parameters
            The load request's (Triton's): ``config``, a configuration override in Triton's
            JSON form (:meth:`Model.reconfigure`), reloads every version with it;
            ``file:<path>`` entries (model files) are refused (model files belong in a model
            repository's folder); others are ignored.
        """
        if self.repository is not None:
            self._check_control()
            await self._load_from_disk(name, parameters or {})
            return
        versions = self._models.get(name)
        if versions is None:
            known = sorted(self._models)
            listed = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
            raise NotFoundError(
                f"failed to load '{name}': unknown model; this server's models are "
                f"{listed or 'none'}"
            )
        config = load_override(name, parameters or {})
        if config is not None:
            models = [e.model for e in versions.values()]
            before = [
                (m, m.max_batch_size, m.config_parameters, m.dynamic_batching) for m in models
            ]
            try:
                for model in models:
                    model.reconfigure(config)
            except ValueError as exc:
                for m, size, entries, batching in before:
                    m.max_batch_size, m.config_parameters = size, entries
                    m.dynamic_batching = batching
                raise InvalidArgumentError(f"failed to load '{name}': {exc}") from None
            await self.unload(name)  # a new configuration reloads the model, as in Triton
        await self._load_versions(name, versions)

    async def _load_versions(self, name: str, versions: dict[str, _Entry]) -> None:
        """Run the ``load`` hook of every version not ready; see :meth:`load`."""
        failures = []
        for entry in versions.values():
            if entry.state == READY:
                continue
            entry.state, entry.reason = LOADING, "loading"
            try:
                await _call_hook(entry.model.load)
            except Exception as exc:
                log.exception("loading model %r version %s failed", name, entry.model.version)
                entry.state, entry.reason = UNAVAILABLE, f"load failed: {exc}"
                failures.append(f"version {entry.model.version}: {exc}")
                continue
            entry.state, entry.reason = READY, ""
            self.retired.discard(entry.model)  # a model unloaded, then loaded again
            self._changed()
            log.info("model %r version %s is ready", name, entry.model.version)
        if failures:
            raise UnavailableError(f"failed to load '{name}': {'; '.join(failures)}")

    async def unload(self, name: str) -> None:
        """Unload every version of a model; it stays known, UNAVAILABLE, until loaded again.

        With a model repository its versions are dropped (the index then lists the folder
        as unloaded), and in model control mode ``none`` the request is refused.

        Parameters
        ----------
        name
            The model's name.
        """
        if self.repository is not None:
            self._check_control()
            async with self._lock():
                if name not in self._models and name not in self.repository:
                    self._versions(name)  # NotFoundError
                versions, package = self._detach(name, "unloaded")
            # Drained outside the lock: another model's load or unload never waits for it.
            await self._retire(name, versions, package)
            return
        await self._unload_versions(name)

    async def _unload_versions(self, name: str) -> None:
        await self._unload_entries(name, self._versions(name))

    async def _unload_entries(self, name: str, versions: Mapping[str, _Entry]) -> None:
        """Unload the ready ``versions``: refused to new requests at once, then each drained
        (:meth:`_drain`) and its ``unload`` run."""
        leaving = [entry for entry in versions.values() if entry.state == READY]
        for entry in leaving:
            entry.state, entry.reason = UNLOADING, "unloading"
        if leaving:
            self._changed()
        for entry in leaving:
            # Its queued requests count as running: the drain lets their batches run first.
            await self._drain(name, entry.model)
            # Still queued after drain_timeout: refused, as Triton does.
            reason = (
                f"model '{name}' version {entry.model.version} was unloaded before the "
                "request's batch ran"
            )
            for watcher in self.watchers:
                watcher.retire(entry.model, reason)
            try:
                await _call_hook(entry.model.unload)
            except Exception:
                log.exception("unloading model %r version %s failed", name, entry.model.version)
            self.retired.add(entry.model)
            entry.state, entry.reason = UNAVAILABLE, "unloaded"
            log.info("model %r version %s is unloaded", name, entry.model.version)

    async def _drain(self, name: str, model: Model) -> None:
        """Wait until no request runs on ``model``, at most :attr:`drain_timeout` seconds."""
        for watcher in self.watchers:
            left = await watcher.drain(model, self.drain_timeout)
            if left:
                log.warning(
                    "model %r version %s: %d requests still running after %.3g s; unloading "
                    "it anyway",
                    name,
                    model.version,
                    left,
                    self.drain_timeout,
                )

    async def load_all(self) -> None:
        """Load every model (with a repository: the folders its model control mode names);
        failures are logged and leave that model UNAVAILABLE."""
        if self.repository is not None:
            for name in self.repository.startup_names():
                try:
                    await self._load_from_disk(name, {})
                except RequestError as exc:
                    log.error("%s", exc.message)
            return
        for name in list(self._models):
            try:
                await self.load(name)
            except RequestError as exc:
                log.error("%s", exc.message)

    async def unload_all(self) -> None:
        for name in list(self._models):
            if self.repository is not None:
                await self._drop(name, "unloaded")
            else:
                await self.unload(name)

    # ------------------------------------------------------------------ model repository

    def _lock(self) -> asyncio.Lock:
        """One repository load or unload at a time (each awaits hooks and imports)."""
        if self._repository_lock is None:
            self._repository_lock = asyncio.Lock()
        return self._repository_lock

    def _check_control(self) -> None:
        assert self.repository is not None
        if self.repository.control == "none":
            raise UnavailableError(
                f"{CONTROL_REFUSED} (this server runs with model control none: start it with "
                "--model-control explicit to load and unload models)"
            )

    async def _load_from_disk(self, name: str, parameters: Mapping[str, Any]) -> None:
        """Read model ``name``'s folder afresh, then replace the versions in use with its
        model and load it. When the folder cannot be read, the versions in use (if any) keep
        serving, a model without any is UNAVAILABLE with the reason, and
        :class:`UnavailableError` says why."""
        repository = self.repository
        assert repository is not None
        if name not in repository:
            known = repository.names()
            listed = ", ".join(known[:8]) + (", ..." if len(known) > 8 else "")
            # The repository's path stays out of answers: a client has no business with it.
            raise NotFoundError(
                f"failed to load '{name[:MAX_NAME_BYTES]}': unknown model; the model "
                f"repository holds {listed or 'no model folder'}"
            )
        config = load_override(name, parameters)
        async with self._lock():
            loop = asyncio.get_running_loop()
            try:
                loaded = await loop.run_in_executor(None, repository.read, name)
            except RepositoryError as exc:
                if name not in self._models:
                    self._reasons[name] = str(exc)
                raise UnavailableError(f"failed to load '{name}': {exc}") from None
            if config is not None:
                try:
                    for model in loaded.models:
                        model.reconfigure(config)
                except ValueError as exc:
                    repository.discard(loaded)
                    raise InvalidArgumentError(f"failed to load '{name}': {exc}") from None
            # The new versions are loaded while the ones in use serve, then take their place
            # at once; the replaced ones are drained and unloaded after (Triton's order).
            versions = {model.version: _Entry(model) for model in loaded.models}
            previous = self._models.get(name)
            try:
                await self._load_versions(name, versions)
            except UnavailableError:
                if previous is not None:  # the versions in use keep serving
                    repository.discard(loaded)
                    raise
                self._models[name] = versions
                self._changed()
                repository.release(repository.replace(name, loaded))
                self._reasons.pop(name, None)
                raise
            self._models[name] = versions
            self._changed()
            package = repository.replace(name, loaded)
            self._reasons.pop(name, None)
        # The replaced versions drain outside the lock: another model's load or unload never
        # waits for this one's requests in flight (up to drain_timeout).
        await self._retire(name, previous, package)

    async def _drop(self, name: str, reason: str) -> None:
        """Unload a repository model's versions and forget them and their code."""
        await self._retire(name, *self._detach(name, reason))

    def _detach(self, name: str, reason: str) -> tuple[dict[str, _Entry] | None, str | None]:
        """Take a repository model's versions out of service at once: its versions and the
        package of its code, for :meth:`_retire`."""
        assert self.repository is not None
        versions = self._models.pop(name, None)
        self._changed()
        package = self.repository.replace(name, None)
        self._reasons[name] = reason
        return versions, package

    async def _retire(
        self, name: str, versions: Mapping[str, _Entry] | None, package: str | None
    ) -> None:
        """Drain and unload ``versions`` taken out of service, then forget their code."""
        assert self.repository is not None
        if versions is not None:
            await self._unload_entries(name, versions)
        self.repository.release(package)


async def _call_hook(hook: Any) -> None:
    if inspect.iscoroutinefunction(hook):
        await hook()
    else:
        result = await asyncio.get_running_loop().run_in_executor(None, hook)
        if inspect.isawaitable(result):
            await result


#: The inference step's names that were here (one release, with a DeprecationWarning); by
#: name, so the core imports nothing of the room above it.
__getattr__ = moved(
    __name__, {"TRANSPORT_PARAMETERS": "oipcodec.server.inference:TRANSPORT_PARAMETERS"}
)
