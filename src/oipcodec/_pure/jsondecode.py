"""JSON data array text to a typed array: the pure twin and reference of
``oipcodec._native.jsondecode``.

The OIP REST ``data`` field holds a tensor's elements in row-major order, flat or nested by
shape, and its element count must equal the product of the shape; Triton's rules are followed:
integer datatypes need JSON integers, BOOL true/false, BYTES strings, any number for floats,
nesting at most 100 deep. The grammar and every message live in
:mod:`oipcodec._shared.jsondecode`; this module is the walk over the text, written to be read.

The walk is a small tokenizer (regular expressions) that checks the structure and the form
of each element as it goes, collecting the element tokens. Their values (integer ranges,
correctly rounded floats) are computed in bulk when the walk ends, or, if the walk stops at a
problem, for the tokens before it, so that the first problem in text order is the one
reported, as in the native kernel, which does everything in one pass.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from oipcodec._shared import contract
from oipcodec._shared.jsondecode import (
    BARE,
    CONTRACTS,
    DEPTH,
    ELEMENT,
    EXPECTED_ARRAY,
    EXPECTED_OPEN,
    EXPECTED_SEP,
    K_BF16_AS_FP32,
    K_BYTES,
    TOO_FEW,
    TOO_MANY,
    TRAILING,
    ElementProblem,
    Job,
    convert,
    decode_string,
    lexically_valid,
    prepare,
)
from oipcodec.errors import DecodeError

__all__ = ["json_to_array"]

_OPEN, _CLOSE, _COMMA = 0x5B, 0x5D, 0x2C
_WS = frozenset(b" \t\n\r")


@contract(CONTRACTS)
def json_to_array(
    text: Any,
    datatype: str,
    shape: Any,
    *,
    max_depth: int = 100,
    out: np.ndarray[Any, Any] | None = None,
) -> np.ndarray[Any, Any]:
    job = prepare(text, datatype, shape, max_depth, out)
    return _Walk(job).run()


class _Walk:
    def __init__(self, job: Job) -> None:
        self.job = job
        self.data = bytes(job.data)
        self.size = len(self.data)
        self.tokens: list[bytes] = []  # element tokens (BYTES: decoded values)
        self.offsets: list[int] = []
        self.counts: list[int] = []  # entries so far in each open array, outermost first
        self.flat = True

    # -- the walk ---------------------------------------------------------------------------

    def run(self) -> np.ndarray:
        job, data = self.job, self.data
        pos = self.ws(0)
        if not job.shape and (pos == self.size or data[pos] != _OPEN):
            pos = self.ws(self.element(pos))  # shape []: the bare value
            if pos != self.size:
                self.fail(TRAILING, pos)
            return self.finish()
        if pos == self.size or data[pos] != _OPEN:
            self.fail(EXPECTED_OPEN, pos)
        if job.max_depth < 1:
            self.fail(DEPTH, pos)
        first = self.ws(pos + 1)
        self.flat = not (len(job.shape) >= 2 and first < self.size and data[first] == _OPEN)
        dims = (job.count,) if self.flat else job.shape
        pos = self.ws(self.array(first, dims))
        if pos != self.size:
            self.fail(TRAILING, pos)
        return self.finish()

    def array(self, pos: int, dims: tuple[int, ...]) -> int:
        """Read the entries of an array whose '[' is already read (pos is at its first token)
        and its ']'; ``dims`` are the dimensions from this level down. Returns the offset
        after the ']'."""
        data, level = self.data, len(self.counts)
        self.counts.append(0)
        if pos < self.size and data[pos] == _CLOSE:
            return self.close(pos, dims[0])
        while True:
            if pos == self.size:
                self.fail(ELEMENT if len(dims) == 1 else EXPECTED_ARRAY, pos)
            if self.counts[level] == dims[0]:
                self.fail(TOO_MANY, pos)
            if len(dims) > 1:
                if data[pos] != _OPEN:
                    self.fail(EXPECTED_ARRAY, pos)
                if level + 2 > self.job.max_depth:
                    self.fail(DEPTH, pos)
                pos = self.array(self.ws(pos + 1), dims[1:])
            else:
                if data[pos] == _OPEN:
                    self.fail(*self.too_deep(pos, level + 1))
                pos = self.element(pos)
            self.counts[level] += 1
            pos = self.ws(pos)
            if pos < self.size and data[pos] == _COMMA:
                pos = self.ws(pos + 1)
                if pos < self.size and data[pos] == _CLOSE:  # trailing comma
                    self.fail(ELEMENT if len(dims) == 1 else EXPECTED_ARRAY, pos)
                continue
            if pos < self.size and data[pos] == _CLOSE:
                return self.close(pos, dims[0])
            self.fail(EXPECTED_SEP, pos)

    def close(self, pos: int, dim: int) -> int:
        if self.counts[-1] != dim:
            self.fail(TOO_FEW, pos)
        self.counts.pop()
        return pos + 1

    def too_deep(self, pos: int, depth: int) -> tuple[int, int]:
        """The stop for a '[' where an element belongs (``depth`` arrays are open): DEPTH at
        the '[' that goes beyond max_depth when the run of '[' starting there does, else
        ELEMENT at pos."""
        data, start = self.data, pos
        while pos < self.size and data[pos] == _OPEN:
            depth += 1
            if depth > self.job.max_depth:
                return DEPTH, pos
            pos = self.ws(pos + 1)
        return ELEMENT, start

    def element(self, pos: int) -> int:
        """Check the element token at pos (its form only, values come later); returns the
        offset after it."""
        if self.job.kind == K_BYTES:
            if pos < self.size and self.data[pos] == 0x22:
                try:
                    value, end = decode_string(self.data, pos)
                except ElementProblem:
                    self.fail(ELEMENT, pos)
                self.tokens.append(value)
                self.offsets.append(pos)
                return end
            self.fail(ELEMENT, pos)
        match = BARE.match(self.data, pos)
        if match is None or not lexically_valid(match.group(), self.job.datatype):
            self.fail(ELEMENT, pos)
        self.tokens.append(match.group())
        self.offsets.append(pos)
        return match.end()

    def ws(self, pos: int) -> int:
        data, size = self.data, self.size
        while pos < size and data[pos] in _WS:
            pos += 1
        return pos

    # -- results and errors -------------------------------------------------------------------

    def values(self) -> np.ndarray:
        """The collected tokens' values; raises the first value problem among them."""
        job = self.job
        if job.kind == K_BYTES:
            out = np.empty(len(self.tokens), dtype=object)
            out[:] = self.tokens
            return out
        try:
            values = convert(self.tokens, self.offsets, job.datatype)
        except ElementProblem as problem:
            index = self.offsets.index(problem.offset)
            raise DecodeError(problem.reason, index=index, offset=problem.offset) from None
        if job.kind == K_BF16_AS_FP32:
            return (values.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return values

    def finish(self) -> np.ndarray:
        flat = self.job.storage()
        flat[:] = self.values()
        return self.job.result(flat)

    def fail(self, code: int, pos: int) -> NoReturn:
        self.values()  # an earlier bad value comes first
        raise self.job.error(code, pos, len(self.tokens), list(self.counts), self.flat)
