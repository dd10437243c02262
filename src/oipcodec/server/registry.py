"""The model registry shared by the front ends, and the inference step itself.

The registry holds every model by name and version with its state (``READY``, ``UNAVAILABLE``
with a reason: Triton's repository index states); a request without a version goes to the
newest ready version (numeric versions compare as numbers, as in Triton).
:meth:`ModelRegistry.infer` is the protocol-independent part of a request: find the model,
check the inputs, run ``predict``, keep the requested outputs (classified, or written into
shared memory, when asked); :meth:`ModelRegistry.execute` also says when ``predict`` ran, for
the statistics; a model with ``dynamic_batching`` runs there through its queue
(:mod:`oipcodec.server.batching`). With a
:class:`~oipcodec.server.repository.ModelRepository` the models are its folders, loaded and
unloaded as the model control mode allows (docs/model-repository.md).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from oipcodec.errors import (
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OIPError,
    RequestError,
    UnavailableError,
    request_error_for,
)
from oipcodec.server.batching import OFF_LOOP_BYTES, Batcher, model_failure
from oipcodec.server.classification import check_datatype, class_count, classify
from oipcodec.server.model import Model
from oipcodec.server.regions import Reader, SharedMemoryRegions, shared_memory_disabled
from oipcodec.server.repository import MAX_NAME_BYTES, ModelRepository, RepositoryError
from oipcodec.server.stats import Statistics, statistics_document
from oipcodec.sharedmem import Location, location, parameters_for
from oipcodec.types import InferRequest, InferResponse, RequestedOutput

__all__ = ["READY", "UNAVAILABLE", "ModelRegistry", "TRANSPORT_PARAMETERS"]

log = logging.getLogger("oipcodec.server")

READY = "READY"
UNAVAILABLE = "UNAVAILABLE"
LOADING = "LOADING"
UNLOADING = "UNLOADING"

#: Request and output parameters that steer the transport (binary extension), not the model:
#: they are not passed to ``predict`` nor echoed.
TRANSPORT_PARAMETERS = frozenset({"binary_data", "binary_data_output", "binary_data_size"})


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

    ``models`` are added unloaded; :meth:`load_all` (run by the server at startup) loads them.
    ``shared_memory``: the system shared-memory regions of the server, when that extension is
    enabled (``None``: a tensor naming a region is refused). ``statistics``: where the front
    ends count the inference requests (default: this process's own counters; ``None``: not
    counted, and the statistics answer UNAVAILABLE). ``repository``: the model folders
    these models come from (then no ``models`` are given: :meth:`load_all` loads the folders
    its model control mode names). The registry is used from one event loop; it is not
    thread-safe.

    Unloading or replacing a model drains it, as Triton does: new requests see the new state
    at once, the requests already running ``predict`` finish on the model they started on, and
    its ``unload`` runs when the last one ends, or after :attr:`drain_timeout` seconds.
    """

    #: Seconds an unload (or reload) waits for the requests in flight on the model it
    #: replaces before running its ``unload`` anyway: a stuck ``predict`` must not hold every
    #: other load and unload for ever.
    drain_timeout: float = 30.0

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
        # Requests in flight per model (by id), the unloads waiting for them to end, and the
        # models already unloaded (a request looked up before, run after, is refused).
        self._running: dict[int, int] = {}
        self._drains: dict[int, asyncio.Future[None]] = {}
        self._retired: weakref.WeakSet[Model] = weakref.WeakSet()
        # The queue of each loaded model that batches (by id), made on its first request.
        self._batchers: dict[int, Batcher] = {}
        self.shared_memory = shared_memory
        self.statistics: Statistics | None = Statistics() if statistics is _DEFAULT else statistics
        for model in models:
            self.add(model)

    def reader(self, on_loop: bool = False) -> Reader:
        """What one request's decoder reads its inputs in shared memory through: a
        :class:`~oipcodec.server.regions.Reader` of the regions (bounded per request and for
        the requests in flight together: release it when the request ends), or one that
        refuses them when the extension is off. ``on_loop``: the decode runs on the event
        loop, where a copy of :data:`~oipcodec.server.batching.OFF_LOOP_BYTES` or more raises
        :class:`~oipcodec.server.regions.CopyOffLoop` instead (a copy must not hold the
        loop): the caller calls its ``off_loop`` and decodes again in a worker thread."""
        return Reader(self.shared_memory, OFF_LOOP_BYTES if on_loop else None)

    def add(self, model: Model) -> None:
        """Add a model (unloaded). A second model with the same name and version is an error."""
        if not isinstance(model, Model):
            raise TypeError(f"expected an oipcodec.server.Model, got {type(model).__name__}")
        versions = self._models.setdefault(model.name, {})
        if model.version in versions:
            raise ValueError(f"model {model.name!r} version {model.version!r} is already there")
        versions[model.version] = _Entry(model)

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
        """The ready model ``name`` (the newest ready version when ``version`` is empty).

        Raises :class:`NotFoundError` (unknown name or version) or :class:`UnavailableError`
        (known, not ready).
        """
        entry = self._entry(name, version)
        if entry.state != READY:
            which = f"version {entry.model.version} " if version else ""
            raise UnavailableError(
                f"Request for unknown model: '{name}' {which}has no available versions "
                f"({entry.state.lower()}: {entry.reason})"
            )
        return entry.model

    def is_ready(self, name: str, version: str | None = None) -> bool:
        """Whether the model is ready; :class:`NotFoundError` when it does not exist."""
        if self._not_loaded(name) is not None:
            return False
        return self._entry(name, version).state == READY

    def metadata(self, name: str, version: str | None = None) -> dict[str, Any]:
        """The model metadata document; every version is listed under ``versions``."""
        entry = self._entry(name, version)
        versions = sorted(self._versions(name), key=_version_key)
        return entry.model.metadata(versions)

    def config(self, name: str, version: str | None = None) -> dict[str, Any]:
        """The model configuration in Triton's JSON form (:meth:`Model.config`)."""
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
        """The repository index: ``{name, version, state, reason}`` per model version."""
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
        """Load every version of ``name`` (a ready version is left as it is).

        ``parameters`` are the load request's (Triton's): ``config``, a configuration override
        in Triton's JSON form (:meth:`Model.reconfigure`), reloads every version with it;
        ``file:<path>`` entries (model files) are refused (model files belong in a model
        repository's folder); others are ignored. A failing :meth:`Model.load` leaves that
        version UNAVAILABLE with the error as its reason, and raises
        :class:`UnavailableError`.

        With a model repository, the model's folder is read afresh instead
        (:meth:`_load_from_disk`), and in model control mode ``none`` the request is refused
        as Triton refuses it.
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
        config = _load_config(name, parameters or {})
        if config is not None:
            before = [
                (
                    e.model,
                    e.model.max_batch_size,
                    e.model.config_parameters,
                    e.model.dynamic_batching,
                )
                for e in versions.values()
            ]
            try:
                for entry in versions.values():
                    entry.model.reconfigure(config)
            except ValueError as exc:
                for model, size, entries, batching in before:
                    model.max_batch_size, model.config_parameters = size, entries
                    model.dynamic_batching = batching
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
            self._retired.discard(entry.model)  # a model unloaded, then loaded again
            log.info("model %r version %s is ready", name, entry.model.version)
        if failures:
            raise UnavailableError(f"failed to load '{name}': {'; '.join(failures)}")

    async def unload(self, name: str) -> None:
        """Unload every version of ``name``; it stays known, UNAVAILABLE, until loaded again.

        With a model repository its versions are dropped (the index then lists the folder
        as unloaded), and in model control mode ``none`` the request is refused."""
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
        for entry in leaving:
            # Its queued requests count as running: the drain lets their batches run first.
            await self._drain(name, entry.model)
            batcher = self._batchers.pop(id(entry.model), None)
            if batcher is not None:  # still queued after drain_timeout: refused, as Triton
                batcher.close(
                    f"model '{name}' version {entry.model.version} was unloaded before the "
                    "request's batch ran"
                )
            try:
                await _call_hook(entry.model.unload)
            except Exception:
                log.exception("unloading model %r version %s failed", name, entry.model.version)
            self._retired.add(entry.model)
            entry.state, entry.reason = UNAVAILABLE, "unloaded"
            log.info("model %r version %s is unloaded", name, entry.model.version)

    async def _drain(self, name: str, model: Model) -> None:
        """Wait until no request runs on ``model``, at most :attr:`drain_timeout` seconds."""
        key = id(model)
        if not self._running.get(key):
            return
        waiter = self._drains.get(key)
        if waiter is None:
            waiter = self._drains[key] = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(waiter), self.drain_timeout)
        except asyncio.TimeoutError:  # not the builtin TimeoutError before Python 3.11
            log.warning(
                "model %r version %s: %d requests still running after %.3g s; unloading it anyway",
                name,
                model.version,
                self._running.get(key, 0),
                self.drain_timeout,
            )
        finally:
            self._drains.pop(key, None)

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
        config = _load_config(name, parameters)
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
                repository.release(repository.replace(name, loaded))
                self._reasons.pop(name, None)
                raise
            self._models[name] = versions
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

    # ------------------------------------------------------------------ inference

    async def infer(self, request: InferRequest) -> InferResponse:
        """Run one request through its model: ``request.model_name`` / ``model_version`` pick
        the model; inputs are checked against its metadata before ``predict``; the answer
        holds the requested outputs (all when none are requested) and echoes the id."""
        return (await self.execute(request))[0]

    async def execute(
        self, request: InferRequest, model: Model | None = None
    ) -> tuple[InferResponse, int, int, int]:
        """:meth:`infer`, and when the request was checked (ready for ``predict``), and when
        ``predict`` started and finished (``time.perf_counter_ns`` readings; started is when
        it was checked, unless a ``run_in_thread`` model waited for a worker thread).
        ``model``: the model the request names, already looked up.

        ``predict`` raising is re-raised as a :class:`RequestError` whose ``executed``
        attribute is True (the model ran: an execution in the statistics)."""
        name = request.model_name
        if not name:
            raise InvalidArgumentError("the request names no model")
        if model is None:
            model = self.get(name, request.model_version)
        elif self._retired and model in self._retired:
            raise UnavailableError(
                f"Request for unknown model: '{name}' version {model.version} was unloaded "
                "while the request was read"
            )
        batcher = None
        if model.dynamic_batching is not None:
            # The inputs are checked, not read: the batcher reads each into its batch's rows.
            model.check_batchable(request.inputs)
            batcher = self._batcher(model)
        else:
            arrays = model.check_inputs(request.inputs)
        parameters = request.parameters
        if not TRANSPORT_PARAMETERS.isdisjoint(parameters):
            parameters = {k: v for k, v in parameters.items() if k not in TRANSPORT_PARAMETERS}
        requested = None
        declared = model.output_names()
        # Outputs to classify, and their k (the classification extension); outputs to write
        # into shared memory, and where.
        classes: dict[str, int] = {}
        in_shm: dict[str, Location] = {}
        if request.outputs is not None:
            requested = [o.name for o in request.outputs]
            for asked in request.outputs:
                where = _output_location(asked)
                if where is not None:
                    if self.shared_memory is None:  # refused before the model runs
                        shared_memory_disabled(where, asked.name, "output", True)
                    in_shm[asked.name] = where
            if declared is not None:
                for output in requested:
                    if output not in declared:
                        raise InvalidArgumentError(
                            f"unexpected inference output '{output}' for model '{name}'; "
                            f"its outputs are {declared}"
                        )
            for asked in request.outputs:
                k = class_count(asked)
                if k is not None:
                    for spec in model.outputs or ():
                        if spec.name == asked.name:
                            check_datatype(asked.name, spec.datatype)
                    classes[asked.name] = k
        checked = time.perf_counter_ns()
        # In flight from here to the answer: an unload of this model waits for it (_drain).
        key = id(model)
        self._running[key] = self._running.get(key, 0) + 1
        produced: Any = None
        try:
            if batcher is not None:
                # This request's rows of every output (predict's errors come marked executed)
                produced, started, finished = await batcher.submit(
                    request.inputs, parameters, requested
                )
            else:
                started, produced, finished = await self._predict(
                    model, arrays, parameters, checked
                )
            if not hasattr(produced, "items"):
                raise request_error_for(
                    TypeError(
                        f"model '{name}' predict returned {type(produced).__name__}, not a dict"
                    )
                )
            outputs = model.output_tensors(produced, requested, request.inputs)
            if classes:
                batched = model.max_batch_size > 0
                outputs = [
                    classify(t, classes[t.name], batched, model.class_labels(t.name))
                    if t.name in classes
                    else t
                    for t in outputs
                ]
            if in_shm:
                regions = self.shared_memory
                assert regions is not None
                for tensor in outputs:
                    where = in_shm.get(tensor.name)
                    if where is not None:
                        # Written into the region; the tensor then carries the location (its
                        # byte_size: the bytes written) and the encoders send no data for it.
                        tensor.parameters = parameters_for(regions.write(tensor, where))
            response = InferResponse(name, outputs, id=request.id, model_version=model.version)
            return response, checked, started, finished
        except RequestError as exc:
            # A batched request's own outputs failed their checks: its batch did run (one
            # execution, as the batcher counted it).
            if batcher is not None and produced is not None:
                exc.executed = True
            raise
        finally:
            self._ended(key)

    @staticmethod
    async def _predict(
        model: Model, arrays: Any, parameters: Any, checked: int
    ) -> tuple[int, Any, int]:
        """One request's ``predict``: when it started (``checked``, or for a ``run_in_thread``
        model when a worker thread took the call: the wait before is the queue), what it
        returned, when it finished. Its errors are raised marked ``executed``."""
        try:
            if model.run_in_thread and not model.is_async:
                loop = asyncio.get_running_loop()
                started, produced = await loop.run_in_executor(
                    None, _timed_predict, model, arrays, parameters
                )
            else:
                started = checked
                if model.is_async:
                    produced = await model.predict(arrays, parameters)  # type: ignore[misc]
                else:
                    produced = model.predict(arrays, parameters)
        except RequestError as exc:
            exc.executed = True
            raise
        except Exception as exc:
            raise model_failure(model, exc) from None
        return started, produced, time.perf_counter_ns()

    def _batcher(self, model: Model) -> Batcher:
        """The queue of a model that batches (made on its first request)."""
        batcher = self._batchers.get(id(model))
        if batcher is None:
            # Only a ready model gets a queue: one unloading has closed its own already.
            entry = self._models.get(model.name, {}).get(model.version)
            if entry is None or entry.model is not model or entry.state != READY:
                raise UnavailableError(
                    f"Request for unknown model: '{model.name}' version {model.version} is "
                    "being unloaded"
                )
            record = None
            if self.statistics is not None:
                record = self.statistics.of(model).batch
            batcher = self._batchers[id(model)] = Batcher(model, record)
        return batcher

    def _ended(self, key: int) -> None:
        """One request on the model of id ``key`` is over; the last wakes its drain."""
        left = self._running[key] - 1
        if left:
            self._running[key] = left
            return
        del self._running[key]
        if self._drains:
            waiter = self._drains.get(key)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)


def _timed_predict(model: Model, arrays: Any, parameters: Any) -> tuple[int, Any]:
    return time.perf_counter_ns(), model.predict(arrays, parameters)


def _load_config(name: str, parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration override among a load request's parameters (its ``config``, a JSON
    object), or None; refuses model files (``file:<path>`` parameters) with Triton's words for
    a repository that cannot be read."""
    files = sorted(key for key in parameters if key.startswith("file:"))
    if files:
        raise InternalError(
            f"failed to load '{name}': failed to poll from model repository: model files "
            f"in a load request are not supported; put them into the model's folder of a "
            f"model repository on disk ({files[0][:80]!r})"
        )
    text = parameters.get("config")
    if text is None:
        return None
    try:
        # orjson bounds the nesting (1024 levels): json.loads would recurse to a
        # RecursionError on a config of 100,000 '['.
        config = orjson.loads(text) if isinstance(text, (str, bytes)) else text
    except orjson.JSONDecodeError as exc:
        raise InvalidArgumentError(
            f"failed to load '{name}': its 'config' parameter is not valid JSON ({exc})"
        ) from None
    if not isinstance(config, dict):
        raise InvalidArgumentError(
            f"failed to load '{name}': its 'config' parameter is not a JSON object "
            "(Triton's model configuration in JSON)"
        )
    return config


def _output_location(asked: RequestedOutput) -> Location | None:
    try:
        return location(asked.parameters)
    except OIPError as exc:
        raise InvalidArgumentError(f"output '{asked.name}' {exc.reason}") from None


async def _call_hook(hook: Any) -> None:
    if inspect.iscoroutinefunction(hook):
        await hook()
    else:
        result = await asyncio.get_running_loop().run_in_executor(None, hook)
        if inspect.isawaitable(result):
            await result
