"""The committed .proto and its generated modules: no drift, a runtime they accept, coexistence
with tritonclient's classes, and the fields the codec relies on."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from oipcodec.proto import open_inference_grpc_pb2 as pb

PROTO_DIR = Path(pb.__file__).parent  # the installed package's copy
ROOT = Path(__file__).resolve().parents[2]  # the source tree the tests belong to


def test_generated_modules_match_the_proto(tmp_path: Path) -> None:
    pytest.importorskip(
        "grpc_tools", reason="grpcio-tools (in the test extra) regenerates the modules"
    )
    from oipcodec.proto import regenerate

    regenerate.generate(tmp_path)
    for name in regenerate.GENERATED:
        committed = (PROTO_DIR / name).read_text(encoding="utf-8")
        fresh = (tmp_path / name).read_text(encoding="utf-8")
        assert committed == fresh, (
            f"{name} is out of date with its .proto: run python -m oipcodec.proto.regenerate"
        )


def test_declared_protobuf_accepts_the_generated_code() -> None:
    """The gencode checks the runtime at import; the lower bound in pyproject must satisfy it."""
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is 3.11+")
    import tomllib

    gencode = re.search(
        r"Protobuf Python Version: (\d+)\.(\d+)\.(\d+)",
        (PROTO_DIR / "open_inference_grpc_pb2.py").read_text(),
    )
    assert gencode
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (spec,) = [d for d in project["dependencies"] if d.startswith("protobuf")]
    lower = re.search(r">=(\d+)\.(\d+)\.(\d+)", spec)
    upper = re.search(r"<(\d+)", spec)
    assert lower and upper, spec
    floor = tuple(int(x) for x in lower.groups())
    generated = tuple(int(x) for x in gencode.groups())
    assert floor >= generated, f"pyproject allows protobuf {floor}, the gencode needs {generated}"
    assert int(upper.group(1)) == generated[0] + 1, "the gencode supports one protobuf major"


def test_coexists_with_tritonclient_classes() -> None:
    service_pb2 = pytest.importorskip("tritonclient.grpc.service_pb2")
    ours = pb.ModelInferRequest(model_name="m")
    ours.parameters["x"].int64_param = 3
    theirs = service_pb2.ModelInferRequest.FromString(ours.SerializeToString())
    assert theirs.model_name == "m" and theirs.parameters["x"].int64_param == 3


def test_service_and_fields() -> None:
    service = pb.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    assert service.full_name == "inference.GRPCInferenceService"
    assert [m.name for m in service.methods] == [
        "ServerLive", "ServerReady", "ModelReady", "ServerMetadata", "ModelMetadata",
        "ModelInfer", "ModelStreamInfer", "ModelConfig", "ModelStatistics", "RepositoryIndex",
        "RepositoryModelLoad", "RepositoryModelUnload",
        "SystemSharedMemoryStatus", "SystemSharedMemoryRegister", "SystemSharedMemoryUnregister",
        "CudaSharedMemoryStatus", "CudaSharedMemoryRegister", "CudaSharedMemoryUnregister",
        "TraceSetting",
    ]  # fmt: skip
    # Triton's trace extension, field for field (tritonclient's update_trace_settings).
    for message in (pb.TraceSettingRequest, pb.TraceSettingResponse):
        fields = {f.name: f.number for f in message.DESCRIPTOR.fields}
        assert fields == (
            {"settings": 1, "model_name": 2}
            if message is pb.TraceSettingRequest
            else {"settings": 1}
        )
        assert [(f.name, f.number) for f in message.SettingValue.DESCRIPTOR.fields] == [
            ("value", 1)
        ]
    stream = service.methods_by_name["ModelStreamInfer"]
    assert stream.client_streaming and stream.server_streaming
    fields = {f.name: f.number for f in pb.InferParameter.DESCRIPTOR.fields}
    assert fields == {
        "bool_param": 1,
        "int64_param": 2,
        "string_param": 3,
        "double_param": 4,
        "uint64_param": 5,
    }
    request = {f.name: f.number for f in pb.ModelInferRequest.DESCRIPTOR.fields}
    assert request == {
        "model_name": 1,
        "model_version": 2,
        "id": 3,
        "parameters": 4,
        "inputs": 5,
        "outputs": 6,
        "raw_input_contents": 7,
    }
    response = {f.name: f.number for f in pb.ModelInferResponse.DESCRIPTOR.fields}
    assert response == {
        "model_name": 1,
        "model_version": 2,
        "id": 3,
        "parameters": 4,
        "outputs": 5,
        "raw_output_contents": 6,
    }
    contents = [
        f.name for f in sorted(pb.InferTensorContents.DESCRIPTOR.fields, key=lambda f: f.number)
    ]
    assert contents == [
        "bool_contents",
        "int_contents",
        "int64_contents",
        "uint_contents",
        "uint64_contents",
        "fp32_contents",
        "fp64_contents",
        "bytes_contents",
    ]
    assert {f.name: f.number for f in pb.ModelStreamInferResponse.DESCRIPTOR.fields} == {
        "error_message": 1,
        "infer_response": 2,
    }


def test_grpc_module_imports() -> None:
    pytest.importorskip("grpc")
    from oipcodec.proto import open_inference_grpc_pb2_grpc as rpc

    assert hasattr(rpc, "GRPCInferenceServiceStub") and hasattr(rpc, "GRPCInferenceServiceServicer")


SHARED_MEMORY_MESSAGES = [
    f"{kind}SharedMemory{rpc}{end}"
    for kind in ("System", "Cuda")
    for rpc in ("Status", "Register", "Unregister")
    for end in ("Request", "Response")
]


@pytest.mark.parametrize("message", SHARED_MEMORY_MESSAGES)
def test_shared_memory_messages_are_tritons(message: str, recwarn: pytest.WarningsRecorder) -> None:
    """The shared-memory messages have Triton's field names, numbers and types (nested
    messages too), so that tritonclient's calls are understood unchanged."""
    service_pb2 = pytest.importorskip("tritonclient.grpc.service_pb2")

    def shape(descriptor: Any) -> Any:
        fields = sorted(
            (
                f.name,
                f.number,
                f.type,
                f.is_repeated,
                f.is_required,
                f.message_type and f.message_type.name,
            )
            for f in descriptor.fields
        )
        nested = sorted((n.name, shape(n)) for n in descriptor.nested_types)
        return fields, nested

    ours = getattr(pb, message).DESCRIPTOR
    theirs = getattr(service_pb2, message).DESCRIPTOR
    assert shape(ours) == shape(theirs)
    # protobuf's current accessors only (FieldDescriptor.label is deprecated since protobuf 6 and
    # flooded the summary with 50 warnings); the C descriptors swallow an "error" filter, so the
    # recorded warnings are checked instead.
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
    service = pb.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    rpc = message.removesuffix("Request").removesuffix("Response")
    method = service.methods_by_name[rpc]
    assert (method.input_type.name, method.output_type.name) == (f"{rpc}Request", f"{rpc}Response")


#: The messages of the configuration and statistics extensions, and where tritonclient's
#: generated modules define Triton's.
TRITON_MESSAGES = {
    "model_config_pb2": [
        "ModelInput",
        "ModelOutput",
        "ModelParameter",
        "ModelConfig",
    ],
    "service_pb2": [
        "ModelConfigRequest",
        "ModelConfigResponse",
        "ModelStatisticsRequest",
        "ModelStatisticsResponse",
        "ModelStatistics",
        "InferStatistics",
        "StatisticDuration",
        "InferBatchStatistics",
    ],
}


@pytest.mark.parametrize(
    ("module", "message"), [(m, n) for m, names in TRITON_MESSAGES.items() for n in names]
)
def test_extension_messages_are_tritons(module: str, message: str) -> None:
    """Every field declared for ModelConfig / ModelStatistics has Triton's name, number, type
    and cardinality, so either side's messages read the other's bytes."""
    theirs = pytest.importorskip(f"tritonclient.grpc.{module}").DESCRIPTOR
    triton = theirs.message_types_by_name[message]
    ours = pb.DESCRIPTOR.message_types_by_name[message]
    assert ours.full_name == triton.full_name
    for field in ours.fields:
        other = triton.fields_by_name.get(field.name)
        assert other is not None, f"{message}.{field.name} is not Triton's"
        assert (field.number, field.type) == (other.number, other.type), field.full_name
        assert field.is_repeated == other.is_repeated, field.full_name
        kind = field.message_type or field.enum_type
        their_kind = other.message_type or other.enum_type
        assert (kind and kind.full_name) == (their_kind and their_kind.full_name)


def test_datatype_enum_is_tritons() -> None:
    theirs = pytest.importorskip("tritonclient.grpc.model_config_pb2").DESCRIPTOR
    values = {v.name: v.number for v in pb.DESCRIPTOR.enum_types_by_name["DataType"].values}
    assert values == {v.name: v.number for v in theirs.enum_types_by_name["DataType"].values}
    formats = pb.ModelInput.DESCRIPTOR.enum_types_by_name["Format"].values
    their_formats = theirs.message_types_by_name["ModelInput"].enum_types_by_name["Format"].values
    assert {v.name: v.number for v in formats} == {v.name: v.number for v in their_formats}


def test_extension_rpcs_have_tritons_messages() -> None:
    theirs = pytest.importorskip("tritonclient.grpc.service_pb2").DESCRIPTOR
    triton = theirs.services_by_name["GRPCInferenceService"]
    service = pb.DESCRIPTOR.services_by_name["GRPCInferenceService"]
    for name in ("ModelConfig", "ModelStatistics"):
        ours, other = service.methods_by_name[name], triton.methods_by_name[name]
        assert ours.input_type.full_name == other.input_type.full_name
        assert ours.output_type.full_name == other.output_type.full_name
