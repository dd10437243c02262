"""The OIP gRPC front end: service ``inference.GRPCInferenceService`` on grpcio's asyncio server.

ModelInfer and ModelStreamInfer are registered without a deserializer or serializer, so the
handlers receive the raw ``ModelInferRequest`` bytes and hand them to :func:`oipcodec.pb.
decode_request`, whose tensors are views of those bytes (no protobuf objects are built), and
return the bytes of :func:`oipcodec.pb.encode_response` (raw contents, as Triton answers). The
other RPCs go through the generated messages of :mod:`oipcodec.proto` (a private descriptor
pool, so this module coexists with tritonclient's or KServe's ``inference.*`` classes).

Errors are gRPC statuses: INVALID_ARGUMENT for a bad request, NOT_FOUND for an unknown model,
UNAVAILABLE for a model that is not loaded, UNIMPLEMENTED, INTERNAL for a failing model.
In ModelStreamInfer an error does not end the stream: it is sent as the response's
``error_message`` (field 1 of ModelStreamInferResponse), as Triton does.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import json_format

from oipcodec import __version__, pb
from oipcodec.errors import InvalidArgumentError, NotFoundError, RequestError, request_error_for
from oipcodec.limits import DEFAULT_LIMITS, Limits
from oipcodec.proto import open_inference_grpc_pb2 as pb2
from oipcodec.server.frontends._grpc import client_gone
from oipcodec.server.inference import Exchange, Pipeline
from oipcodec.server.inference.streaming import FINAL_PARAMETER, Responses, decoupled_refused
from oipcodec.server.metadata import SERVER_NAME, extensions
from oipcodec.server.regions import CopyOffLoop, SharedMemoryRegions, cuda_unsupported
from oipcodec.server.registry import ModelRegistry
from oipcodec.types import InferRequest

__all__ = ["SERVICE", "InferenceServicer"]

log = logging.getLogger("oipcodec.server")

SERVICE = "inference.GRPCInferenceService"

#: The request parameter that asks for an empty response marking the end of a decoupled
#: model's responses to the request (tritonclient's ``enable_empty_final_response``).
EMPTY_FINAL_PARAMETER = "triton_enable_empty_final_response"

#: The most requests of one ModelStreamInfer stream that run at once; past it, the next
#: request is read when one ends (a client cannot grow the server's tasks without bound).
STREAM_REQUESTS = 64


class InferenceServicer:
    """The handlers of ``inference.GRPCInferenceService`` over a :class:`ModelRegistry`."""

    def __init__(
        self,
        registry: ModelRegistry,
        *,
        limits: Limits = DEFAULT_LIMITS,
        server_name: str = SERVER_NAME,
    ) -> None:
        self.registry = registry
        self.pipeline = Pipeline.of(registry)
        self.limits = limits
        self.server_name = server_name
        self.ready = True

    # ------------------------------------------------------------------ health and metadata

    async def server_live(self, request: Any, context: Any) -> Any:
        return pb2.ServerLiveResponse(live=True)

    async def server_ready(self, request: Any, context: Any) -> Any:
        return pb2.ServerReadyResponse(ready=self.ready)

    async def model_ready(self, request: Any, context: Any) -> Any:
        return await self._guard(
            context, lambda: pb2.ModelReadyResponse(
                ready=self.registry.is_ready(request.name, request.version or None)
            )
        )  # fmt: skip

    async def server_metadata(self, request: Any, context: Any) -> Any:
        return pb2.ServerMetadataResponse(
            name=self.server_name,
            version=__version__,
            extensions=extensions(self.registry.shared_memory is not None, self.registry),
        )

    async def model_metadata(self, request: Any, context: Any) -> Any:
        def answer() -> Any:
            document = self.registry.metadata(request.name, request.version or None)
            tensor = pb2.ModelMetadataResponse.TensorMetadata
            return pb2.ModelMetadataResponse(
                name=document["name"],
                versions=document["versions"],
                platform=document["platform"],
                inputs=[tensor(**t) for t in document["inputs"]],
                outputs=[tensor(**t) for t in document["outputs"]],
            )

        return await self._guard(context, answer)

    # ------------------------------------------------------------ configuration and statistics

    async def model_config(self, request: Any, context: Any) -> Any:
        """Triton's ModelConfig: the same document as ``GET /v2/models/<name>/config``."""
        return await self._guard(
            context, lambda: pb2.ModelConfigResponse(config=json_format.ParseDict(
                self.registry.config(request.name, request.version or None), pb2.ModelConfig()
            ))
        )  # fmt: skip

    async def model_statistics(self, request: Any, context: Any) -> Any:
        """Triton's ModelStatistics: the same figures as ``GET /v2/models[/<name>]/stats``."""
        return await self._guard(
            context, lambda: json_format.ParseDict(
                self.registry.statistics_document(request.name, request.version or None),
                pb2.ModelStatisticsResponse(),
            )
        )  # fmt: skip

    # ------------------------------------------------------------------ repository

    async def repository_index(self, request: Any, context: Any) -> Any:
        index = pb2.RepositoryIndexResponse.ModelIndex
        rows = self.registry.index(ready_only=request.ready)
        return pb2.RepositoryIndexResponse(models=[index(**row) for row in rows])

    async def repository_model_load(self, request: Any, context: Any) -> Any:
        try:
            parameters = {
                key: getattr(value, value.WhichOneof("parameter_choice") or "string_param")
                for key, value in request.parameters.items()
            }
            await self.registry.load(request.model_name, parameters)
        except Exception as exc:
            await self._abort(context, exc)
        return pb2.RepositoryModelLoadResponse()

    async def repository_model_unload(self, request: Any, context: Any) -> Any:
        try:
            await self.registry.unload(request.model_name)
        except Exception as exc:
            await self._abort(context, exc)
        return pb2.RepositoryModelUnloadResponse()

    # ------------------------------------------------------------------ shared memory

    def _regions(self) -> SharedMemoryRegions:
        regions = self.registry.shared_memory
        assert regions is not None  # the RPCs are registered only when enabled
        return regions

    async def system_shared_memory_status(self, request: Any, context: Any) -> Any:
        def answer() -> Any:
            status = pb2.SystemSharedMemoryStatusResponse.RegionStatus
            rows = self._regions().status(request.name)
            return pb2.SystemSharedMemoryStatusResponse(
                regions={row["name"]: status(**row) for row in rows}
            )

        return await self._guard(context, answer)

    async def system_shared_memory_register(self, request: Any, context: Any) -> Any:
        def answer() -> Any:
            self._regions().register(request.name, request.key, request.offset, request.byte_size)
            return pb2.SystemSharedMemoryRegisterResponse()

        return await self._guard(context, answer)

    async def system_shared_memory_unregister(self, request: Any, context: Any) -> Any:
        self._regions().unregister(request.name)
        return pb2.SystemSharedMemoryUnregisterResponse()

    async def cuda_shared_memory_status(self, request: Any, context: Any) -> Any:
        def answer() -> Any:
            if request.name:
                raise NotFoundError(f"Unable to find cuda shared memory region: '{request.name}'")
            return pb2.CudaSharedMemoryStatusResponse()

        return await self._guard(context, answer)

    async def cuda_shared_memory_register(self, request: Any, context: Any) -> Any:
        await self._abort(context, cuda_unsupported(request.name))

    async def cuda_shared_memory_unregister(self, request: Any, context: Any) -> Any:
        return pb2.CudaSharedMemoryUnregisterResponse()

    # ------------------------------------------------------------------ inference

    async def _decode(self, exchange: Exchange, data: bytes) -> InferRequest:
        """A ModelInferRequest's message decoded (tensors in shared memory read through the
        exchange), its model looked up into ``exchange.model``."""
        limits, regions = self.limits, exchange.shared_memory
        try:
            request, raw = pb.decode_request_form(data, limits=limits, shared_memory=regions)
        except CopyOffLoop:  # a large copy out of shared memory: in a worker thread
            exchange.off_loop()
            decode = functools.partial(
                pb.decode_request_form, data, limits=limits, shared_memory=regions
            )
            request, raw = await asyncio.get_running_loop().run_in_executor(None, decode)
        if raw:
            exchange.path = "grpc_raw"
        if not request.model_name:
            raise InvalidArgumentError("ModelInferRequest.model_name is empty")
        if request.outputs is not None:
            for output in request.outputs:
                output.parameters.pop("binary_data", None)
        exchange.model = self.pipeline.model(request.model_name, request.model_version)
        return request

    async def model_infer(self, data: bytes, context: Any) -> bytes:
        """One ModelInferRequest's answer, counted in the registry's statistics (a request
        that names no known model counts only on its encoding path)."""
        try:
            with self.pipeline.exchange("grpc_typed", len(data)) as exchange:
                request = await self._decode(exchange, data)
                if exchange.model is not None and exchange.model.decoupled:
                    raise decoupled_refused("ModelInfer RPC")
                answer = pb.encode_response(await exchange.run(request), raw=True)
                exchange.sent(len(answer))
            return answer
        except Exception as exc:
            await self._abort(context, exc)
            raise AssertionError("unreachable") from None  # abort raises

    async def model_stream_infer(self, requests: AsyncIterator[bytes], context: Any) -> None:
        """Each request's responses (or its error) written as they are ready, each marked
        ``triton_final_response`` as Triton marks them. A model that answers once is answered
        in order, before the next request is read; a decoupled model's requests run side by
        side (at most :data:`STREAM_REQUESTS` of a stream), their responses told apart by the
        request id. A client that went away is not an error of the server (written with
        ``context.write``, not yielded, so that a write into a closed stream fails here, where
        it is caught, rather than in grpcio, which logs it with a traceback)."""
        lock = asyncio.Lock()

        async def write(answer: bytes) -> None:
            async with lock:  # one message at a time on the stream
                await context.write(answer)

        tasks: set[asyncio.Task[None]] = set()
        try:
            with client_gone("ModelStreamInfer"):
                async for data in requests:
                    try:
                        with self.pipeline.exchange("grpc_typed", len(data)) as exchange:
                            request = await self._decode(exchange, data)
                            empty_final = request.parameters.pop(EMPTY_FINAL_PARAMETER, False)
                            model = exchange.model
                            if model is not None and model.decoupled:
                                while len(tasks) >= STREAM_REQUESTS:
                                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                                run = self._responses(exchange, request, empty_final is True, write)
                                task = asyncio.ensure_future(run)
                                tasks.add(task)
                                task.add_done_callback(tasks.discard)
                                continue  # the task counts it (this block saw no result)
                            response = await exchange.run(request)
                            response.parameters[FINAL_PARAMETER] = True
                            answer = pb.encode_stream_response(pb.encode_response(response))
                            exchange.sent(len(answer))
                    except Exception as exc:
                        answer = pb.encode_stream_error(_logged(exc, "ModelStreamInfer").message)
                    await write(answer)
                if tasks:
                    await asyncio.wait(tasks)
        finally:
            for task in tasks:  # the client went away: each model's generator is closed
                task.cancel()
            if tasks:
                await asyncio.wait(tasks)

    async def _responses(
        self,
        exchange: Exchange,
        request: InferRequest,
        empty_final: bool,
        write: Callable[[bytes], Awaitable[None]],
    ) -> None:
        """A decoupled model's responses to one request of a stream, each written before the
        next is asked of the model. A stream its client left is not counted (as over SSE):
        the model did not finish, and nobody was refused."""
        with client_gone("ModelStreamInfer"):
            try:
                with exchange, client_gone("ModelStreamInfer"):
                    sent = 0
                    async with Responses(exchange, request, exchange.model) as responses:
                        while (response := await responses.next()) is not None:
                            response.parameters[FINAL_PARAMETER] = responses.single
                            answer = pb.encode_stream_response(pb.encode_response(response))
                            await write(answer)
                            sent += len(answer)
                        if empty_final and not responses.single:
                            answer = pb.encode_response(responses.empty_final())
                            await write(pb.encode_stream_response(answer))
                    exchange.sent(sent)
            except Exception as exc:
                await write(pb.encode_stream_error(_logged(exc, "ModelStreamInfer").message))

    # ------------------------------------------------------------------ errors

    async def _guard(self, context: Any, answer: Callable[[], Any]) -> Any:
        try:
            return answer()
        except Exception as exc:
            await self._abort(context, exc)

    async def _abort(self, context: Any, exc: BaseException) -> None:
        error = _logged(exc, "gRPC request")
        await context.abort(getattr(grpc.StatusCode, error.grpc_code), error.message)

    # ------------------------------------------------------------------ registration

    def handler(self) -> grpc.GenericRpcHandler:
        """The generic handler serving every RPC of the service."""

        def unary(method: Any, request: Any, response: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(
                method,
                request_deserializer=request.FromString,
                response_serializer=response.SerializeToString,
            )

        methods = {
            "ServerLive": unary(self.server_live, pb2.ServerLiveRequest, pb2.ServerLiveResponse),
            "ServerReady": unary(
                self.server_ready, pb2.ServerReadyRequest, pb2.ServerReadyResponse
            ),
            "ModelReady": unary(self.model_ready, pb2.ModelReadyRequest, pb2.ModelReadyResponse),
            "ServerMetadata": unary(
                self.server_metadata, pb2.ServerMetadataRequest, pb2.ServerMetadataResponse
            ),
            "ModelMetadata": unary(
                self.model_metadata, pb2.ModelMetadataRequest, pb2.ModelMetadataResponse
            ),
            # Bytes in, bytes out: oipcodec.pb reads and writes the messages itself.
            "ModelInfer": grpc.unary_unary_rpc_method_handler(self.model_infer),
            "ModelStreamInfer": grpc.stream_stream_rpc_method_handler(self.model_stream_infer),
            "ModelConfig": unary(
                self.model_config, pb2.ModelConfigRequest, pb2.ModelConfigResponse
            ),
            "ModelStatistics": unary(
                self.model_statistics, pb2.ModelStatisticsRequest, pb2.ModelStatisticsResponse
            ),
            "RepositoryIndex": unary(
                self.repository_index, pb2.RepositoryIndexRequest, pb2.RepositoryIndexResponse
            ),
            "RepositoryModelLoad": unary(
                self.repository_model_load,
                pb2.RepositoryModelLoadRequest,
                pb2.RepositoryModelLoadResponse,
            ),
            "RepositoryModelUnload": unary(
                self.repository_model_unload,
                pb2.RepositoryModelUnloadRequest,
                pb2.RepositoryModelUnloadResponse,
            ),
        }
        if self.registry.shared_memory is not None:
            for rpc, method in (
                ("SystemSharedMemoryStatus", self.system_shared_memory_status),
                ("SystemSharedMemoryRegister", self.system_shared_memory_register),
                ("SystemSharedMemoryUnregister", self.system_shared_memory_unregister),
                ("CudaSharedMemoryStatus", self.cuda_shared_memory_status),
                ("CudaSharedMemoryRegister", self.cuda_shared_memory_register),
                ("CudaSharedMemoryUnregister", self.cuda_shared_memory_unregister),
            ):
                methods[rpc] = unary(
                    method, getattr(pb2, f"{rpc}Request"), getattr(pb2, f"{rpc}Response")
                )
        return grpc.method_handlers_generic_handler(SERVICE, methods)


def _logged(exc: BaseException, where: str) -> RequestError:
    error = request_error_for(exc)
    if error.http_status >= 500 and not isinstance(exc, RequestError):
        log.error("%s failed", where, exc_info=exc)
    else:
        log.info("%s -> %s: %s", where, error.grpc_code, error.message)
    return error
