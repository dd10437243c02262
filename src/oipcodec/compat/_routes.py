"""The infer routes the KServe and MLServer adapters add to the host's FastAPI app.

Each is a twin of the host's own infer route, put just ahead of it in the same route list: the
same path, methods, name, dependencies, dependency-overrides provider and route class, with
oipcodec's endpoint. FastAPI then applies to the twin whatever it applies to the host's route:
the dependencies of the app and of the routers it is included through (the KServe adapter adds
its twins to KServe's router before KServe includes that router in the app), the route's own,
the overrides; the app's middleware wraps every route anyway. The endpoint takes the request
alone, so FastAPI neither parses nor validates the body: the adapter reads it once the
dependencies have passed. A body the adapter leaves to the host goes to the host's route itself
(:class:`HostAnswer`).

Decoding that can take long, a compressed body (a small one may inflate to the limit) or a
large JSON text, runs in a small pool of threads, so that the host's event loop goes on serving
its other requests (health checks among them) meanwhile.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from oipcodec.server.config import OFF_LOOP_BYTES

__all__ = ["OFF_LOOP_BYTES", "HostAnswer", "add_twins", "decode_off_loop"]

# A body of OFF_LOOP_BYTES or more (or compressed at all) is decoded off the event loop, as
# oipcodec serve decodes it.
_T = TypeVar("_T")
Endpoint = Callable[[Request], Awaitable[Response]]

_pool: ThreadPoolExecutor | None = None


def add_twins(
    routes: list[Any], paths: Iterable[str], handler: Callable[[APIRoute], Endpoint]
) -> int:
    """Put a twin of each FastAPI route of ``routes`` serving ``POST`` on one of ``paths`` just
    ahead of it, answering with ``handler(route)`` (a request to a response); returns how
    many."""
    wanted = set(paths)
    found = [
        (index, route)
        for index, route in enumerate(routes)
        if isinstance(route, APIRoute) and route.path in wanted and "POST" in (route.methods or ())
    ]
    for index, route in reversed(found):
        routes.insert(index, _twin(route, _endpoint(handler(route))))
    return len(found)


def _twin(route: APIRoute, endpoint: Endpoint) -> APIRoute:
    # The schema keeps describing the host's route (it stays in the list, behind the twin).
    return type(route)(
        route.path,
        endpoint,
        methods=sorted(route.methods or ()),
        name=route.name,
        dependencies=list(route.dependencies),
        dependency_overrides_provider=route.dependency_overrides_provider,
        response_model=None,
        include_in_schema=False,
    )


def _endpoint(handler: Endpoint) -> Endpoint:
    """``handler`` as a FastAPI endpoint whose one parameter is the request (its annotation
    resolved here, where ``Request`` is imported)."""

    async def endpoint(request: Request) -> Response:
        return await handler(request)

    return endpoint


class HostAnswer(Response):
    """The answer of the host's own ``route`` to a request whose ``body`` the adapter read
    (and whose dependencies have run on the twin): ``route``'s own handler, the body given
    again. What FastAPI says of a body that is not the host's request model (its 422) comes
    from FastAPI itself this way."""

    def __init__(self, route: APIRoute, body: bytes) -> None:
        super().__init__()
        self.route = route
        self.sent_body = body

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        sent = False

        async def replayed() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": self.sent_body, "more_body": False}
            return await receive()

        await self.route.handle(dict(scope), replayed, send)


async def decode_off_loop(
    body: bytes, compressed: bool, call: Callable[..., _T], *args: Any, **kwargs: Any
) -> _T:
    """``call(*args, **kwargs)``, the decoding of ``body``: here when it is small and plain, in
    the adapters' threads when it is compressed (a small body may inflate to the limit) or of
    :data:`OFF_LOOP_BYTES` or more. The kernels and the inflater release the GIL."""
    if not compressed and len(body) < OFF_LOOP_BYTES:
        return call(*args, **kwargs)
    global _pool
    if _pool is None:
        # One thread per CPU: more would only wait for a core, each holding its inflated body.
        _pool = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="oipcodec-adapter")
    return await asyncio.get_running_loop().run_in_executor(
        _pool, functools.partial(call, *args, **kwargs)
    )
