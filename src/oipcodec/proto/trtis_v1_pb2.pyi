from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DataType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TYPE_INVALID: _ClassVar[DataType]
    TYPE_BOOL: _ClassVar[DataType]
    TYPE_UINT8: _ClassVar[DataType]
    TYPE_UINT16: _ClassVar[DataType]
    TYPE_UINT32: _ClassVar[DataType]
    TYPE_UINT64: _ClassVar[DataType]
    TYPE_INT8: _ClassVar[DataType]
    TYPE_INT16: _ClassVar[DataType]
    TYPE_INT32: _ClassVar[DataType]
    TYPE_INT64: _ClassVar[DataType]
    TYPE_FP16: _ClassVar[DataType]
    TYPE_FP32: _ClassVar[DataType]
    TYPE_FP64: _ClassVar[DataType]
    TYPE_STRING: _ClassVar[DataType]

class RequestStatusCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INVALID: _ClassVar[RequestStatusCode]
    SUCCESS: _ClassVar[RequestStatusCode]
    UNKNOWN: _ClassVar[RequestStatusCode]
    INTERNAL: _ClassVar[RequestStatusCode]
    NOT_FOUND: _ClassVar[RequestStatusCode]
    INVALID_ARG: _ClassVar[RequestStatusCode]
    UNAVAILABLE: _ClassVar[RequestStatusCode]
    UNSUPPORTED: _ClassVar[RequestStatusCode]
    ALREADY_EXISTS: _ClassVar[RequestStatusCode]

class ModelReadyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MODEL_UNKNOWN: _ClassVar[ModelReadyState]
    MODEL_READY: _ClassVar[ModelReadyState]
    MODEL_UNAVAILABLE: _ClassVar[ModelReadyState]
    MODEL_LOADING: _ClassVar[ModelReadyState]
    MODEL_UNLOADING: _ClassVar[ModelReadyState]

class ServerReadyState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SERVER_INVALID: _ClassVar[ServerReadyState]
    SERVER_INITIALIZING: _ClassVar[ServerReadyState]
    SERVER_READY: _ClassVar[ServerReadyState]
    SERVER_EXITING: _ClassVar[ServerReadyState]
    SERVER_FAILED_TO_INITIALIZE: _ClassVar[ServerReadyState]
TYPE_INVALID: DataType
TYPE_BOOL: DataType
TYPE_UINT8: DataType
TYPE_UINT16: DataType
TYPE_UINT32: DataType
TYPE_UINT64: DataType
TYPE_INT8: DataType
TYPE_INT16: DataType
TYPE_INT32: DataType
TYPE_INT64: DataType
TYPE_FP16: DataType
TYPE_FP32: DataType
TYPE_FP64: DataType
TYPE_STRING: DataType
INVALID: RequestStatusCode
SUCCESS: RequestStatusCode
UNKNOWN: RequestStatusCode
INTERNAL: RequestStatusCode
NOT_FOUND: RequestStatusCode
INVALID_ARG: RequestStatusCode
UNAVAILABLE: RequestStatusCode
UNSUPPORTED: RequestStatusCode
ALREADY_EXISTS: RequestStatusCode
MODEL_UNKNOWN: ModelReadyState
MODEL_READY: ModelReadyState
MODEL_UNAVAILABLE: ModelReadyState
MODEL_LOADING: ModelReadyState
MODEL_UNLOADING: ModelReadyState
SERVER_INVALID: ServerReadyState
SERVER_INITIALIZING: ServerReadyState
SERVER_READY: ServerReadyState
SERVER_EXITING: ServerReadyState
SERVER_FAILED_TO_INITIALIZE: ServerReadyState

class ModelInput(_message.Message):
    __slots__ = ("name", "data_type", "format", "dims")
    class Format(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        FORMAT_NONE: _ClassVar[ModelInput.Format]
        FORMAT_NHWC: _ClassVar[ModelInput.Format]
        FORMAT_NCHW: _ClassVar[ModelInput.Format]
    FORMAT_NONE: ModelInput.Format
    FORMAT_NHWC: ModelInput.Format
    FORMAT_NCHW: ModelInput.Format
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    DIMS_FIELD_NUMBER: _ClassVar[int]
    name: str
    data_type: DataType
    format: ModelInput.Format
    dims: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, name: _Optional[str] = ..., data_type: _Optional[_Union[DataType, str]] = ..., format: _Optional[_Union[ModelInput.Format, str]] = ..., dims: _Optional[_Iterable[int]] = ...) -> None: ...

class ModelOutput(_message.Message):
    __slots__ = ("name", "data_type", "dims", "label_filename")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_TYPE_FIELD_NUMBER: _ClassVar[int]
    DIMS_FIELD_NUMBER: _ClassVar[int]
    LABEL_FILENAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    data_type: DataType
    dims: _containers.RepeatedScalarFieldContainer[int]
    label_filename: str
    def __init__(self, name: _Optional[str] = ..., data_type: _Optional[_Union[DataType, str]] = ..., dims: _Optional[_Iterable[int]] = ..., label_filename: _Optional[str] = ...) -> None: ...

class ModelConfig(_message.Message):
    __slots__ = ("name", "platform", "max_batch_size", "input", "output")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    name: str
    platform: str
    max_batch_size: int
    input: _containers.RepeatedCompositeFieldContainer[ModelInput]
    output: _containers.RepeatedCompositeFieldContainer[ModelOutput]
    def __init__(self, name: _Optional[str] = ..., platform: _Optional[str] = ..., max_batch_size: _Optional[int] = ..., input: _Optional[_Iterable[_Union[ModelInput, _Mapping]]] = ..., output: _Optional[_Iterable[_Union[ModelOutput, _Mapping]]] = ...) -> None: ...

class RequestStatus(_message.Message):
    __slots__ = ("code", "msg", "server_id", "request_id")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MSG_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    code: RequestStatusCode
    msg: str
    server_id: str
    request_id: int
    def __init__(self, code: _Optional[_Union[RequestStatusCode, str]] = ..., msg: _Optional[str] = ..., server_id: _Optional[str] = ..., request_id: _Optional[int] = ...) -> None: ...

class StatDuration(_message.Message):
    __slots__ = ("count", "total_time_ns")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TIME_NS_FIELD_NUMBER: _ClassVar[int]
    count: int
    total_time_ns: int
    def __init__(self, count: _Optional[int] = ..., total_time_ns: _Optional[int] = ...) -> None: ...

class InferRequestStats(_message.Message):
    __slots__ = ("success", "failed", "compute", "queue")
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    success: StatDuration
    failed: StatDuration
    compute: StatDuration
    queue: StatDuration
    def __init__(self, success: _Optional[_Union[StatDuration, _Mapping]] = ..., failed: _Optional[_Union[StatDuration, _Mapping]] = ..., compute: _Optional[_Union[StatDuration, _Mapping]] = ..., queue: _Optional[_Union[StatDuration, _Mapping]] = ...) -> None: ...

class ModelReadyStateReason(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    def __init__(self, message: _Optional[str] = ...) -> None: ...

class ModelVersionStatus(_message.Message):
    __slots__ = ("ready_state", "infer_stats", "model_execution_count", "model_inference_count", "ready_state_reason", "last_inference_timestamp_milliseconds")
    class InferStatsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: InferRequestStats
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[InferRequestStats, _Mapping]] = ...) -> None: ...
    READY_STATE_FIELD_NUMBER: _ClassVar[int]
    INFER_STATS_FIELD_NUMBER: _ClassVar[int]
    MODEL_EXECUTION_COUNT_FIELD_NUMBER: _ClassVar[int]
    MODEL_INFERENCE_COUNT_FIELD_NUMBER: _ClassVar[int]
    READY_STATE_REASON_FIELD_NUMBER: _ClassVar[int]
    LAST_INFERENCE_TIMESTAMP_MILLISECONDS_FIELD_NUMBER: _ClassVar[int]
    ready_state: ModelReadyState
    infer_stats: _containers.MessageMap[int, InferRequestStats]
    model_execution_count: int
    model_inference_count: int
    ready_state_reason: ModelReadyStateReason
    last_inference_timestamp_milliseconds: int
    def __init__(self, ready_state: _Optional[_Union[ModelReadyState, str]] = ..., infer_stats: _Optional[_Mapping[int, InferRequestStats]] = ..., model_execution_count: _Optional[int] = ..., model_inference_count: _Optional[int] = ..., ready_state_reason: _Optional[_Union[ModelReadyStateReason, _Mapping]] = ..., last_inference_timestamp_milliseconds: _Optional[int] = ...) -> None: ...

class ModelStatus(_message.Message):
    __slots__ = ("config", "version_status")
    class VersionStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: ModelVersionStatus
        def __init__(self, key: _Optional[int] = ..., value: _Optional[_Union[ModelVersionStatus, _Mapping]] = ...) -> None: ...
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    VERSION_STATUS_FIELD_NUMBER: _ClassVar[int]
    config: ModelConfig
    version_status: _containers.MessageMap[int, ModelVersionStatus]
    def __init__(self, config: _Optional[_Union[ModelConfig, _Mapping]] = ..., version_status: _Optional[_Mapping[int, ModelVersionStatus]] = ...) -> None: ...

class ServerStatus(_message.Message):
    __slots__ = ("id", "version", "ready_state", "uptime_ns", "model_status")
    class ModelStatusEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: ModelStatus
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[ModelStatus, _Mapping]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    READY_STATE_FIELD_NUMBER: _ClassVar[int]
    UPTIME_NS_FIELD_NUMBER: _ClassVar[int]
    MODEL_STATUS_FIELD_NUMBER: _ClassVar[int]
    id: str
    version: str
    ready_state: ServerReadyState
    uptime_ns: int
    model_status: _containers.MessageMap[str, ModelStatus]
    def __init__(self, id: _Optional[str] = ..., version: _Optional[str] = ..., ready_state: _Optional[_Union[ServerReadyState, str]] = ..., uptime_ns: _Optional[int] = ..., model_status: _Optional[_Mapping[str, ModelStatus]] = ...) -> None: ...

class SharedMemoryRegion(_message.Message):
    __slots__ = ("name", "system_shared_memory", "cuda_shared_memory", "byte_size")
    class SystemSharedMemory(_message.Message):
        __slots__ = ("shared_memory_key", "offset")
        SHARED_MEMORY_KEY_FIELD_NUMBER: _ClassVar[int]
        OFFSET_FIELD_NUMBER: _ClassVar[int]
        shared_memory_key: str
        offset: int
        def __init__(self, shared_memory_key: _Optional[str] = ..., offset: _Optional[int] = ...) -> None: ...
    class CudaSharedMemory(_message.Message):
        __slots__ = ("device_id",)
        DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
        device_id: int
        def __init__(self, device_id: _Optional[int] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
    CUDA_SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
    BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    system_shared_memory: SharedMemoryRegion.SystemSharedMemory
    cuda_shared_memory: SharedMemoryRegion.CudaSharedMemory
    byte_size: int
    def __init__(self, name: _Optional[str] = ..., system_shared_memory: _Optional[_Union[SharedMemoryRegion.SystemSharedMemory, _Mapping]] = ..., cuda_shared_memory: _Optional[_Union[SharedMemoryRegion.CudaSharedMemory, _Mapping]] = ..., byte_size: _Optional[int] = ...) -> None: ...

class ModelRepositoryIndex(_message.Message):
    __slots__ = ("models",)
    class ModelEntry(_message.Message):
        __slots__ = ("name",)
        NAME_FIELD_NUMBER: _ClassVar[int]
        name: str
        def __init__(self, name: _Optional[str] = ...) -> None: ...
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[ModelRepositoryIndex.ModelEntry]
    def __init__(self, models: _Optional[_Iterable[_Union[ModelRepositoryIndex.ModelEntry, _Mapping]]] = ...) -> None: ...

class InferSharedMemory(_message.Message):
    __slots__ = ("name", "offset", "byte_size")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
    name: str
    offset: int
    byte_size: int
    def __init__(self, name: _Optional[str] = ..., offset: _Optional[int] = ..., byte_size: _Optional[int] = ...) -> None: ...

class InferRequestHeader(_message.Message):
    __slots__ = ("id", "flags", "correlation_id", "batch_size", "input", "output")
    class Flag(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        FLAG_NONE: _ClassVar[InferRequestHeader.Flag]
        FLAG_SEQUENCE_START: _ClassVar[InferRequestHeader.Flag]
        FLAG_SEQUENCE_END: _ClassVar[InferRequestHeader.Flag]
    FLAG_NONE: InferRequestHeader.Flag
    FLAG_SEQUENCE_START: InferRequestHeader.Flag
    FLAG_SEQUENCE_END: InferRequestHeader.Flag
    class Input(_message.Message):
        __slots__ = ("name", "dims", "batch_byte_size", "shared_memory")
        NAME_FIELD_NUMBER: _ClassVar[int]
        DIMS_FIELD_NUMBER: _ClassVar[int]
        BATCH_BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
        SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
        name: str
        dims: _containers.RepeatedScalarFieldContainer[int]
        batch_byte_size: int
        shared_memory: InferSharedMemory
        def __init__(self, name: _Optional[str] = ..., dims: _Optional[_Iterable[int]] = ..., batch_byte_size: _Optional[int] = ..., shared_memory: _Optional[_Union[InferSharedMemory, _Mapping]] = ...) -> None: ...
    class Output(_message.Message):
        __slots__ = ("name", "cls", "shared_memory")
        class Class(_message.Message):
            __slots__ = ("count",)
            COUNT_FIELD_NUMBER: _ClassVar[int]
            count: int
            def __init__(self, count: _Optional[int] = ...) -> None: ...
        NAME_FIELD_NUMBER: _ClassVar[int]
        CLS_FIELD_NUMBER: _ClassVar[int]
        SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
        name: str
        cls: InferRequestHeader.Output.Class
        shared_memory: InferSharedMemory
        def __init__(self, name: _Optional[str] = ..., cls: _Optional[_Union[InferRequestHeader.Output.Class, _Mapping]] = ..., shared_memory: _Optional[_Union[InferSharedMemory, _Mapping]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    FLAGS_FIELD_NUMBER: _ClassVar[int]
    CORRELATION_ID_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    id: int
    flags: int
    correlation_id: int
    batch_size: int
    input: _containers.RepeatedCompositeFieldContainer[InferRequestHeader.Input]
    output: _containers.RepeatedCompositeFieldContainer[InferRequestHeader.Output]
    def __init__(self, id: _Optional[int] = ..., flags: _Optional[int] = ..., correlation_id: _Optional[int] = ..., batch_size: _Optional[int] = ..., input: _Optional[_Iterable[_Union[InferRequestHeader.Input, _Mapping]]] = ..., output: _Optional[_Iterable[_Union[InferRequestHeader.Output, _Mapping]]] = ...) -> None: ...

class InferResponseHeader(_message.Message):
    __slots__ = ("id", "model_name", "model_version", "batch_size", "output")
    class Output(_message.Message):
        __slots__ = ("name", "raw", "batch_classes")
        class Raw(_message.Message):
            __slots__ = ("dims", "batch_byte_size")
            DIMS_FIELD_NUMBER: _ClassVar[int]
            BATCH_BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
            dims: _containers.RepeatedScalarFieldContainer[int]
            batch_byte_size: int
            def __init__(self, dims: _Optional[_Iterable[int]] = ..., batch_byte_size: _Optional[int] = ...) -> None: ...
        class Class(_message.Message):
            __slots__ = ("idx", "value", "label")
            IDX_FIELD_NUMBER: _ClassVar[int]
            VALUE_FIELD_NUMBER: _ClassVar[int]
            LABEL_FIELD_NUMBER: _ClassVar[int]
            idx: int
            value: float
            label: str
            def __init__(self, idx: _Optional[int] = ..., value: _Optional[float] = ..., label: _Optional[str] = ...) -> None: ...
        class Classes(_message.Message):
            __slots__ = ("cls",)
            CLS_FIELD_NUMBER: _ClassVar[int]
            cls: _containers.RepeatedCompositeFieldContainer[InferResponseHeader.Output.Class]
            def __init__(self, cls: _Optional[_Iterable[_Union[InferResponseHeader.Output.Class, _Mapping]]] = ...) -> None: ...
        NAME_FIELD_NUMBER: _ClassVar[int]
        RAW_FIELD_NUMBER: _ClassVar[int]
        BATCH_CLASSES_FIELD_NUMBER: _ClassVar[int]
        name: str
        raw: InferResponseHeader.Output.Raw
        batch_classes: _containers.RepeatedCompositeFieldContainer[InferResponseHeader.Output.Classes]
        def __init__(self, name: _Optional[str] = ..., raw: _Optional[_Union[InferResponseHeader.Output.Raw, _Mapping]] = ..., batch_classes: _Optional[_Iterable[_Union[InferResponseHeader.Output.Classes, _Mapping]]] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    id: int
    model_name: str
    model_version: int
    batch_size: int
    output: _containers.RepeatedCompositeFieldContainer[InferResponseHeader.Output]
    def __init__(self, id: _Optional[int] = ..., model_name: _Optional[str] = ..., model_version: _Optional[int] = ..., batch_size: _Optional[int] = ..., output: _Optional[_Iterable[_Union[InferResponseHeader.Output, _Mapping]]] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ("model_name",)
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    def __init__(self, model_name: _Optional[str] = ...) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ("request_status", "server_status")
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    SERVER_STATUS_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    server_status: ServerStatus
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ..., server_status: _Optional[_Union[ServerStatus, _Mapping]] = ...) -> None: ...

class HealthRequest(_message.Message):
    __slots__ = ("mode",)
    MODE_FIELD_NUMBER: _ClassVar[int]
    mode: str
    def __init__(self, mode: _Optional[str] = ...) -> None: ...

class HealthResponse(_message.Message):
    __slots__ = ("request_status", "health")
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    health: bool
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ..., health: _Optional[bool] = ...) -> None: ...

class ModelControlRequest(_message.Message):
    __slots__ = ("model_name", "type")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        UNLOAD: _ClassVar[ModelControlRequest.Type]
        LOAD: _ClassVar[ModelControlRequest.Type]
    UNLOAD: ModelControlRequest.Type
    LOAD: ModelControlRequest.Type
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    type: ModelControlRequest.Type
    def __init__(self, model_name: _Optional[str] = ..., type: _Optional[_Union[ModelControlRequest.Type, str]] = ...) -> None: ...

class ModelControlResponse(_message.Message):
    __slots__ = ("request_status",)
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ...) -> None: ...

class SharedMemoryControlRequest(_message.Message):
    __slots__ = ("register", "unregister", "unregister_all", "status")
    class Register(_message.Message):
        __slots__ = ("name", "system_shared_memory", "cuda_shared_memory", "byte_size")
        class SystemSharedMemoryIdentifier(_message.Message):
            __slots__ = ("shared_memory_key", "offset")
            SHARED_MEMORY_KEY_FIELD_NUMBER: _ClassVar[int]
            OFFSET_FIELD_NUMBER: _ClassVar[int]
            shared_memory_key: str
            offset: int
            def __init__(self, shared_memory_key: _Optional[str] = ..., offset: _Optional[int] = ...) -> None: ...
        class CUDASharedMemoryIdentifier(_message.Message):
            __slots__ = ("raw_handle", "device_id")
            RAW_HANDLE_FIELD_NUMBER: _ClassVar[int]
            DEVICE_ID_FIELD_NUMBER: _ClassVar[int]
            raw_handle: bytes
            device_id: int
            def __init__(self, raw_handle: _Optional[bytes] = ..., device_id: _Optional[int] = ...) -> None: ...
        NAME_FIELD_NUMBER: _ClassVar[int]
        SYSTEM_SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
        CUDA_SHARED_MEMORY_FIELD_NUMBER: _ClassVar[int]
        BYTE_SIZE_FIELD_NUMBER: _ClassVar[int]
        name: str
        system_shared_memory: SharedMemoryControlRequest.Register.SystemSharedMemoryIdentifier
        cuda_shared_memory: SharedMemoryControlRequest.Register.CUDASharedMemoryIdentifier
        byte_size: int
        def __init__(self, name: _Optional[str] = ..., system_shared_memory: _Optional[_Union[SharedMemoryControlRequest.Register.SystemSharedMemoryIdentifier, _Mapping]] = ..., cuda_shared_memory: _Optional[_Union[SharedMemoryControlRequest.Register.CUDASharedMemoryIdentifier, _Mapping]] = ..., byte_size: _Optional[int] = ...) -> None: ...
    class Unregister(_message.Message):
        __slots__ = ("name",)
        NAME_FIELD_NUMBER: _ClassVar[int]
        name: str
        def __init__(self, name: _Optional[str] = ...) -> None: ...
    class UnregisterAll(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    class Status(_message.Message):
        __slots__ = ()
        def __init__(self) -> None: ...
    REGISTER_FIELD_NUMBER: _ClassVar[int]
    UNREGISTER_FIELD_NUMBER: _ClassVar[int]
    UNREGISTER_ALL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    register: SharedMemoryControlRequest.Register
    unregister: SharedMemoryControlRequest.Unregister
    unregister_all: SharedMemoryControlRequest.UnregisterAll
    status: SharedMemoryControlRequest.Status
    def __init__(self, register: _Optional[_Union[SharedMemoryControlRequest.Register, _Mapping]] = ..., unregister: _Optional[_Union[SharedMemoryControlRequest.Unregister, _Mapping]] = ..., unregister_all: _Optional[_Union[SharedMemoryControlRequest.UnregisterAll, _Mapping]] = ..., status: _Optional[_Union[SharedMemoryControlRequest.Status, _Mapping]] = ...) -> None: ...

class SharedMemoryControlResponse(_message.Message):
    __slots__ = ("request_status", "shared_memory_status")
    class Status(_message.Message):
        __slots__ = ("shared_memory_region",)
        SHARED_MEMORY_REGION_FIELD_NUMBER: _ClassVar[int]
        shared_memory_region: _containers.RepeatedCompositeFieldContainer[SharedMemoryRegion]
        def __init__(self, shared_memory_region: _Optional[_Iterable[_Union[SharedMemoryRegion, _Mapping]]] = ...) -> None: ...
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    SHARED_MEMORY_STATUS_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    shared_memory_status: SharedMemoryControlResponse.Status
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ..., shared_memory_status: _Optional[_Union[SharedMemoryControlResponse.Status, _Mapping]] = ...) -> None: ...

class InferRequest(_message.Message):
    __slots__ = ("model_name", "model_version", "meta_data", "raw_input")
    MODEL_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    META_DATA_FIELD_NUMBER: _ClassVar[int]
    RAW_INPUT_FIELD_NUMBER: _ClassVar[int]
    model_name: str
    model_version: int
    meta_data: InferRequestHeader
    raw_input: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, model_name: _Optional[str] = ..., model_version: _Optional[int] = ..., meta_data: _Optional[_Union[InferRequestHeader, _Mapping]] = ..., raw_input: _Optional[_Iterable[bytes]] = ...) -> None: ...

class InferResponse(_message.Message):
    __slots__ = ("request_status", "meta_data", "raw_output")
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    META_DATA_FIELD_NUMBER: _ClassVar[int]
    RAW_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    meta_data: InferResponseHeader
    raw_output: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ..., meta_data: _Optional[_Union[InferResponseHeader, _Mapping]] = ..., raw_output: _Optional[_Iterable[bytes]] = ...) -> None: ...

class RepositoryRequest(_message.Message):
    __slots__ = ("index",)
    INDEX_FIELD_NUMBER: _ClassVar[int]
    index: bool
    def __init__(self, index: _Optional[bool] = ...) -> None: ...

class RepositoryResponse(_message.Message):
    __slots__ = ("request_status", "index")
    REQUEST_STATUS_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    request_status: RequestStatus
    index: ModelRepositoryIndex
    def __init__(self, request_status: _Optional[_Union[RequestStatus, _Mapping]] = ..., index: _Optional[_Union[ModelRepositoryIndex, _Mapping]] = ...) -> None: ...
