"""The fused REST kernels' differential fuzzer (tools/fusedrest_fuzz.py), seeded: 2,000 cases
on every run (native against pure, both against ``rest``), the oracle shown able to fail, and
each failure a long run found, as a fixed case (xfail strict until the kernel is fixed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from oipcodec import rest
from oipcodec._shared.fusedrest import fused_plan
from oipcodec._shared.jsonencode import prepare
from oipcodec.errors import OIPError
from oipcodec.limits import Limits

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "fusedrest_fuzz.py"


def _fuzz() -> ModuleType:
    """tools/fusedrest_fuzz.py, imported once."""
    if TOOL.stem in sys.modules:
        return sys.modules[TOOL.stem]
    if not TOOL.exists():
        pytest.skip("tools/ is not next to the tests (an installed wheel)")
    spec = importlib.util.spec_from_file_location(TOOL.stem, TOOL)
    assert spec is not None and spec.loader is not None
    module = sys.modules[TOOL.stem] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fuzzer_finds_nothing_new(both: Any) -> None:
    fuzz = _fuzz()
    native, pure = both
    tally = fuzz.run(2_000, 7, native, pure)
    # Both sides of each comparison exercised: bodies the fused path takes, bodies only the
    # general decoder takes, and answers both encoders write.
    assert tally["fused"] > 150 and tally["general"] > 80 and tally["neither"] > 500, tally
    assert tally["encode fused"] > 100 and tally["encode None"] > 100, tally


def test_the_cases_are_the_seeds() -> None:
    fuzz = _fuzz()
    first = [fuzz.case(3, i)[2] for i in range(50)]
    again = [fuzz.case(3, i)[2] for i in range(50)]
    assert repr(first) == repr(again)
    assert repr(first) != repr([fuzz.case(4, i)[2] for i in range(50)])


def test_a_disagreement_is_found(both: Any) -> None:
    """The oracle can fail: a decode that takes what decode_request refuses, twins that differ,
    an encode that is not rest's."""
    fuzz = _fuzz()
    native, pure = both
    plan = fuzz.PLANS[0]
    lenient = SimpleNamespace(decode_inputs=lambda body, plan: ({}, None, None, False))
    with pytest.raises(AssertionError, match="decode_request refused"):
        fuzz.check_decode(lenient, lenient, plan, b'{"inputs":[{"name":"x"}]}')
    body = b'{"inputs":[{"name":"x","shape":[1,1],"datatype":"FP32","data":[1]},' + (
        b'{"name":"k","shape":[2],"datatype":"INT64","data":[4,5]}]}'
    )
    assert fuzz.check_decode(native, pure, plan, body) == "fused"
    with pytest.raises(AssertionError, match="native gave"):
        fuzz.check_decode(native, lenient, plan, body)
    off = SimpleNamespace(encode_outputs=lambda plan, rid, outputs: b'{"model_name":"m"}')
    outputs = {"y": np.ones((1, 2), np.float32)}
    assert fuzz.check_encode(native, pure, plan, None, outputs) == "encode fused"
    with pytest.raises(AssertionError, match="rest"):
        fuzz.check_encode(off, off, plan, None, outputs)


# --------------------------------------------------------------------------- found by the fuzzer

BODY = (
    b'{"inputs":[{"name":"a","shape":[1],"datatype":"FP32","data":[1]},'
    b'{"name":"b","shape":[1],"datatype":"FP32","data":[2]}]}'
)


def test_a_request_with_more_inputs_than_max_tensors_is_not_taken(impl: Any) -> None:
    limits = Limits(max_tensors=1)
    with pytest.raises(OIPError, match="more than the limit of 1"):
        rest.decode_request(BODY, None, limits=limits)
    for inputs in (None, [("a", "FP32", (1,)), ("b", "FP32", (1,))]):
        plan = fused_plan("m", "1", inputs, None, limits)
        assert impl.decode_inputs(BODY, plan) is None


def test_escaped_data_nested_past_orjson_dumps_limit_is_a_decode_error() -> None:
    body = b'{"inputs":[{"name":"x","datatype":"FP32","shape":[1],"d\\u0061ta":%s1%s}]}' % (
        b"[" * 255,
        b"]" * 255,
    )
    with pytest.raises(OIPError, match="max_depth"):
        rest.decode_request(body, None)


# The JSON row writers of csrc/oipcodec/write load whole elements, so an array one byte off its
# type's alignment (np.frombuffer(buf, np.int32, offset=1), which numpy allows) is written from
# an aligned copy (found under UBSan by tools/fusedrest_fuzz.py).
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64, np.float16])
def test_a_misaligned_array_is_written_from_an_aligned_copy(impl: Any, dtype: Any) -> None:
    aligned = np.arange(6, dtype=dtype).reshape(2, 3)
    block = np.empty(aligned.nbytes + 1, np.uint8)[1:].view(dtype).reshape(aligned.shape)
    block[...] = aligned
    assert not block.flags.aligned
    datatype = {"e": "FP16", "f": "FP32", "d": "FP64"}.get(block.dtype.char) or (
        "INT32" if block.dtype.itemsize == 4 else "INT64"
    )
    assert prepare(block, datatype, False, "tokens").values.flags.aligned
    assert impl.array_to_json(block, datatype) == impl.array_to_json(aligned, datatype)
    plan = fused_plan("m", "1", [], [("y", datatype, (2, 3), False)])
    assert impl.encode_outputs(plan, None, {"y": block}) == impl.encode_outputs(
        plan, None, {"y": aligned}
    )
