"""The OIP datatype table and the numpy mappings."""

from __future__ import annotations

import numpy as np
import pytest

from oipcodec import datatypes
from oipcodec.errors import DatatypeError, OIPError

ALL = [
    "BOOL",
    "UINT8",
    "UINT16",
    "UINT32",
    "UINT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "FP16",
    "FP32",
    "FP64",
    "BF16",
    "BYTES",
]


def test_table_has_every_oip_datatype_in_protocol_order() -> None:
    assert list(datatypes.DATATYPES) == ALL


@pytest.mark.parametrize(
    ("name", "itemsize", "field"),
    [
        ("BOOL", 1, "bool_contents"),
        ("UINT8", 1, "uint_contents"),
        ("UINT16", 2, "uint_contents"),
        ("UINT32", 4, "uint_contents"),
        ("UINT64", 8, "uint64_contents"),
        ("INT8", 1, "int_contents"),
        ("INT16", 2, "int_contents"),
        ("INT32", 4, "int_contents"),
        ("INT64", 8, "int64_contents"),
        ("FP16", 2, None),
        ("FP32", 4, "fp32_contents"),
        ("FP64", 8, "fp64_contents"),
        ("BF16", 2, None),
        ("BYTES", 0, "bytes_contents"),
    ],
)
def test_itemsize_and_contents_field(name: str, itemsize: int, field: str | None) -> None:
    row = datatypes.get(name)
    assert (row.itemsize, row.contents_field) == (itemsize, field)
    if row.numpy_dtype is not None and not row.is_bytes:
        assert row.numpy_dtype.itemsize == itemsize


@pytest.mark.parametrize("name", [n for n in ALL if n not in ("BF16",)])
def test_numpy_round_trip(name: str) -> None:
    assert datatypes.from_numpy(datatypes.to_numpy(name)) == name


def test_bf16_maps_to_ml_dtypes() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert datatypes.to_numpy("BF16") == np.dtype(ml_dtypes.bfloat16)
    assert datatypes.from_numpy(ml_dtypes.bfloat16) == "BF16"


@pytest.mark.parametrize("dtype", ["S5", "U3", object, np.bytes_, np.str_])
def test_string_dtypes_map_to_bytes(dtype: object) -> None:
    assert datatypes.from_numpy(dtype) == "BYTES"


@pytest.mark.parametrize("dtype", [">f4", "<f4", ">i8", "<u2"])
def test_byte_order_is_ignored(dtype: str) -> None:
    assert datatypes.from_numpy(dtype) == datatypes.from_numpy(np.dtype(dtype).newbyteorder("="))


@pytest.mark.parametrize("name", ["fp32", "FLOAT32", "", "TYPE_FP32", None, 3])
def test_unknown_datatype_lists_the_valid_ones(name: object) -> None:
    with pytest.raises(DatatypeError, match=r"expected one of BOOL, UINT8.*BYTES") as info:
        datatypes.get(name)  # type: ignore[arg-type]
    assert isinstance(info.value, OIPError)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("dtype", [np.complex64, "datetime64[s]", np.float128, "V8"])
def test_unsupported_dtype_lists_the_supported_ones(dtype: object) -> None:
    with pytest.raises(DatatypeError, match="has no OIP datatype; supported dtypes: bool"):
        datatypes.from_numpy(dtype)


def test_not_a_dtype() -> None:
    with pytest.raises(DatatypeError, match="not a numpy dtype"):
        datatypes.from_numpy("no-such-dtype")


def test_kind_helpers() -> None:
    assert datatypes.get("BF16").is_float and not datatypes.get("BF16").is_integer
    assert datatypes.get("UINT64").is_integer and datatypes.get("INT8").is_integer
    assert datatypes.get("BYTES").is_bytes and not datatypes.get("BOOL").is_integer
