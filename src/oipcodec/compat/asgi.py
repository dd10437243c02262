"""oipcodec's REST app mounted under a prefix of a Starlette or FastAPI app.

:func:`mount` puts a :class:`~oipcodec.server.frontends.rest_frontend.RestApp` under a
prefix (``/oip/v2/...``; tritonclient then calls ``InferenceServerClient("host:port/oip")``)
and chains loading and unloading its models onto the parent app's lifespan, which Starlette
does not pass to mounted apps: the models of a plain ``app.mount`` are never loaded (503,
health ready 400). With a lifespan of your own, pass ``manage_models=False`` and enter
:func:`lifespan` in it. The app routes on the path without ``scope["root_path"]``, so
Starlette's ``Mount`` and uvicorn's ``--root-path`` both work.

Starlette and FastAPI are not imported here: any app with ``mount(path, app, name=...)`` and a
Starlette ``router.lifespan_context`` will do. Examples: docs/compat.md, "FastAPI and
Starlette".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

from oipcodec.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from oipcodec.server import Model
    from oipcodec.server.frontends.rest_frontend import RestApp
    from oipcodec.server.registry import ModelRegistry

__all__ = ["lifespan", "mount"]


def mount(
    app: Any,
    models: Iterable[Model] | ModelRegistry | None = None,
    prefix: str = "/oip",
    *,
    limits: Limits = DEFAULT_LIMITS,
    name: str | None = "oipcodec",
    manage_models: bool = True,
) -> RestApp:
    """Mount an OIP REST app serving ``models`` (default: the demo models; or a
    :class:`~oipcodec.server.registry.ModelRegistry`) on ``app`` (Starlette or FastAPI) under
    ``prefix``.

    With ``manage_models`` (the default) the models are loaded when ``app``'s lifespan starts,
    after the app's own startup, and unloaded when it ends, before the app's own shutdown;
    health/ready answers 400 until then. ``manage_models=False`` leaves that to you
    (:func:`lifespan`). Returns the mounted
    :class:`~oipcodec.server.frontends.rest_frontend.RestApp`.

    Parameters
    ----------
    app
        The Starlette or FastAPI app.
    models
        The models (default: the demo models), or a
        :class:`~oipcodec.server.registry.ModelRegistry`.
    prefix
        Where the OIP routes go (``/v2/...`` under it).
    limits
        What a request body may hold.
    name
        The mount's route name.
    manage_models
        Load and unload the models with ``app``'s lifespan (above).
    """
    from oipcodec.server.runtime import create_app

    if not prefix.startswith("/") or prefix == "/":
        raise ValueError(f"prefix must start with '/' and not be the root, got {prefix!r}")
    rest_app = create_app(models, limits=limits, manage_models=False)
    rest_app.ready = False  # until the models are loaded
    app.mount(prefix.rstrip("/"), rest_app, name=name)
    if manage_models:
        router = getattr(app, "router", app)
        router.lifespan_context = _chained(router.lifespan_context, rest_app)
    return rest_app


@asynccontextmanager
async def lifespan(rest_app: RestApp) -> AsyncIterator[None]:
    """Load ``rest_app``'s models and mark it ready for the duration of the block; mark it not
    ready and unload them on the way out.

    Parameters
    ----------
    rest_app
        What :func:`mount` returned.
    """
    await rest_app.registry.load_all()
    rest_app.ready = True
    try:
        yield
    finally:
        rest_app.ready = False
        await rest_app.registry.unload_all()


def _chained(
    outer: Callable[[Any], AbstractAsyncContextManager[Any]], rest_app: RestApp
) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
    @asynccontextmanager
    async def chained(app: Any) -> AsyncIterator[Any]:
        async with outer(app) as state, lifespan(rest_app):
            yield state

    return chained
